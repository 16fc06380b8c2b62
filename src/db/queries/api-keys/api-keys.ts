// SQL for the API Keys section and for authentication. Tenant-scoped: every query names organization_id.
import { sql } from 'kysely';
import { inTransaction, type Db } from '../../database.ts';
import type { ApiKeyRow } from '../../schema.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { API_KEYS_CHANNEL } from '../../../auth/key-cache.ts';
import { newestFirst, pageFromRows, pageQuery, type Page } from '../../paging.ts';
import { compiledOnce } from '../../compiled-once.ts';

// System handle: authentication looks the key up before its organization is known.
export function findApiKeyByPrefix(db: Db, prefix: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst();
}

/**
 * Compiled once (src/db/compiled-once.ts) and a named prepared statement (src/db/prepared.ts): every authenticated client lists its keys
 * (the read of bench part b); built, checked by the tenant guard and planned once, not on every request.
 */
const listStatement = compiledOnce('api-keys-list', (db, p: { organizationId: string; limit: number; offset: number }) =>
  pageQuery(
    newestFirst(tenant(db.selectFrom('api_keys'), p.organizationId).modifyFront(sql.raw('/* prepared:api-keys-list */')).selectAll()),
    p,
  ),
);

export async function listApiKeys(db: TenantDb, orgId: string, page: { limit: number; offset: number }): Promise<Page<ApiKeyRow>> {
  const rows = await listStatement.execute(db, { organizationId: orgId, limit: page.limit, offset: page.offset });
  return pageFromRows(rows, page, async () =>
    Number(
      (
        await tenant(db.selectFrom('api_keys'), orgId)
          .select(sql<string>`count(*)`.as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  );
}

// System handle: the admin CLI (a platform admin, no organization key) creates an organization's first key; the row names its organization.
/** Inserts a key; at commit every API process forgets that its prefix was unknown (see key-cache.ts). */
export function insertApiKey(
  db: Db,
  key: { organizationId: string; name: string; prefix: string; hash: Buffer; scopes: string[]; expiresAt: Date | null },
): Promise<ApiKeyRow> {
  return inTransaction(db, async (tx) => {
    const row = await tx
      .insertInto('api_keys')
      .values({
        organization_id: key.organizationId,
        name: key.name,
        prefix: key.prefix,
        secret_hash: key.hash,
        scopes: key.scopes,
        expires_at: key.expiresAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await notifyPrefixAdded(tx, row.prefix);
    return row;
  });
}

/** One key of the organization; `forUpdate` locks it until the surrounding transaction ends. */
export function getApiKey(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<ApiKeyRow | undefined> {
  const q = tenant(db.selectFrom('api_keys'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** Tells every API process to drop its cached copy of the key when the surrounding transaction commits. */
async function notifyKeyChanged(db: Db, id: string): Promise<void> {
  await sql`select pg_notify(${API_KEYS_CHANNEL}, ${id})`.execute(db);
}

/** Tells every API process, at commit, that a key now has this prefix (drops a cached "no such prefix"). */
async function notifyPrefixAdded(db: Db, prefix: string): Promise<void> {
  await sql`select pg_notify(${API_KEYS_CHANNEL}, ${prefix})`.execute(db);
}

/** Revokes once; a second revoke leaves revoked_at unchanged. */
export function revokeApiKey(db: TenantDb, orgId: string, id: string): Promise<ApiKeyRow | undefined> {
  return inTransaction(db, async (tx) => {
    const row = await tenant(tx.updateTable('api_keys'), orgId)
      .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.fn<Date>('now')) }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (row) await notifyKeyChanged(tx, row.id);
    return row;
  });
}

/** Swaps prefix and hash in one statement, so the old secret stops matching at commit. */
export function rotateApiKey(
  db: TenantDb,
  orgId: string,
  id: string,
  next: { prefix: string; hash: Buffer },
): Promise<ApiKeyRow | undefined> {
  return inTransaction(db, async (tx) => {
    const row = await tenant(tx.updateTable('api_keys'), orgId)
      .set({ prefix: next.prefix, secret_hash: next.hash })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', eb.fn<Date>('now'))]))
      .returningAll()
      .executeTakeFirst();
    if (row) {
      await notifyKeyChanged(tx, row.id);
      await notifyPrefixAdded(tx, row.prefix);
    }
    return row;
  });
}

// System handle: authentication marks the key used, by its id, before a tenant handle exists.
/** Records use at most once a minute per key, so authentication does not write on every request. */
export async function touchApiKey(db: Db, id: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where(sql<boolean>`(last_used_at is null or last_used_at < now() - interval '60 seconds')`)
    .execute();
}
