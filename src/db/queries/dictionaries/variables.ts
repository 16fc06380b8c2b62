// SQL for variable definitions (capture tokens).
import { sql, type Selectable } from 'kysely';
import type { VariableDefinitionsTable, VariableType } from '../../tables/dictionaries.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type VariableRow = Selectable<VariableDefinitionsTable>;

/** Every variable definition of the organization, by name (the documented order; names are unique). */
export function listVariables(db: TenantDb, orgId: string): Promise<VariableRow[]> {
  return tenant(db.selectFrom('variable_definitions'), orgId).selectAll().orderBy('name').execute();
}

export function getVariable(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<VariableRow | undefined> {
  const q = tenant(db.selectFrom('variable_definitions'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function findVariableByName(db: TenantDb, orgId: string, name: string): Promise<{ id: string } | undefined> {
  return tenant(db.selectFrom('variable_definitions'), orgId).select('id').where('name', '=', name).executeTakeFirst();
}

const itemsJson = (items: readonly string[] | null) => (items === null ? null : JSON.stringify(items));

/** Inserts the definition; undefined when the organization already has one with this name. */
export function insertVariable(
  db: TenantDb,
  orgId: string,
  v: { name: string; type: VariableType; items: readonly string[] | null; categoryId: string | null },
): Promise<VariableRow | undefined> {
  return db
    .insertInto('variable_definitions')
    .values({ organization_id: orgId, name: v.name, type: v.type, items: itemsJson(v.items), category_id: v.categoryId })
    .onConflict((oc) => oc.columns(['organization_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function updateVariable(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { name?: string; type?: VariableType; items?: readonly string[] | null; categoryId?: string | null },
): Promise<VariableRow | undefined> {
  return tenant(db.updateTable('variable_definitions'), orgId)
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.type !== undefined ? { type: change.type } : {}),
      ...(change.items !== undefined ? { items: itemsJson(change.items) } : {}),
      ...(change.categoryId !== undefined ? { category_id: change.categoryId } : {}),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteVariable(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('variable_definitions'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}
