// Delivery and read receipts from the provider. Statuses only move forward (sent → delivered → read);
// failed, undeliverable and revoked are final. A failed RCS delivery with fallback allowed is sent again as
// SMS/MMS (fallback reason RCS_DELIVERY_FAILED), and so is an RCS message withdrawn at its delivery deadline
// (RCS_EXPIRED, rcs-expiry.ts: applyRcsExpiries below, under the same row locks as receipts, so a receipt racing
// the deadline is applied before or after it, never beside it): the receipt, not the send response, says which
// channel carried the message. Once the retry is planned, a late receipt of the withdrawn RCS attempt changes
// nothing: it is the retry's receipts that say how the message ended. When another sender carries the fallback (an RCS agent's fallback sender, recorded at
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
import { QUEUES } from '../../jobs/queue-names.ts';
import { emitEvents, type NewEvent } from '../webhooks/events.ts';
import { queueOf } from './context.ts';
import { dedupeKeyOf, retriedAfterRcs } from './fallback.ts';
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
  await onLockedMessages(
    app,
    ordered.map(({ r }) => ({ id: messageIdOf(r), apply: (m: MessageRow) => applyReceipt(provider, r, m) })),
  );
}

/**
 * RCS messages whose delivery deadline passed and whose carrier withdrew them (rcs-expiry.ts): each one still
 * waiting for its RCS delivery — no receipt came while it was being revoked — goes back to the queue for its
 * SMS/MMS fallback, with reason RCS_EXPIRED, exactly as a failed RCS receipt sends it.
 */
export async function applyRcsExpiries(app: AppContext, ids: readonly string[], at: Date): Promise<void> {
  await onLockedMessages(
    app,
    ids.map((id) => ({ id, apply: (m: MessageRow) => (awaitsRcsDelivery(m) ? fallbackOutcome(m, 'RCS_EXPIRED', at) : undefined) })),
  );
}

/**
 * An RCS message the carrier took (handed over as RCS: `channel` is set by the first receipt) and has not reported
 * delivered, read or failed, whose fallback is allowed and unused.
 */
export function awaitsRcsDelivery(m: MessageRow): boolean {
  return (
    m.direction === 'outbound' &&
    m.status === 'sent' &&
    m.planned_channel === 'RCS' &&
    (m.channel === null || m.channel === 'RCS') &&
    m.fallback_allowed &&
    !m.fallback_used
  );
}

/** What one step leaves a message as: its row, the event it raises, whether it is due for dispatch again. */
type Outcome = { row: MessageRow; event?: NewEvent; requeue: boolean };

/**
 * The one way receipts and deadlines change messages: the rows locked together in id order (FOR UPDATE: a receipt
 * and a deadline for the same message wait for each other), each step applied in order to its message as the
 * previous ones left it, the final states written in one statement, the messages due again woken and the events
 * emitted, in one transaction.
 */
async function onLockedMessages(
  app: AppContext,
  steps: Array<{ id: string; apply: (m: MessageRow) => Outcome | undefined }>,
): Promise<void> {
  await inTransaction(app.db, async (tx) => {
    const messages = new Map(
      (
        await q.lockMessages(
          tx,
          steps.map((s) => s.id),
        )
      ).map((m) => [m.id, m]),
    );
    const changed = new Map<string, q.ReceiptState>();
    const events: NewEvent[] = [];
    for (const step of steps) {
      const message = messages.get(step.id);
      if (!message) continue;
      const outcome = step.apply(message);
      if (!outcome) continue;
      messages.set(message.id, outcome.row);
      const requeue = outcome.requeue || (changed.get(message.id)?.requeue ?? false);
      changed.set(message.id, { ...stateOf(outcome.row), requeue });
      if (outcome.event) events.push(outcome.event);
    }
    await q.writeReceiptStates(tx, [...changed.values()]);
    for (const state of changed.values()) {
      if (state.requeue) await queueOf(app).send(QUEUES.messageDispatch, { messageId: state.id }, { db: fromKysely(tx) });
    }
    await emitEvents(tx, queueOf(app), events);
  });
}

/** The message queued again for its SMS/MMS fallback after its RCS attempt (`reason`: RCS_DELIVERY_FAILED, RCS_EXPIRED). */
function fallbackOutcome(message: MessageRow, reason: 'RCS_DELIVERY_FAILED' | 'RCS_EXPIRED', at: Date): Outcome {
  const row: MessageRow = {
    ...message,
    status: 'queued',
    planned_channel: fallbackChannelFor(message.content as unknown as SendContent),
    fallback_used: true,
    fallback_reason: reason,
    cost_units: null,
    receipt_at: at,
  };
  return { row, requeue: true };
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
function applyReceipt(provider: ProviderName, receipt: Receipt, message: MessageRow): Outcome | undefined {
  if (message.direction !== 'outbound' || FINAL.has(message.status)) return undefined;
  // A receipt of the RCS attempt that failed or was withdrawn, once its SMS/MMS retry is planned (its own dedupe key).
  if (retriedAfterRcs(message) && receipt.channel === 'RCS' && receipt.dedupeKey !== dedupeKeyOf(message)) return undefined;
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
  if (rcsFailed && message.fallback_allowed && !message.fallback_used) return fallbackOutcome(message, 'RCS_DELIVERY_FAILED', at);

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
