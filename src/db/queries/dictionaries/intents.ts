// SQL for intents (postback tokens).
import { sql, type Selectable } from 'kysely';
import type { IntentsTable } from '../../tables/dictionaries.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type IntentRow = Selectable<IntentsTable>;

/** Every intent of the organization, by value (the documented order; values are unique). */
export function listIntents(db: TenantDb, orgId: string): Promise<IntentRow[]> {
  return tenant(db.selectFrom('intents'), orgId).selectAll().orderBy('value').execute();
}

export function getIntent(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<IntentRow | undefined> {
  const q = tenant(db.selectFrom('intents'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function findIntentByValue(db: TenantDb, orgId: string, value: string): Promise<{ id: string } | undefined> {
  return tenant(db.selectFrom('intents'), orgId).select('id').where('value', '=', value).executeTakeFirst();
}

/** Inserts the intent; undefined when the organization already has one with this value. */
export function insertIntent(
  db: TenantDb,
  orgId: string,
  i: { value: string; label: string; description: string | null; categoryId: string | null; active: boolean },
): Promise<IntentRow | undefined> {
  return db
    .insertInto('intents')
    .values({
      organization_id: orgId,
      value: i.value,
      label: i.label,
      description: i.description,
      category_id: i.categoryId,
      active: i.active,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'value']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function updateIntent(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { value?: string; label?: string; description?: string | null; categoryId?: string | null; active?: boolean },
): Promise<IntentRow | undefined> {
  return tenant(db.updateTable('intents'), orgId)
    .set({
      ...(change.value !== undefined ? { value: change.value } : {}),
      ...(change.label !== undefined ? { label: change.label } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.categoryId !== undefined ? { category_id: change.categoryId } : {}),
      ...(change.active !== undefined ? { active: change.active } : {}),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteIntent(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('intents'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}
