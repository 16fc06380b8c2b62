// Delivery and read receipts from the provider. Statuses only move forward (sent → delivered → read);
// failed, undeliverable and revoked are final. A failed RCS delivery with fallback allowed is sent again as
// SMS/MMS (fallback reason RCS_DELIVERY_FAILED): the receipt, not the send response, says which channel
// carried the message. Each change becomes a webhook event.
import { sql } from 'kysely';
import { fromKysely } from 'pg-boss';
import { inTransaction, type Tx } from '../../db/database.ts';
import type { AppContext } from '../../app-context.ts';
import type { ProviderCallback, ProviderName } from '../../providers/provider.ts';
import { emitEvents, type NewEvent } from '../webhooks/events.ts';
import { DISPATCH_QUEUE } from './dispatch.ts';
import { messageEvent } from './events.ts';
import { fallbackChannelFor, render, type SendContent } from './render.ts';

type Receipt = Extract<ProviderCallback, { type: 'receipt' }>;

const RANK: Record<string, number> = { queued: 0, held: 0, sending: 1, sent: 2, delivered: 3, read: 4 };
const FINAL = new Set(['failed', 'undeliverable', 'revoked']);

const messageIdOf = (r: Receipt) => r.dedupeKey.split(':')[0]!;

/**
 * A carrier's batch of receipts, applied in one transaction. Rows are locked in message-id order (a stable
 * sort keeps each message's receipts in the order sent), so concurrent batches cannot deadlock; a retried
 * batch changes nothing twice because statuses only move forward.
 */
export async function applyReceipts(app: AppContext, provider: ProviderName, receipts: Receipt[]): Promise<void> {
  const ordered = receipts.map((r, i) => ({ r, i })).sort((a, b) => messageIdOf(a.r).localeCompare(messageIdOf(b.r)) || a.i - b.i);
  await inTransaction(app.db, async (tx) => {
    const events: NewEvent[] = [];
    for (const { r } of ordered) {
      const event = await applyReceipt(app, provider, r, tx);
      if (event) events.push(event);
    }
    await emitEvents(tx, app.queue!, events);
  });
}

/** Applies one receipt; answers the event it raises (the caller emits it), if any. */
async function applyReceipt(app: AppContext, provider: ProviderName, receipt: Receipt, tx: Tx): Promise<NewEvent | undefined> {
  const messageId = messageIdOf(receipt);
  const message = await tx.selectFrom('messages').selectAll().where('id', '=', messageId).forUpdate().executeTakeFirst();
  if (!message || message.direction !== 'outbound' || FINAL.has(message.status)) return undefined;
  const sender = { id: message.sender_id };
  const at = new Date(receipt.at);
  // What a dispatcher that died after the provider accepted the message could not record: the receipt knows it.
  const accepted = {
    provider: sql<string>`coalesce(provider, ${provider})`,
    provider_message_id: sql<string>`coalesce(provider_message_id, ${receipt.providerMessageId})`,
    sent_at: sql<Date>`coalesce(sent_at, ${at})`,
    cost_units: sql<number>`coalesce(cost_units, ${render(receipt.channel, message.content as unknown as SendContent).costUnits})`,
  };

  if (receipt.status === 'delivered' || receipt.status === 'read') {
    if ((RANK[receipt.status] ?? 0) <= (RANK[message.status] ?? 0)) return undefined;
    const updated = await tx
      .updateTable('messages')
      .set({
        ...accepted,
        status: receipt.status,
        channel: receipt.channel,
        delivered_at: sql`coalesce(delivered_at, ${at})`,
        read_at: receipt.status === 'read' ? at : null,
        receipt_at: at,
        updated_at: sql`now()`,
      })
      .where('id', '=', message.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return messageEvent(receipt.status === 'read' ? 'message.read' : 'message.delivered', updated, sender);
  }

  const rcsFailed = receipt.status === 'failed' && receipt.channel === 'RCS';
  if (rcsFailed && message.fallback_allowed && !message.fallback_used) {
    const fallback = fallbackChannelFor(message.content as unknown as SendContent);
    await tx
      .updateTable('messages')
      .set({ status: 'queued', planned_channel: fallback, fallback_used: true, fallback_reason: 'RCS_DELIVERY_FAILED', cost_units: null, receipt_at: at, updated_at: sql`now()` })
      .where('id', '=', message.id)
      .execute();
    await app.queue!.send(DISPATCH_QUEUE, { messageId: message.id }, { db: fromKysely(tx) });
    return undefined;
  }

  const updated = await tx
    .updateTable('messages')
    .set({
      ...accepted,
      status: receipt.status,
      channel: receipt.channel,
      error_code: receipt.errorCode ?? (receipt.status === 'undeliverable' ? 'UNREACHABLE' : 'CARRIER_REJECTED'),
      error_message: receipt.errorMessage ?? null,
      failed_at: at,
      cost_units: receipt.status === 'undeliverable' ? accepted.cost_units : null,
      receipt_at: at,
      updated_at: sql`now()`,
    })
    .where('id', '=', message.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return messageEvent('message.failed', updated, sender);
}
