// Delivery and read receipts from the provider. Statuses only move forward (sent → delivered → read);
// failed, undeliverable and revoked are final. A failed RCS delivery with fallback allowed is sent again as
// SMS/MMS (fallback reason RCS_DELIVERY_FAILED): the receipt, not the send response, says which channel
// carried the message. When another sender carries the fallback (an RCS agent's fallback sender, recorded at
// acceptance), the queued fallback moves to that sender as dispatch claims it (dispatch.ts resolveChannels), so the
// retry leaves from its number and the message's `senderId` says so. Each change becomes a webhook event.
//
// A carrier's batch may hold messages of several organizations: it is applied with the system handle.
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import { inTransaction } from '../../db/database.ts';
import type { MessageRow } from '../../db/queries/messages/messages.ts';
import * as q from '../../db/queries/messages/receipts.ts';
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
 * A carrier's batch of receipts, applied in one transaction and a few statements: the messages are locked together
 * in id order (concurrent batches cannot deadlock), each receipt is applied in the batch's order (a stable sort keeps
 * each message's receipts in the order sent) to the message as the previous ones left it, and the final states are
 * written in one statement; each change's event is emitted with them. A retried batch changes nothing twice
 * because statuses only move forward.
 */
export async function applyReceipts(app: AppContext, provider: ProviderName, receipts: Receipt[]): Promise<void> {
  const ordered = receipts.map((r, i) => ({ r, i })).sort((a, b) => messageIdOf(a.r).localeCompare(messageIdOf(b.r)) || a.i - b.i);
  await inTransaction(app.db, async (tx) => {
    const messages = new Map(
      (
        await q.lockMessages(
          tx,
          ordered.map(({ r }) => messageIdOf(r)),
        )
      ).map((m) => [m.id, m]),
    );
    const changed = new Map<string, q.ReceiptState>();
    const events: NewEvent[] = [];
    for (const { r } of ordered) {
      const message = messages.get(messageIdOf(r));
      if (!message) continue;
      const outcome = applyReceipt(provider, r, message);
      if (!outcome) continue;
      messages.set(message.id, outcome.row);
      const requeue = outcome.requeue || (changed.get(message.id)?.requeue ?? false);
      changed.set(message.id, { ...stateOf(outcome.row), requeue });
      if (outcome.event) events.push(outcome.event);
    }
    await q.writeReceiptStates(tx, [...changed.values()]);
    for (const state of changed.values()) {
      if (state.requeue) await queueOf(app).send(DISPATCH_QUEUE, { messageId: state.id }, { db: fromKysely(tx) });
    }
    await emitEvents(tx, queueOf(app), events);
  });
}

const stateOf = (m: MessageRow): Omit<q.ReceiptState, 'requeue'> => ({
  id: m.id,
  status: m.status,
  channel: m.channel,
  planned_channel: m.planned_channel,
  provider: m.provider,
  provider_message_id: m.provider_message_id,
  sent_at: m.sent_at,
  cost_units: m.cost_units,
  delivered_at: m.delivered_at,
  read_at: m.read_at,
  failed_at: m.failed_at,
  error_code: m.error_code,
  error_message: m.error_message,
  receipt_at: m.receipt_at,
  fallback_used: m.fallback_used,
  fallback_reason: m.fallback_reason,
});

/**
 * One receipt applied to the message as it stands: the message after it, the event it raises, and whether it is
 * queued again (its SMS/MMS fallback); undefined when it changes nothing. What a dispatcher that died after the
 * provider accepted the message could not record (provider, its id, sent time, price) the receipt fills in.
 */
function applyReceipt(
  provider: ProviderName,
  receipt: Receipt,
  message: MessageRow,
): { row: MessageRow; event?: NewEvent; requeue: boolean } | undefined {
  if (message.direction !== 'outbound' || FINAL.has(message.status)) return undefined;
  const sender = { id: message.sender_id };
  const at = new Date(receipt.at);
  const accepted = {
    provider: message.provider ?? provider,
    provider_message_id: message.provider_message_id ?? receipt.providerMessageId,
    sent_at: message.sent_at ?? notBefore(at, message.created_at),
  };
  const costUnits = message.cost_units ?? render(receipt.channel, message.content as unknown as SendContent).costUnits;
  // A message's stored life reads in order (Message.deliveredAt): a carrier clock behind ours, or a receipt that
  // overtook the dispatcher's record, never dates a delivery or a read before the send it follows.
  const deliveredAt = message.delivered_at ?? notBefore(at, accepted.sent_at);

  if (receipt.status === 'delivered' || receipt.status === 'read') {
    if ((RANK[receipt.status] ?? 0) <= (RANK[message.status] ?? 0)) return undefined;
    // The provider carried an RCS message as SMS/MMS itself (a Twilio Messaging Service): our fallback, priced as such.
    const providerFallback = receipt.providerFallback === true && receipt.channel !== 'RCS' && !message.fallback_used;
    const row: MessageRow = {
      ...message,
      ...accepted,
      ...(providerFallback ? { fallback_used: true, fallback_reason: 'RCS_NOT_SUPPORTED' } : {}),
      cost_units: providerFallback ? render(receipt.channel, message.content as unknown as SendContent).costUnits : costUnits,
      status: receipt.status,
      channel: receipt.channel,
      delivered_at: deliveredAt,
      read_at: receipt.status === 'read' ? notBefore(at, deliveredAt) : null,
      receipt_at: at,
    };
    return { row, event: messageEvent(receipt.status === 'read' ? 'message.read' : 'message.delivered', row, sender), requeue: false };
  }

  const rcsFailed = receipt.status === 'failed' && receipt.channel === 'RCS';
  if (rcsFailed && message.fallback_allowed && !message.fallback_used) {
    const fallback = fallbackChannelFor(message.content as unknown as SendContent);
    const row: MessageRow = {
      ...message,
      status: 'queued',
      planned_channel: fallback,
      fallback_used: true,
      fallback_reason: 'RCS_DELIVERY_FAILED',
      cost_units: null,
      receipt_at: at,
    };
    return { row, requeue: true };
  }

  // An undeliverable message reached the carrier's network and is billed; a failed one is not.
  const row: MessageRow = {
    ...message,
    ...accepted,
    status: receipt.status,
    channel: receipt.channel,
    error_code: receipt.errorCode ?? (receipt.status === 'undeliverable' ? 'UNREACHABLE' : 'CARRIER_REJECTED'),
    error_message: receipt.errorMessage ?? null,
    failed_at: notBefore(at, accepted.sent_at),
    cost_units: receipt.status === 'undeliverable' ? costUnits : null,
    receipt_at: at,
  };
  return { row, event: messageEvent('message.failed', row, sender), requeue: false };
}

/** `at`, or `floor` when `at` is earlier: the later of the two. */
const notBefore = (at: Date, floor: Date): Date => (at.getTime() < floor.getTime() ? floor : at);
