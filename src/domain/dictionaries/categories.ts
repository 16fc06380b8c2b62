// Dictionary folders: unique names per organization (trimmed, compared case-insensitively; 409 ALREADY_EXISTS),
// ordered by sort_order then name. Deleting a folder unfiles its entries in the same transaction.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/dictionaries/categories.ts';
import { lockDictionary } from '../../db/queries/dictionaries/shared.ts';
import { conflict, found, invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

/** Highest sortOrder a folder can have (the column is a 32-bit integer). */
const MAX_SORT_ORDER = 2_147_483_647;

function assertSortOrder(sortOrder: number | undefined): void {
  if (sortOrder !== undefined && sortOrder > MAX_SORT_ORDER) throw invalidField('body.sortOrder', `must be at most ${MAX_SORT_ORDER}`);
}

const taken = (name: string) => conflict('ALREADY_EXISTS', `The organization already has a dictionary folder named "${name}".`);

export function listCategories(tenant: Tenant): Promise<q.CategoryRow[]> {
  return q.listCategories(tenant.db, tenant.organizationId);
}

/** 409 for a name the organization has; without sortOrder the folder goes last. */
export function createCategory(tenant: Tenant, body: { name: string; sortOrder?: number }): Promise<q.CategoryRow> {
  const orgId = tenant.organizationId;
  const name = body.name.trim();
  assertSortOrder(body.sortOrder);
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'dictionary_categories', orgId);
    if (await q.findCategoryByName(tx, orgId, name)) throw taken(name);
    const sortOrder = body.sortOrder ?? Math.min(await q.nextSortOrder(tx, orgId), MAX_SORT_ORDER);
    const row = await q.insertCategory(tx, orgId, { name, sortOrder });
    if (!row) throw taken(name);
    return row;
  });
}

/** 404 unknown in the organization, 409 for a name another folder has. Other folders are not renumbered. */
export function updateCategory(tenant: Tenant, id: string, body: { name?: string; sortOrder?: number }): Promise<q.CategoryRow> {
  const orgId = tenant.organizationId;
  const name = body.name?.trim();
  assertSortOrder(body.sortOrder);
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'dictionary_categories', orgId);
    found(await q.getCategory(tx, orgId, id, { lock: 'update' }), 'Dictionary category');
    if (name !== undefined && (await q.findCategoryByName(tx, orgId, name, id))) throw taken(name);
    return found(await q.updateCategory(tx, orgId, id, { name, sortOrder: body.sortOrder }), 'Dictionary category');
  });
}

/** 404 unknown in the organization; the folder's intents and variable definitions become unfiled. Answers its id. */
export function deleteCategory(tenant: Tenant, id: string): Promise<string> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    found(await q.getCategory(tx, orgId, id, { lock: 'update' }), 'Dictionary category');
    await q.unfileCategory(tx, orgId, id);
    return found(await q.deleteCategory(tx, orgId, id), 'Dictionary category');
  });
}

/** Listed folders get sortOrder = their index; unknown ids are skipped; duplicates are a 400. Answers every folder. */
export function reorderCategories(tenant: Tenant, body: { ids: readonly string[] }): Promise<q.CategoryRow[]> {
  const ids = body.ids.map((id) => id.toLowerCase());
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0) throw invalidField(`body.ids.${dup}`, 'duplicate folder id');
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    await lockDictionary(tx, 'dictionary_categories', orgId);
    await q.reorderCategories(tx, orgId, ids);
    return q.listCategories(tx, orgId);
  });
}
