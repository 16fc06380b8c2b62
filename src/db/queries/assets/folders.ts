// SQL for asset folders. Tree rules (depth, cycles, the per-organization cap) are the domain's
// (src/domain/assets/folders.ts); here: rows, and the lock that serializes changes to one organization's tree.
import { sql, type Selectable } from 'kysely';
import type { AssetFoldersTable } from '../../tables/assets.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type AssetFolderRow = Selectable<AssetFoldersTable>;

/** Serializes changes to the organization's folder tree for the rest of the transaction. */
export async function lockFolderTree(db: TenantDb, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`asset_folders:${orgId}`}, 0))`.execute(db);
}

export function getFolder(db: TenantDb, orgId: string, id: string): Promise<AssetFolderRow | undefined> {
  return tenant(db.selectFrom('asset_folders'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether the folder exists, locked against deletion until the transaction ends. */
export async function folderExists(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.selectFrom('asset_folders'), orgId).select('id').where('id', '=', id).forKeyShare().executeTakeFirst();
  return row !== undefined;
}

/** The whole tree as (id, parent) pairs: at most 1,000 rows per organization. */
export function folderLinks(db: TenantDb, orgId: string): Promise<Array<{ id: string; parent_id: string | null }>> {
  return tenant(db.selectFrom('asset_folders'), orgId).select(['id', 'parent_id']).execute();
}

export function listFolders(
  db: TenantDb,
  orgId: string,
  parent: { kind: 'any' } | { kind: 'root' } | { kind: 'folder'; id: string },
): Promise<AssetFolderRow[]> {
  let qb = tenant(db.selectFrom('asset_folders'), orgId).selectAll();
  if (parent.kind === 'root') qb = qb.where('parent_id', 'is', null);
  if (parent.kind === 'folder') qb = qb.where('parent_id', '=', parent.id);
  return qb.orderBy('name').orderBy('id').execute();
}

export function siblingNamed(db: TenantDb, orgId: string, parentId: string | null, name: string): Promise<{ id: string } | undefined> {
  const qb = tenant(db.selectFrom('asset_folders'), orgId).select('id').where('name', '=', name);
  return (parentId === null ? qb.where('parent_id', 'is', null) : qb.where('parent_id', '=', parentId)).executeTakeFirst();
}

export function insertFolder(db: TenantDb, orgId: string, name: string, parentId: string | null): Promise<AssetFolderRow> {
  return db
    .insertInto('asset_folders')
    .values({ organization_id: orgId, name, parent_id: parentId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateFolder(
  db: TenantDb,
  orgId: string,
  id: string,
  patch: { name?: string; parent_id?: string | null },
): Promise<AssetFolderRow | undefined> {
  return tenant(db.updateTable('asset_folders'), orgId)
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function hasSubfolders(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.selectFrom('asset_folders'), orgId).select('id').where('parent_id', '=', id).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Unfiles the folder's assets and deletes it; false when there was no such folder. */
export async function deleteFolder(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  await tenant(db.updateTable('assets'), orgId)
    .set({ folder_id: null, updated_at: sql<Date>`now()` })
    .where('folder_id', '=', id)
    .execute();
  const res = await tenant(db.deleteFrom('asset_folders'), orgId).where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}
