// The delivery deadline of an RCS message (fallbackReason RCS_EXPIRED). An RCS message the carrier took is given
// until its RCS validity period ends — the sender's RCS protocol `validityPeriodSeconds`, counted from acceptance
// as for the wait before hand-over, 4 hours (the setting's default) when the sender has no RCS protocol — to be
// delivered, as RBM's `expireTime`/`ttl` bounds a message at Google. At the deadline a message still `sent` (no
// delivered, read or failed receipt) whose fallback is allowed and unused is withdrawn at the carrier (the provider's
// revoke) and, once withdrawn, queued again for its SMS/MMS fallback exactly as a failed RCS receipt queues it
// (receipts.ts applyRcsExpiries). A carrier that refuses the revoke has delivered it meanwhile: no fallback, its
// receipt says the rest. A message without fallback gets no deadline: it stays as the carrier has it.
//
// Exactly once: the revoke is asked first, outside any transaction (a carrier call holds no row lock); then the
// message is locked as receipts lock it and changed only if it still awaits its RCS delivery. A delivered receipt
// that raced the deadline was applied first (no fallback) or finds the retry planned and is ignored (receipts.ts);
// the carrier delivers no message it withdrew.
//
// Why one delayed pg-boss job per hand-over batch (startAfter: the deadline) rather than a job per message or a
// periodic sweep: dispatch hands messages over in claimed batches of up to 500, so a 1,000,000-recipient blast queues
// about 2,000 such jobs, each carrying its message ids and reading them by primary key at the deadline. A sweep would
// need an index on the messages' state and hand-over time, written on every status change of the hottest table, and
// would re-read every undelivered message of every organization on each pass; a job per message would be a million
// job rows. A batch's messages share a deadline to the second (they are grouped by it: a blast batch is accepted
// together), so most batches queue one job.
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import type { MessageRow } from '../../db/queries/messages/messages.ts';
import { lockMessages } from '../../db/queries/messages/receipts.ts';
import { sendersByIds, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { ProviderRejection } from '../../providers/provider.ts';
import { DEFAULT_VALIDITY_PERIOD_SECONDS, type SendSettings } from '../sender-ids/sending-rule.ts';
import { dedupeKeyOf } from './fallback.ts';
import { applyRcsExpiries, awaitsRcsDelivery } from './receipts.ts';

export const RCS_EXPIRY_QUEUE = QUEUES.messageRcsExpiry;

/** The deadline check of one hand-over batch: the RCS messages it gave the carrier with their fallback allowed. */
export type RcsExpiryJob = { messageIds: string[] };

/** When an RCS message accepted at `createdAt` must have been delivered: its RCS validity period after acceptance. */
function rcsDeadline(settings: SendSettings, createdAt: Date): Date {
  const seconds = settings.validitySeconds('RCS') ?? DEFAULT_VALIDITY_PERIOD_SECONDS;
  return new Date(Math.ceil((createdAt.getTime() + seconds * 1000) / 1000) * 1000);
}

/**
 * Queues, in the hand-over's transaction, the deadline checks of the messages it recorded as sent: those on RCS
 * whose fallback is allowed, from a sender whose provider can withdraw a message (without a revoke the fallback
 * could reach a handset the RCS message reaches too). One job per deadline second.
 */
export async function scheduleRcsExpiry(
  app: AppContext,
  tx: Db,
  queue: JobQueue,
  sent: readonly MessageRow[],
  senders: ReadonlyMap<string, SenderRow>,
  settings: ReadonlyMap<string, SendSettings>,
): Promise<void> {
  const due = sent.filter((m) => awaitsRcsDelivery(m) && app.providers.forSender(senders.get(m.sender_id)!).revoke !== undefined);
  if (due.length === 0) return;
  const byDeadline = Map.groupBy(due, (m) => rcsDeadline(settings.get(m.sender_id)!, m.created_at).getTime());
  await queue.insert(
    RCS_EXPIRY_QUEUE,
    [...byDeadline].map(([at, messages]) => ({
      data: { messageIds: messages.map((m) => m.id) } satisfies RcsExpiryJob,
      startAfter: new Date(at),
    })),
    { db: fromKysely(tx) },
  );
}

/**
 * Runs deadline checks: each message still awaiting its RCS delivery is revoked at its carrier, and those withdrawn
 * fall back (RCS_EXPIRED). A provider error while revoking (other than a refusal) fails the job once the others are
 * settled, so pg-boss retries it; the messages already settled no longer await their delivery and are skipped then.
 */
export async function expireRcsMessages(app: AppContext, jobs: ReadonlyArray<{ data: RcsExpiryJob }>): Promise<void> {
  const ids = [...new Set(jobs.flatMap((j) => j.data.messageIds))];
  // A read under the receipts' lock, released at once: no row stays locked while the carriers are asked.
  const waiting = (await inTransaction(app.db, (tx) => lockMessages(tx, ids))).filter(awaitsRcsDelivery);
  if (waiting.length === 0) return;
  const senders = new Map((await sendersByIds(app.db, [...new Set(waiting.map((m) => m.sender_id))])).map((s) => [s.id, s]));
  const answers = await Promise.allSettled(
    waiting.map(async (m) => {
      const sender = senders.get(m.sender_id);
      const provider = sender && app.providers.forSender(sender);
      if (!provider?.revoke || !m.provider_message_id) return false;
      return provider.revoke({ providerMessageId: m.provider_message_id, dedupeKey: dedupeKeyOf(m), to: m.contact_phone });
    }),
  );
  const withdrawn = waiting.filter((_, i) => {
    const a = answers[i]!;
    return a.status === 'fulfilled' && a.value;
  });
  await applyRcsExpiries(
    app,
    withdrawn.map((m) => m.id),
    new Date(),
  );
  // A refusal is an answer (not withdrawn: no fallback); anything else is retried with the job.
  const failure = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected' && !(a.reason instanceof ProviderRejection));
  if (failure) throw failure.reason;
}
