// SQL for the Do-Not-Contact list. One entry per (organization, phone); adds are idempotent.
import { sql, type Selectable } from 'kysely';
import { inTransaction, type Db } from '../database.ts';
import type { DncEntriesTable } from '../tables/compliance.ts';
import { tenant } from '../tenant.ts';
import { newestFirstPage } from '../paging.ts';

export type DncEntryRow = Selectable<DncEntriesTable>;

/** Newest first; `search` is a substring of the E.164 phone (digits and an optional leading `+`). */
export async function listDncEntries(db: Db, orgId: string, page: { limit: number; offset: number }, search?: string) {
  let q = tenant(db.selectFrom('dnc_entries'), orgId);
  // The document restricts `search` to `+` and digits, so it holds no LIKE wildcards.
  if (search) q = q.where('phone', 'like', `%${search}%`);
  return newestFirstPage(q.selectAll(), page).execute();
}

export async function countDncEntries(db: Db, orgId: string, search?: string): Promise<number> {
  let q = tenant(db.selectFrom('dnc_entries'), orgId);
  if (search) q = q.where('phone', 'like', `%${search}%`);
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

export async function findDncEntryByPhone(db: Db, orgId: string, phone: string): Promise<DncEntryRow | undefined> {
  return tenant(db.selectFrom('dnc_entries'), orgId).selectAll().where('phone', '=', phone).executeTakeFirst();
}

/** Adds the phone unless listed; answers the entry and whether this call created it. */
export async function addDncEntry(
  db: Db,
  orgId: string,
  entry: { phone: string; reason: string | null; actor: string },
): Promise<{ row: DncEntryRow; created: boolean }> {
  const inserted = await db
    .insertInto('dnc_entries')
    .values({ organization_id: orgId, phone: entry.phone, reason: entry.reason, source: 'API', actor: entry.actor })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await findDncEntryByPhone(db, orgId, entry.phone);
  if (!existing) throw new Error('DNC entry vanished between insert and read');
  return { row: existing, created: false };
}

/**
 * Adds many distinct phones in one statement (UNNEST); answers the id of every phone's entry and which of them
 * this call created.
 */
export function addDncEntries(
  db: Db,
  orgId: string,
  phones: string[],
  how: { reason: string | null; actor: string },
): Promise<{ ids: Map<string, string>; added: Set<string> }> {
  return inTransaction(db, async (tx) => {
    const ids = new Map<string, string>();
    const added = new Set<string>();
    if (phones.length === 0) return { ids, added };
    const inserted = await sql<{ id: string; phone: string }>`
      insert into dnc_entries (organization_id, phone, reason, source, actor)
      select ${orgId}::uuid, p, ${how.reason}, 'BATCH', ${how.actor}::uuid from unnest(${phones}::text[]) as p
      on conflict (organization_id, phone) do nothing
      returning id, phone`.execute(tx);
    for (const r of inserted.rows) {
      ids.set(r.phone, r.id);
      added.add(r.phone);
    }
    const rest = phones.filter((p) => !added.has(p));
    if (rest.length) {
      const existing = await tenant(tx.selectFrom('dnc_entries'), orgId)
        .select(['id', 'phone'])
        .where('phone', '=', sql<string>`any(${rest}::text[])`)
        .execute();
      for (const r of existing) ids.set(r.phone, r.id);
    }
    return { ids, added };
  });
}

export async function deleteDncEntry(db: Db, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('dnc_entries'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}
