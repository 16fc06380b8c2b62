// SQL for sender numbers (the Sender IDs section, numbers): the leases in sender_numbers, and the sender
// updates a purchase, import or release makes. Tenant-scoped through tenant().
import type { Insertable, Selectable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { SenderNumbersTable } from '../../tables/sender-numbers.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { SenderRow } from './senders.ts';
import type { SenderIdProvider } from '../../tables/enums.ts';

export type NumberRow = Selectable<SenderNumbersTable>;
export type NewNumber = Omit<Insertable<SenderNumbersTable>, 'organization_id'>;

/**
 * Records a lease unless the number is already held (not RELEASED) by any organization: undefined then. The
 * partial unique index on live numbers is the conflict target, so racing requests cannot both hold it.
 */
export function insertNumber(db: TenantDb, organizationId: string, row: NewNumber): Promise<NumberRow | undefined> {
  return db
    .insertInto('sender_numbers')
    .values({ ...row, organization_id: organizationId })
    .onConflict((oc) => oc.column('number').where('status', '<>', 'RELEASED').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function getNumber(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<NumberRow | undefined> {
  const q = tenant(db.selectFrom('sender_numbers'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** The live (not RELEASED) lease backing a sender, if any. */
export function liveNumberOfSender(db: TenantDb, organizationId: string, senderId: string): Promise<NumberRow | undefined> {
  return tenant(db.selectFrom('sender_numbers'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('status', '<>', 'RELEASED')
    .executeTakeFirst();
}

export function setNumberSender(db: TenantDb, organizationId: string, id: string, senderId: string): Promise<NumberRow> {
  return tenant(db.updateTable('sender_numbers'), organizationId)
    .set({ sender_id: senderId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function releaseNumber(db: TenantDb, organizationId: string, id: string, at: Date): Promise<NumberRow> {
  return tenant(db.updateTable('sender_numbers'), organizationId)
    .set({ status: 'RELEASED', released_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listNumbers(
  db: TenantDb,
  organizationId: string,
  filter: { provider?: SenderIdProvider | undefined },
  page: { limit: number; offset: number },
): Promise<Page<NumberRow>> {
  let q = tenant(db.selectFrom('sender_numbers'), organizationId).selectAll();
  if (filter.provider) q = q.where('provider', '=', filter.provider);
  return listPage(newestFirst(q), page);
}

/**
 * A draft (or a sender just created) takes its number: PENDING, not send-ready, with the number, provider,
 * country and lease (the columns of migration 0011 the sender's own answers read).
 */
export function attachNumberToSender(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  change: { phoneNumber: string; provider: SenderIdProvider; countryCode: string; numberId: string; statusReason: string },
  at: Date,
): Promise<SenderRow> {
  return tenant(db.updateTable('sender_ids'), organizationId)
    .set({
      status: 'PENDING',
      send_ready: false,
      phone_number: change.phoneNumber,
      provider: change.provider,
      country_code: change.countryCode,
      number_id: change.numberId,
      status_reason: change.statusReason,
      updated_at: at,
    })
    .where('id', '=', senderId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The sender of a released number: DEACTIVATED. The number moves from `phone_number` (unique, routes inbound
 * traffic) to `address` (what the sender's answer shows, kept for history), so inbound traffic to it no longer
 * reaches this organization and the number can be held again later.
 */
export function deactivateSenderOfNumber(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  number: string,
  at: Date,
): Promise<SenderRow | undefined> {
  return tenant(db.updateTable('sender_ids'), organizationId)
    .set({
      status: 'DEACTIVATED',
      send_ready: false,
      phone_number: null,
      address: number,
      status_reason: 'Its number was released.',
      suspended_by: null,
      suspended_at: null,
      deactivated_at: at,
      updated_at: at,
    })
    .where('id', '=', senderId)
    .returningAll()
    .executeTakeFirst();
}

// ── Submissions and programs (campaign registration) ─────────────────────────────────────────────────────────
/**
 * A campaign reached REGISTERED: the live PENDING leases of its sender start billing (status ACTIVE,
 * `billing_started_at`). Leases already billing, released or needing reconciliation are left alone.
 */
export function startBillingOfSenderNumbers(db: TenantDb, organizationId: string, senderId: string, at: Date): Promise<NumberRow[]> {
  return tenant(db.updateTable('sender_numbers'), organizationId)
    .set({ status: 'ACTIVE', billing_started_at: at })
    .where('sender_id', '=', senderId)
    .where('status', '=', 'PENDING')
    .where('billing_started_at', 'is', null)
    .returningAll()
    .execute();
}
// ── end Submissions and programs ─────────────────────────────────────────────────────────────────────────────
