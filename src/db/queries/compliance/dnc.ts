// SQL for the Do-Not-Contact list. One entry per (organization, phone): inserts never replace an entry.
import { sql, type Selectable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { DncEntriesTable } from '../../tables/compliance.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type DncEntryRow = Selectable<DncEntriesTable>;

/** Newest first; `search` is a substring of the E.164 phone (digits and an optional leading `+`). */
export function listDncEntries(
  db: TenantDb,
  orgId: string,
  page: { limit: number; offset: number },
  search?: string,
): Promise<Page<DncEntryRow>> {
  let q = tenant(db.selectFrom('dnc_entries'), orgId);
  // The document restricts `search` to `+` and digits, so it holds no LIKE wildcards.
  if (search) q = q.where('phone', 'like', `%${search}%`);
  return listPage(newestFirst(q.selectAll()), page);
}

export function findDncEntryByPhone(db: TenantDb, orgId: string, phone: string): Promise<DncEntryRow | undefined> {
  return tenant(db.selectFrom('dnc_entries'), orgId).selectAll().where('phone', '=', phone).executeTakeFirst();
}

/** Inserts the entry; undefined when the phone is already listed (the entry is left as it is). */
export function insertDncEntry(
  db: TenantDb,
  orgId: string,
  entry: { phone: string; reason: string | null; source: string; actor: string | null },
): Promise<DncEntryRow | undefined> {
  return db
    .insertInto('dnc_entries')
    .values({ organization_id: orgId, phone: entry.phone, reason: entry.reason, source: entry.source, actor: entry.actor })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Inserts many distinct phones in one statement (UNNEST); answers the entries it created (listed phones are skipped). */
export async function insertDncEntries(
  db: TenantDb,
  orgId: string,
  phones: string[],
  how: { reason: string | null; source: string; actor: string | null },
): Promise<Array<{ id: string; phone: string }>> {
  if (phones.length === 0) return [];
  const inserted = await sql<{ id: string; phone: string }>`
    insert into dnc_entries (organization_id, phone, reason, source, actor)
    select ${orgId}::uuid, p, ${how.reason}, ${how.source}, ${how.actor}::uuid from unnest(${phones}::text[]) as p
    on conflict (organization_id, phone) do nothing
    returning id, phone`.execute(db);
  return inserted.rows;
}

/** Ids of the entries of `phones` that are listed. */
export async function dncEntryIds(db: TenantDb, orgId: string, phones: string[]): Promise<Array<{ id: string; phone: string }>> {
  if (phones.length === 0) return [];
  return tenant(db.selectFrom('dnc_entries'), orgId)
    .select(['id', 'phone'])
    .where('phone', '=', sql<string>`any(${phones}::text[])`)
    .execute();
}

/** The id of the deleted entry; undefined when the organization has no such entry. */
export async function deleteDncEntry(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('dnc_entries'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}
