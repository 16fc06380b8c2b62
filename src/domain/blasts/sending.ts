// Sending a blast. At the start (launch/send now, or the scheduled start job) the audience is materialized in one
// INSERT … SELECT into blast_recipients (one row per contact: the idempotency unit) and one pg-boss job per batch
// is queued in the same transaction. A batch job takes its pending rows one by one: it claims the row (FOR UPDATE
// SKIP LOCKED) and, in the same transaction, hands it to acceptMessage (the one send path) and marks it accepted
// with the message id — so a retried, duplicated or concurrent batch never sends a recipient twice, and a crash
// before commit leaves the row pending for the retry. A refusal of the send path (opted out, DNC, no consent, no
// channel …) marks the row skipped with the error code as its reason. An advance job follows the blast to
// DISPATCHED and SENT (or FAILED when every recipient was refused).
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import * as q from '../../db/queries/blasts/blasts.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { inTenantTransaction, queueOf } from '../conversations/context.ts';
import { revokeMessage } from '../conversations/revoke.ts';
import { acceptMessage, type MessageType } from '../conversations/send.ts';
import { ApiError } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { tenantFor } from '../tenant.ts';
import { emitEvent } from '../webhooks/events.ts';
import { variantBuckets, type BlastVariant } from './content.ts';
import { assertReady, contentsOf, NotReady, segmentOf } from './estimate.ts';
import { assertTransition, type BlastStatus } from './transitions.ts';

/** Recipients per send-batch job. */
export const BATCH_SIZE = 200;
/** How often the advance job looks again while a blast sends; once DISPATCHED it looks less often as time passes. */
const ADVANCE_EVERY_SECONDS = 1;
const ADVANCE_MAX_SECONDS = 60;
/** DISPATCHED → SENT at the latest this long after DISPATCHED (BlastStatus). */
const COMPLETE_AFTER_MS = 72 * 3600_000;
const FINAL_MESSAGE = ['delivered', 'read', 'failed', 'undeliverable', 'revoked'];

export type StartJob = { organizationId: string; blastId: string };
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

/** Moves a checked blast to SENDING now: materializes the recipients and queues the batches (caller's transaction). */
export async function startSending(tenant: Tenant, services: Pick<Services, 'queue'>, blast: q.BlastRow, eligible: number): Promise<q.BlastRow> {
  const { db, organizationId } = tenant;
  const predicate = await segmentOf(tenant, blast);
  const buckets = variantBuckets(blast.content_source === 'variants' ? (blast.variants as BlastVariant[]) : null);
  const { batches } = await q.materializeRecipients(db, organizationId, blast.id, blast.contact_ids, predicate, buckets, BATCH_SIZE);
  const now = new Date();
  const row = await moveTo(tenant, services, blast, 'SENDING', { launched_at: now, recipient_count: eligible });
  const queue = queueOf(services);
  for (let batch = 0; batch < batches; batch += 1) {
    await queue.send(QUEUES.blastSendBatch, { organizationId, blastId: blast.id, batch } satisfies BatchJob, { db: fromKysely(db) });
  }
  await queueAdvance(tenant, services, blast.id);
  return row;
}

async function queueAdvance(tenant: Tenant, services: Pick<Services, 'queue'>, blastId: string, dispatchedAt: Date | null = null): Promise<void> {
  const elapsed = dispatchedAt ? (Date.now() - dispatchedAt.getTime()) / 1000 : 0;
  const delay = Math.min(ADVANCE_MAX_SECONDS, ADVANCE_EVERY_SECONDS + Math.floor(elapsed / 30));
  await queueOf(services).send(QUEUES.blastAdvance, { organizationId: tenant.organizationId, blastId } satisfies StartJob, { db: fromKysely(tenant.db), startAfter: delay });
}

/** Queues the scheduled start (the job checks the blast is still SCHEDULED for that time). */
export async function queueScheduledStart(tenant: Tenant, services: Pick<Services, 'queue'>, blastId: string, at: Date): Promise<void> {
  await queueOf(services).send(QUEUES.blastStart, { organizationId: tenant.organizationId, blastId } satisfies StartJob, { db: fromKysely(tenant.db), startAfter: at });
}

/** The scheduled start: runs the launch checks again; a failure moves the blast to FAILED with the reason. */
export async function runScheduledStart(app: AppContext, job: StartJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  await inTenantTransaction(tenant, async (t) => {
    const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forUpdate: true });
    if (!blast || blast.status !== 'SCHEDULED' || !blast.scheduled_at || blast.scheduled_at.getTime() > Date.now() + 1000) return;
    try {
      const { estimate } = await assertReady(t, blast);
      assertTransition('start', blast.status);
      await startSending(t, app, blast, estimate.audience.eligible);
    } catch (e) {
      if (!(e instanceof NotReady)) throw e;
      assertTransition('fail', blast.status);
      await moveTo(t, app, blast, 'FAILED', { completed_at: new Date(), failure_reason: JSON.stringify({ code: e.failureCode, message: e.message }) });
    }
  });
}

/** One batch: each pending recipient claimed and accepted (or skipped) exactly once. */
export async function runBatch(app: AppContext, job: BatchJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  const pending = await q.pendingContactIds(tenant.db, tenant.organizationId, job.blastId, job.batch);
  for (const contactId of pending) await sendToRecipient(tenant, app, job.blastId, contactId);
}

async function sendToRecipient(tenant: Tenant, services: Services, blastId: string, contactId: string): Promise<void> {
  try {
    await inTenantTransaction(tenant, async (t) => {
      const claimed = await q.claimRecipient(t.db, t.organizationId, blastId, contactId);
      if (!claimed) return; // done already, or another worker holds it
      const blast = await q.getBlast(t.db, t.organizationId, blastId);
      if (!blast || blast.status !== 'SENDING') {
        await q.markRecipient(t.db, t.organizationId, blastId, contactId, { status: 'cancelled' });
        return;
      }
      const content = contentsOf(blast).get(claimed.variant_key ?? '');
      if (!content) throw new NotReady('BOT_NOT_PUBLISHED', 'UNPROCESSABLE', 'No content for this recipient.');
      const message = await acceptMessage(t, services, {
        contactId,
        senderId: blast.sender_id,
        messageType: blast.message_type as MessageType,
        fallbackToSms: blast.fallback_to_sms,
        content,
        origin: 'blast',
        conversationSource: { type: 'blast', blastId },
      });
      await q.markRecipient(t.db, t.organizationId, blastId, contactId, { status: 'accepted', messageId: message.id });
    });
  } catch (e) {
    // Refused by the send path (nothing of it was kept): the recipient is skipped with the reason.
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    await q.markRecipient(tenant.db, tenant.organizationId, blastId, contactId, { status: 'skipped', reason: e.code });
  }
}

/** SENDING → DISPATCHED → SENT (or FAILED when every recipient was refused); looks again until final. */
export async function runAdvance(app: AppContext, job: StartJob): Promise<void> {
  const tenant = await tenantFor(app, job.organizationId);
  await inTenantTransaction(tenant, async (t) => {
    const blast = await q.getBlast(t.db, t.organizationId, job.blastId, { forUpdate: true });
    if (!blast || (blast.status !== 'SENDING' && blast.status !== 'DISPATCHED')) return;
    const recipients = await q.recipientCounts(t.db, t.organizationId, blast.id);
    const groups = await q.messageGroups(t.db, t.organizationId, blast.id);
    const count = (statuses: string[]) => groups.filter((g) => statuses.includes(g.status)).reduce((s, g) => s + g.n, 0);
    const now = new Date();
    if (blast.status === 'SENDING') {
      if (recipients.pending === 0 && count(['queued']) === 0) {
        if (recipients.accepted === 0) {
          assertTransition('fail', blast.status);
          await moveTo(t, app, blast, 'FAILED', {
            completed_at: now,
            failure_reason: JSON.stringify({ code: 'ALL_MESSAGES_REJECTED', message: 'Every message of the blast was rejected before reaching a carrier.' }),
          });
          return;
        }
        assertTransition('dispatched', blast.status);
        await moveTo(t, app, blast, 'DISPATCHED', { dispatched_at: now, recipient_count: recipients.accepted });
      }
    } else {
      const accepted = groups.reduce((s, g) => s + g.n, 0);
      const timedOut = blast.dispatched_at !== null && now.getTime() - blast.dispatched_at.getTime() >= COMPLETE_AFTER_MS;
      if (count(FINAL_MESSAGE) === accepted || timedOut) {
        assertTransition('complete', blast.status);
        await moveTo(t, app, blast, 'SENT', { completed_at: now });
        return;
      }
    }
    await queueAdvance(t, app, blast.id, blast.dispatched_at);
  });
}

/** Cancel: pending recipients are cancelled, queued and held messages withdrawn (revoked) and counted cancelled. */
export async function withdrawUnsent(tenant: Tenant, services: Services, blastId: string): Promise<void> {
  await q.cancelPending(tenant.db, tenant.organizationId, blastId);
  for (const messageId of await q.unsentMessageIds(tenant.db, tenant.organizationId, blastId)) {
    try {
      await revokeMessage(tenant, services, messageId);
      await q.markMessageCancelled(tenant.db, tenant.organizationId, blastId, messageId);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e; // already on its way to the carrier: it counts in stats
    }
  }
}
