// Delivery and read receipts from the provider. Statuses only move forward (sent → delivered → read);
// failed, undeliverable and revoked are final. A failed RCS delivery with fallback allowed is sent again as
// SMS/MMS (fallback reason RCS_DELIVERY_FAILED): the receipt, not the send response, says which channel
// carried the message. Each change becomes a webhook event.
//
// A carrier's batch may hold messages of several organizations: it is applied with the system handle.
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import { inTransaction, type Tx } from '../../db/database.ts';
import * as q from '../../db/queries/conversations/receipts.ts';
import type { ProviderCallback, ProviderName } from '../../providers/provider.ts';
import { emitEvents, type NewEvent } from '../webhooks/events.ts';
import { queueOf } from './context.ts';
import { DISPATCH_QUEUE } from './dispatch.ts';
import { messageEvent } from './message-events.ts';
import { fallbackChannelFor, render, type SendContent } from './render.ts';

export type Receipt = Extract<ProviderCallback, { type: 'receipt' }>;

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
    await emitEvents(tx, queueOf(app), events);
  });
}

/** Applies one receipt; answers the event it raises (the caller emits it), if any. */
async function applyReceipt(app: AppContext, provider: ProviderName, receipt: Receipt, tx: Tx): Promise<NewEvent | undefined> {
  const message = await q.lockMessage(tx, messageIdOf(receipt));
  if (!message || message.direction !== 'outbound' || FINAL.has(message.status)) return undefined;
  const orgId = message.organization_id;
  const sender = { id: message.sender_id };
  const at = new Date(receipt.at);
  const accepted = {
    provider,
    providerMessageId: receipt.providerMessageId,
    at,
    costUnits: render(receipt.channel, message.content as unknown as SendContent).costUnits,
  };

  if (receipt.status === 'delivered' || receipt.status === 'read') {
    if ((RANK[receipt.status] ?? 0) <= (RANK[message.status] ?? 0)) return undefined;
    const updated = await q.markDelivered(tx, orgId, message.id, { ...accepted, status: receipt.status, channel: receipt.channel });
    return messageEvent(receipt.status === 'read' ? 'message.read' : 'message.delivered', updated, sender);
  }

  const rcsFailed = receipt.status === 'failed' && receipt.channel === 'RCS';
  if (rcsFailed && message.fallback_allowed && !message.fallback_used) {
    await q.queueDeliveryFallback(tx, orgId, message.id, fallbackChannelFor(message.content as unknown as SendContent), 'RCS_DELIVERY_FAILED', at);
    await queueOf(app).send(DISPATCH_QUEUE, { messageId: message.id }, { db: fromKysely(tx) });
    return undefined;
  }

  const updated = await q.markUndelivered(tx, orgId, message.id, {
    ...accepted,
    status: receipt.status,
    channel: receipt.channel,
    errorCode: receipt.errorCode ?? (receipt.status === 'undeliverable' ? 'UNREACHABLE' : 'CARRIER_REJECTED'),
    errorMessage: receipt.errorMessage ?? null,
    // An undeliverable message reached the carrier's network and is billed; a failed one is not.
    billed: receipt.status === 'undeliverable',
  });
  return messageEvent('message.failed', updated, sender);
}
