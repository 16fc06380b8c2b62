// SQL for assets: metadata rows (the bytes are in the object store). Lists take the filters and the order of
// the document (name, size_bytes or created_at, either direction; id breaks ties).
import { sql, type Insertable, type Selectable } from 'kysely';
import { listPage, type Page } from '../../paging.ts';
import type { AssetKind, AssetsTable, AssetState, StoredVariant } from '../../tables/assets.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type AssetRow = Selectable<AssetsTable>;
export type NewAsset = Omit<Insertable<AssetsTable>, 'organization_id'>;

export type AssetListFilter = {
  folder: { kind: 'any' } | { kind: 'unfiled' } | { kind: 'folder'; id: string };
  type: AssetKind | undefined;
  search: string | undefined;
  includeErrors: boolean;
  sort: 'name' | 'size_bytes' | 'created_at';
  order: 'asc' | 'desc';
};

export function insertAsset(db: TenantDb, orgId: string, asset: NewAsset): Promise<AssetRow> {
  return db
    .insertInto('assets')
    .values({ ...asset, organization_id: orgId, variants: JSON.stringify(asset.variants ?? []) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function getAsset(db: TenantDb, orgId: string, id: string): Promise<AssetRow | undefined> {
  return tenant(db.selectFrom('assets'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** The organization's assets among `ids` (another organization's ids are simply absent). */
export function getAssetsByIds(db: TenantDb, orgId: string, ids: readonly string[]): Promise<AssetRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return tenant(db.selectFrom('assets'), orgId)
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export function listAssets(
  db: TenantDb,
  orgId: string,
  f: AssetListFilter,
  page: { limit: number; offset: number },
): Promise<Page<AssetRow>> {
  let qb = tenant(db.selectFrom('assets'), orgId).selectAll();
  if (f.folder.kind === 'unfiled') qb = qb.where('folder_id', 'is', null);
  if (f.folder.kind === 'folder') qb = qb.where('folder_id', '=', f.folder.id);
  if (f.type) qb = qb.where('type', '=', f.type);
  if (f.search) qb = qb.where('name', 'ilike', `%${likeEscape(f.search)}%`);
  if (!f.includeErrors) qb = qb.where('status', '<>', 'error');
  const key = f.sort === 'name' ? sql`lower(name)` : sql.ref(f.sort);
  qb = qb.orderBy(key, f.order);
  if (f.sort === 'name') qb = qb.orderBy('name', f.order);
  return listPage(qb.orderBy('id', f.order), page);
}

export function updateAsset(
  db: TenantDb,
  orgId: string,
  id: string,
  patch: { name?: string; folder_id?: string | null },
): Promise<AssetRow | undefined> {
  return tenant(db.updateTable('assets'), orgId)
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Records the outcome of processing; undefined when the asset was deleted meanwhile. */
export function finishProcessing(
  db: TenantDb,
  orgId: string,
  id: string,
  outcome: { status: AssetState; error: string | null; variants: StoredVariant[] },
): Promise<AssetRow | undefined> {
  return tenant(db.updateTable('assets'), orgId)
    .set({ status: outcome.status, error: outcome.error, variants: JSON.stringify(outcome.variants), updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export function deleteAsset(db: TenantDb, orgId: string, id: string): Promise<AssetRow | undefined> {
  return tenant(db.deleteFrom('assets'), orgId).where('id', '=', id).returningAll().executeTakeFirst();
}
