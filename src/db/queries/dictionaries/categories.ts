// SQL for dictionary folders (dictionary_categories).
import { sql, type Selectable } from 'kysely';
import type { DictionaryCategoriesTable } from '../../tables/dictionaries.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type CategoryRow = Selectable<DictionaryCategoriesTable>;

/** Every folder of the organization, by sort_order then name (the documented order). */
export function listCategories(db: TenantDb, orgId: string): Promise<CategoryRow[]> {
  return tenant(db.selectFrom('dictionary_categories'), orgId).selectAll().orderBy('sort_order').orderBy('name').orderBy('id').execute();
}

/**
 * One folder of the organization. `lock: 'update'` holds it against every change until the transaction ends;
 * `lock: 'keyShare'` only against its deletion (an entry being filed in it), as the foreign key check would.
 */
export function getCategory(
  db: TenantDb,
  orgId: string,
  id: string,
  opts: { lock?: 'update' | 'keyShare' } = {},
): Promise<CategoryRow | undefined> {
  const q = tenant(db.selectFrom('dictionary_categories'), orgId).selectAll().where('id', '=', id);
  return (opts.lock === 'update' ? q.forUpdate() : opts.lock === 'keyShare' ? q.forKeyShare() : q).executeTakeFirst();
}

/** The folder with this name (compared case-insensitively; `name` is trimmed), other than `exceptId`. */
export function findCategoryByName(db: TenantDb, orgId: string, name: string, exceptId?: string): Promise<{ id: string } | undefined> {
  let q = tenant(db.selectFrom('dictionary_categories'), orgId)
    .select('id')
    .where(sql<boolean>`lower(name) = lower(${name})`);
  if (exceptId) q = q.where('id', '<>', exceptId);
  return q.executeTakeFirst();
}

/** One more than the highest sort_order, 0 for the first folder. */
export async function nextSortOrder(db: TenantDb, orgId: string): Promise<number> {
  const row = await tenant(db.selectFrom('dictionary_categories'), orgId)
    .select(sql<string | null>`max(sort_order)::bigint + 1`.as('next'))
    .executeTakeFirst();
  return Number(row?.next ?? 0);
}

/** Inserts the folder; undefined when the organization already has one with this name. */
export function insertCategory(db: TenantDb, orgId: string, c: { name: string; sortOrder: number }): Promise<CategoryRow | undefined> {
  return db
    .insertInto('dictionary_categories')
    .values({ organization_id: orgId, name: c.name, sort_order: c.sortOrder })
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function updateCategory(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { name?: string; sortOrder?: number },
): Promise<CategoryRow | undefined> {
  return tenant(db.updateTable('dictionary_categories'), orgId)
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.sortOrder !== undefined ? { sort_order: change.sortOrder } : {}),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The id of the deleted folder; undefined when the organization has no such folder. Unfile its entries first. */
export async function deleteCategory(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('dictionary_categories'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}

/** Sets every intent and variable definition filed in the folder to unfiled. */
export async function unfileCategory(db: TenantDb, orgId: string, id: string): Promise<void> {
  await tenant(db.updateTable('intents'), orgId)
    .set({ category_id: null, updated_at: sql`now()` })
    .where('category_id', '=', id)
    .execute();
  await tenant(db.updateTable('variable_definitions'), orgId)
    .set({ category_id: null, updated_at: sql`now()` })
    .where('category_id', '=', id)
    .execute();
}

/** Each listed folder of the organization gets sort_order = its index in `ids`; others (and unknown ids) are untouched. */
export async function reorderCategories(db: TenantDb, orgId: string, ids: readonly string[]): Promise<void> {
  await sql`
    update dictionary_categories c
    set sort_order = v.ord - 1, updated_at = now()
    from unnest(${[...ids]}::uuid[]) with ordinality as v(id, ord)
    where c.organization_id = ${orgId} and c.id = v.id and c.sort_order <> v.ord - 1`.execute(db);
}
