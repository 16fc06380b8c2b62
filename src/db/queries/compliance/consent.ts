// Consent records shared by Contacts (history, opt-out flag), Compliance (overrides, reports, the gate) and
// inbound keywords: the append-only ConsentAuditLog (consent_events) and the per-phone opt-out state.
import type { Insertable, Selectable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { ConsentEventsTable } from '../../tables/compliance.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ConsentEventRow = Selectable<ConsentEventsTable>;

export function recordConsentEvent(db: TenantDb, event: Insertable<ConsentEventsTable>): Promise<ConsentEventRow> {
  return db.insertInto('consent_events').values(event).returningAll().executeTakeFirstOrThrow();
}

/**
 * The contact's consent history, newest first: its own entries plus those written for its phone before it
 * existed or without a contact (e.g. the opt-out of a deleted contact with the same number).
 */
export function contactConsentHistory(
  db: TenantDb,
  orgId: string,
  contact: { id: string; phone: string; created_at: Date },
  page: { limit: number; offset: number },
): Promise<Page<ConsentEventRow>> {
  const q = tenant(db.selectFrom('consent_events'), orgId).where((eb) =>
    eb.or([
      eb('contact_id', '=', contact.id),
      eb.and([eb('phone', '=', contact.phone), eb.or([eb('contact_id', 'is', null), eb('created_at', '<', contact.created_at)])]),
    ]),
  );
  return listPage(newestFirst(q.selectAll()), page);
}

export async function isOptedOut(db: TenantDb, orgId: string, phone: string): Promise<boolean> {
  const row = await tenant(db.selectFrom('opt_outs'), orgId).select('phone').where('phone', '=', phone).executeTakeFirst();
  return row !== undefined;
}

/** Phones among `phones` that are opted out (one query for a page of contacts). */
export async function optedOutAmong(db: TenantDb, orgId: string, phones: string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  const rows = await tenant(db.selectFrom('opt_outs'), orgId).select('phone').where('phone', 'in', phones).execute();
  return new Set(rows.map((r) => r.phone));
}

/** Marks the phone opted out; an earlier opt-out is kept as it is. */
export async function setOptedOut(
  db: TenantDb,
  orgId: string,
  phone: string,
  how: { source: string; keyword: string | null },
): Promise<void> {
  await db
    .insertInto('opt_outs')
    .values({ organization_id: orgId, phone, source: how.source, keyword: how.keyword, opted_out_at: new Date() })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .execute();
}

export async function clearOptOut(db: TenantDb, orgId: string, phone: string): Promise<void> {
  await tenant(db.deleteFrom('opt_outs'), orgId).where('phone', '=', phone).execute();
}
