// Sending a blast. The start (launch/send now, or the scheduled start job) checks the blast (assertStartable: it
// does not count the audience), moves it to SENDING and queues its first batch job: it touches no recipient, so it
// answers at once whatever the audience's size. The audience is resolved slice by slice as the blast sends: batch
// job k takes the next batchSize contacts of the audience by keyset over contact id (explicit ids ∪ segment, as
// they are at that moment), inserts their blast_recipients rows (one per contact: the idempotency unit) and queues
// batch k+1, in one short transaction that holds the blast's row (slices are taken one at a time, in order); then,
// in a second transaction, it locks its pending rows (FOR UPDATE SKIP LOCKED) and hands them, as one set, to the
// send entry every message takes (messaging/send.ts, as a blast batch order): each recipient gets the gate (so
// consent, opt-outs and DNC are those of that moment), channel plan and price a direct send would, its message,
// and its row marked accepted with the message id or skipped with the refusal as its reason — in one statement.
// While batch k is accepted, batch k+1 already takes its slice. A retried, duplicated or concurrent batch job
// never resolves a slice twice (the blast records how many slices it has) nor sends a recipient twice (the rows
// are the unit, locked and marked), and a crash between the two transactions leaves the slice's rows pending
// for the retry. A cancel stops the slices still to come. The accepted messages are dispatched from the outbox by
// one wake job per batch, inserted by the accepting statement. An advance job follows the blast to DISPATCHED and
// SENT (or FAILED when every recipient was refused) once the last slice is resolved and accepted.
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import * as q from '../../db/queries/blasts/blasts.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { inTenantTransaction, queueOf } from '../messaging/context.ts';
import { send, type MessageType } from '../messaging/send.ts';
import type { Services, Tenant } from '../tenant.ts';
import { tenantFor } from '../tenant.ts';
import { emitEvent, emitEvents, subscribesToAny } from '../webhooks/events.ts';
import { messageEvent } from '../messaging/message-events.ts';
import { variantBuckets, type BlastVariant } from './content.ts';
import { startBlastSessions } from '../../db/queries/bots/blast-sessions.ts';
import { assertStartable, contentsOf, NotReady, segmentOf, type BlastContents } from './estimate.ts';
import { assertTransition, type BlastStatus } from './transitions.ts';

/**
 * Recipients per send-batch job (one slice of the audience; one statement accepts them all). The first batch is
 * smaller so that the first messages reach the carrier soon after the launch (a slice of 5,000 is about a second
 * of accepting before any of them can be dispatched); the batches after it are full. Tests make them small.
 */
export const blastTuning = { batchSize: 5000, firstBatchSize: 500 };
/** How often the advance job looks again while a blast sends; once DISPATCHED it looks less often as time passes. */
const ADVANCE_EVERY_SECONDS = 1;
const ADVANCE_MAX_SECONDS = 60;
/** DISPATCHED → SENT at the latest this long after DISPATCHED (BlastStatus). */
const COMPLETE_AFTER_MS = 72 * 3600_000;
/** A blast's message not settled yet (every status but delivered, read, failed, undeliverable and revoked). */
const NOT_FINAL_MESSAGE = ['queued', 'held', 'sending', 'sent'];

export type StartJob = { organizationId: string; blastId: string };
/**
 * The advance job: `fromBatch`, where its previous look found the first message still waiting (the batches before it
 * were settled then), for the blast's status at that look; absent in jobs queued before it was, and read as 0.
 */
export type AdvanceJob = StartJob & { fromBatch?: number };
export type BatchJob = { organizationId: string; blastId: string; batch: number };

/** Stores the new state and emits `blast.status_changed`, in the caller's transaction. */
export async function moveTo(
  tenant: Tenant,
  services: Pick<Services, 'queue'>,
  blast: q.BlastRow,
  to: BlastStatus,
  patch: Parameters<typeof q.updateBlast>[3] = {},
): Promise<q.BlastRow> {
  const row = await q.updateBlast(tenant.db, tenant.organizationId, blast.id, { ...patch, status: to });
  await emitEvent(tenant.db, queueOf(services), {
    organizationId: tenant.organizationId,
    type: 'blast.status_changed',
    data: {
      blastId: row.id,
      name: row.name,
      senderIdId: row.sender_id,
      contactPhone: null,
      previousStatus: blast.status as BlastStatus,
      status: to,
      recipientCount: row.recipient_count,
      occurredAt: row.updated_at.toISOString(),
    },
  });
  return row;
}

/**
 * Moves a checked blast to SENDING now and queues its first batch, which resolves the first slice of the audience
 * (caller's transaction). Nothing here reads the audience.
 */
export async function startSending(tenant: Tenant, services: Pick<Services, 'queue'>, blast: q.BlastRow): Promise<q.BlastRow> {
  const row = await moveTo(tenant, services, blast, 'SENDING', {
    launched_at: new Date(),
    recipient_count: null,
    audience_cursor: null,
    audience_batches: 0,
    audience_done_at: null,
  });
  await queueBatch(tenant, services, blast.id, 0);
  await queueAdvance(tenant, services, blast.id, null, 0);
  return row;
}

async function queueBatch(tenant: Tenant, services: Pick<Services, 'queue'>, blastId: string, batch: number): Promise<void> {
  await queueOf(services).send(QUEUES.blastSendBatch, { organizationId: tenant.organizationId, blastId, batch } satisfies BatchJob, {
    db: fromKysely(tenant.db),
  });
}

async function queueAdvance(
  tenant: Tenant,
  services: Pick<Services, 'queue'>,
  blastId: string,
  dispatchedAt: Date | null,
  fromBatch: number,
): Promise<void> {
  const elapsed = dispatchedAt ? (Date.now() - dispatchedAt.getTime()) / 1000 : 0;
  const delay = Math.min(ADVANCE_MAX_SECONDS, ADVANCE_EVERY_SECONDS + Math.floor(elapsed / 30));
  await queueOf(services).send(QUEUES.blastAdvance, { organizationId: tenant.organizationId, blastId, fromBatch } satisfies AdvanceJob, {
    db: fromKysely(tenant.db),
    startAfter: delay,
  });
}

/** Queues the scheduled start (the job checks the blast is still SCHEDULED for that time). */
export async function queueScheduledStart(tenant: Tenant, services: Pick<Services, 'queue'>, blastId: string, at: Date): Promise<void> {
  await queueOf(services).send(QUEUES.blastStart, { organizationId: tenant.organizationId, blastId } satisfies StartJob, {
    db: fromKysely(tenant.db),
    startAfter: at,
  });
}

/** The scheduled start: runs the launch checks again; a failure moves the blast to FAILED with the reason. */
export async function runScheduledStart(app: AppContext, job: StartJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  await inTenantTransaction(tenant, async (t) => {
    const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forUpdate: true });
    if (!blast || blast.status !== 'SCHEDULED' || !blast.scheduled_at || blast.scheduled_at.getTime() > Date.now() + 1000) return;
    try {
      await assertStartable(t, blast);
      assertTransition('start', blast.status);
      await startSending(t, app, blast);
    } catch (e) {
      if (!(e instanceof NotReady)) throw e;
      assertTransition('fail', blast.status);
      await moveTo(t, app, blast, 'FAILED', {
        completed_at: new Date(),
        failure_reason: JSON.stringify({ code: e.failureCode, message: e.message }),
      });
    }
  });
}

/**
 * One batch: the next slice of the audience resolved (takeSlice), then its pending recipients, locked (SKIP
 * LOCKED), go through the one send path as a set — gate, plan, price, conversation, message and the recipient rows
 * marked accepted or skipped with the reason, in one statement and one transaction. A retried or concurrent batch
 * finds its slice taken and nothing pending, and does nothing.
 */
export async function runBatch(app: AppContext, job: BatchJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  await inTenantTransaction(tenant, (t) => takeSlice(t, app, job));
  await inTenantTransaction(tenant, async (t) => {
    // Key-shared: the blast's batches run side by side, and the next slice is taken beside them; a cancel (FOR
    // UPDATE) waits for this one, and then withdraws what it accepted.
    const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forKeyShare: true });
    if (!blast) return;
    if (blast.status !== 'SENDING') return q.settlePendingBatch(t.db, t.organizationId, blast.id, job.batch, { status: 'cancelled' });
    // A bot blast whose bot no longer opens with a message (unpublished, deleted, republished without one) skips
    // the batch's recipients with the reason.
    let what: BlastContents;
    try {
      what = await contentsOf(t, blast);
    } catch (e) {
      if (!(e instanceof NotReady)) throw e;
      return q.settlePendingBatch(t.db, t.organizationId, blast.id, job.batch, { status: 'skipped', reason: e.failureCode });
    }
    const { contents, opening } = what;
    await send(t, app, {
      blastBatch: { blastId: blast.id, batch: job.batch },
      senderId: blast.sender_id,
      messageType: blast.message_type as MessageType,
      fallbackToSms: blast.fallback_to_sms,
      trackLinks: blast.track_links,
      contents,
      origin: 'blast',
      // A bot blast's conversations record the blast and the bot (the bot holds them: handledByOf).
      conversationSource: { type: 'blast', blastId: blast.id, ...(opening ? { botId: opening.botId } : {}) },
    });
    // Each recipient the batch accepted talks with the bot from its opening on: replies continue the flow through the
    // inbound path (runBotTurn), as in any session.
    if (opening)
      await startBlastSessions(t.db, t.organizationId, {
        blastId: blast.id,
        batch: job.batch,
        botId: opening.botId,
        botVersion: opening.botVersion,
        flow: opening.flow,
        startNodeId: opening.startNodeId,
        nodeId: opening.node.id,
        nodeType: opening.node.type,
        status: opening.status,
      });
  });
}

/**
 * Batch `job.batch`'s slice of the audience: the next batchSize contacts (firstBatchSize for the first) after the blast's cursor, inserted as
 * its pending recipients, and the next batch queued when the slice was full — in the caller's transaction, which
 * holds the blast's row so that slices are taken one at a time. Nothing when the blast no longer sends, when this
 * slice was taken already (a retry or a duplicate job) or when the audience is resolved.
 */
async function takeSlice(t: Tenant, services: Pick<Services, 'queue'>, job: BatchJob): Promise<void> {
  const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forNoKeyUpdate: true });
  if (!blast || blast.status !== 'SENDING' || blast.audience_done_at || blast.audience_batches !== job.batch) return;
  const audience = {
    ids: blast.contact_ids,
    segment: await segmentOf(t, blast),
    variants: variantBuckets(blast.content_source === 'variants' ? (blast.variants as BlastVariant[]) : null),
  };
  const size = job.batch === 0 ? blastTuning.firstBatchSize : blastTuning.batchSize;
  const { taken, last } = await q.resolveSlice(t.db, t.organizationId, blast.id, audience, {
    batch: job.batch,
    after: blast.audience_cursor,
    size,
  });
  const done = taken < size;
  await q.recordSlice(t.db, t.organizationId, blast.id, last ?? blast.audience_cursor, job.batch + 1, done);
  if (!done) await queueBatch(t, services, blast.id, job.batch + 1);
  // The first slice of a blast is new to the statistics: without them the planner takes it for one row and joins
  // the send path's set statement by nested loops over thousands of rows. Its own rows count (ANALYZE sees them).
  if (job.batch === 0) await q.analyzeRecipients(t.db);
}

/**
 * The first batch of the blast, from `from` on, with a message in `statuses`. Found none: looked for again from the
 * first batch, since a message of a batch found settled before may have moved back since (a retry requeues it, a
 * receipt queues its fallback), so that the blast moves on what every one of its messages is now. That whole read
 * happens once per move, the looks before it read from where the last one ended.
 */
async function firstWaitingBatch(t: Tenant, blastId: string, statuses: readonly string[], from: number): Promise<number | null> {
  const found = await q.firstBatchWithMessageIn(t.db, t.organizationId, blastId, statuses, from);
  if (found !== null || from === 0) return found;
  return q.firstBatchWithMessageIn(t.db, t.organizationId, blastId, statuses, 0);
}

/** SENDING → DISPATCHED → SENT (or FAILED when every recipient was refused); looks again until final. */
export async function runAdvance(app: AppContext, job: AdvanceJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  await inTenantTransaction(tenant, async (t) => {
    // Batches hold the blast FOR SHARE while they run: waiting for them would queue every later batch behind this
    // look (a lock convoy). Locked: look again at the next tick.
    const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forUpdate: true, skipLocked: true });
    if (!blast) {
      const busy = await q.getBlast(t.db, t.organizationId, job.blastId);
      if (busy && (busy.status === 'SENDING' || busy.status === 'DISPATCHED'))
        await queueAdvance(t, app, busy.id, busy.dispatched_at, job.fromBatch ?? 0);
      return;
    }
    if (blast.status !== 'SENDING' && blast.status !== 'DISPATCHED') return;
    // Each look asks only whether something is left (cheap while it is); the blast is counted once, when it moves.
    const now = new Date();
    let from = job.fromBatch ?? 0;
    if (blast.status === 'SENDING') {
      let left = blast.audience_done_at === null || (await q.hasPendingRecipient(t.db, t.organizationId, blast.id));
      if (!left) {
        const waiting = await firstWaitingBatch(t, blast.id, ['queued'], from);
        left = waiting !== null;
        from = waiting ?? 0;
      }
      if (!left) {
        const recipients = await q.recipientCounts(t.db, t.organizationId, blast.id);
        if (recipients.accepted === 0) {
          assertTransition('fail', blast.status);
          await moveTo(t, app, blast, 'FAILED', {
            completed_at: now,
            failure_reason: JSON.stringify({
              code: 'ALL_MESSAGES_REJECTED',
              message: 'Every message of the blast was rejected before reaching a carrier.',
            }),
          });
          return;
        }
        assertTransition('dispatched', blast.status);
        await moveTo(t, app, blast, 'DISPATCHED', { dispatched_at: now, recipient_count: recipients.accepted });
        // The next look asks another question (a message not final yet), from the first batch.
        await queueAdvance(t, app, blast.id, now, 0);
        return;
      }
    } else {
      const timedOut = blast.dispatched_at !== null && now.getTime() - blast.dispatched_at.getTime() >= COMPLETE_AFTER_MS;
      const waiting = timedOut ? null : await firstWaitingBatch(t, blast.id, NOT_FINAL_MESSAGE, from);
      if (waiting === null) {
        assertTransition('complete', blast.status);
        await moveTo(t, app, blast, 'SENT', { completed_at: now });
        return;
      }
      from = waiting;
    }
    await queueAdvance(t, app, blast.id, blast.dispatched_at, from);
  });
}

/**
 * Cancel: pending recipients are cancelled, and the queued and held messages withdrawn (revoked) with their
 * recipients counted cancelled — set-based, whatever the audience's size; `message.revoked` for each when an
 * endpoint subscribes. Messages already handed to a carrier go on and count in stats.
 */
export async function withdrawUnsent(tenant: Tenant, services: Services, blastId: string): Promise<void> {
  await q.cancelPending(tenant.db, tenant.organizationId, blastId);
  const withEvents = await subscribesToAny(tenant.db, tenant.organizationId, ['message.revoked']);
  const { rows } = await q.revokeUnsent(tenant.db, tenant.organizationId, blastId, withEvents);
  await emitEvents(
    tenant.db,
    queueOf(services),
    rows.map((m) => messageEvent('message.revoked', m, { id: m.sender_id })),
  );
}
