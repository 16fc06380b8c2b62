// SQL of delivery receipts. A carrier's batch may hold messages of several organizations: the message is found
// and locked by its id with the system handle; each change then names the message's organization.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant } from '../../tenant.ts';
import type { MessageRow } from './messages.ts';

/** Locks the message for the caller's transaction. */
export function lockMessage(db: Db, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** What a dispatcher that died after the provider accepted the message could not record: the receipt knows it. */
export type ProviderAcceptance = { provider: string; providerMessageId: string; at: Date; costUnits: number };

const acceptedFrom = (a: ProviderAcceptance) => ({
  provider: sql<string>`coalesce(provider, ${a.provider})`,
  provider_message_id: sql<string>`coalesce(provider_message_id, ${a.providerMessageId})`,
  sent_at: sql<Date>`coalesce(sent_at, ${a.at})`,
  cost_units: sql<number>`coalesce(cost_units, ${a.costUnits})`,
});

export function markDelivered(db: Db, orgId: string, id: string, r: ProviderAcceptance & { status: 'delivered' | 'read'; channel: string }): Promise<MessageRow> {
  return tenant(db.updateTable('messages'), orgId)
    .set({
      ...acceptedFrom(r),
      status: r.status,
      channel: r.channel,
      delivered_at: sql`coalesce(delivered_at, ${r.at})`,
      read_at: r.status === 'read' ? r.at : null,
      receipt_at: r.at,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Queues the message again on its SMS/MMS fallback after a failed RCS delivery (not billed until sent). */
export async function queueDeliveryFallback(db: Db, orgId: string, id: string, channel: string, reason: string, at: Date): Promise<void> {
  await tenant(db.updateTable('messages'), orgId)
    .set({ status: 'queued', planned_channel: channel, fallback_used: true, fallback_reason: reason, cost_units: null, receipt_at: at, dispatch_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute();
}

/** A final failed/undeliverable receipt; `billed` keeps the price (undeliverable), otherwise none. */
export function markUndelivered(
  db: Db,
  orgId: string,
  id: string,
  r: ProviderAcceptance & { status: 'failed' | 'undeliverable'; channel: string; errorCode: string; errorMessage: string | null; billed: boolean },
): Promise<MessageRow> {
  const accepted = acceptedFrom(r);
  return tenant(db.updateTable('messages'), orgId)
    .set({
      ...accepted,
      status: r.status,
      channel: r.channel,
      error_code: r.errorCode,
      error_message: r.errorMessage,
      failed_at: r.at,
      cost_units: r.billed ? accepted.cost_units : null,
      receipt_at: r.at,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
