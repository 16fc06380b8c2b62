// Making and recording delivery attempts.
//
// runDeliveryBatch (the webhook-delivery worker) is at-least-once. The HTTP requests of a fetched batch are made
// concurrently, outside any transaction; then one transaction records every attempt, advances the deliveries,
// updates the endpoints' failure streaks (disabling where the rules say so) and queues the retries with pg-boss
// `startAfter` (a batch of successes only needs one statement per organization, atomic on its own, and no
// transaction). If the worker dies between the requests and that commit, pg-boss runs the batch again and a
// receiver may see an event twice (same `webhook-id`, as documented); an attempt already recorded is never made
// again.
//
// Every recording transaction locks the endpoints concerned first (organization by organization in id order,
// endpoints in id order), then their deliveries: the order PATCH …/{id} takes too (endpoint, then its pending
// deliveries), so two workers, or a worker and a PATCH, never wait on each other in a circle.
//
// The record commits durably (synchronous_commit stays on; issue 38 asked whether it could be off here, as work that is
// redone after a crash). Statement by statement: the attempt rows and the deliveries' new status are read back by
// clients (GET …/deliveries, the delivery's status), and the endpoint's failure streak and disabling by GET and
// PATCH …/{id}; a crash after an asynchronous commit would take back an attempt a client may have read, and re-enable
// an endpoint it saw disabled. The retries' jobs are inserted in the same transaction, so they follow its fate.
// The saving was small anyway: one commit per batch of up to 500 attempts, and PostgreSQL already groups the commits
// waiting on one WAL flush (7 to 8 per fsync measured with 20 committers on the embedded server).
//
// sendTestDelivery (POST …/test): one synchronous attempt, recorded with `test: true`, never retried, and it does
// not touch the endpoint's state. listDeliveries: the endpoint's attempt log (GET …/deliveries).
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../app-context.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import * as attemptsQ from '../../db/queries/webhooks/attempts.ts';
import * as deliveriesQ from '../../db/queries/webhooks/deliveries.ts';
import * as endpointsQ from '../../db/queries/webhooks/endpoints.ts';
import type { WebhookDisabledReason } from '../../db/tables/webhooks.ts';
import { found, notFound } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { batchSigners, postEnvelope, type AttemptOutcome } from './deliver.ts';
import { envelopeBody } from './events.ts';
import { enqueueAttempts, type DeliveryJob } from './queue.ts';
import { retryDelayMs } from './retry-schedule.ts';
import { AUTO_DISABLE_AFTER, webhookTuning } from './tuning.ts';

/** How many requests of one batch are in flight at once. */
const BATCH_CONCURRENCY = 50;

type Delivery = deliveriesQ.DeliveryForAttempt;
type Due = { job: DeliveryJob; delivery: Delivery };
type Done = Due & { outcome: AttemptOutcome; nextRetryAt: Date | null; gone: boolean };
type Retry = { job: DeliveryJob; startAfter: Date };

async function mapConcurrently<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

function attemptFields(outcome: AttemptOutcome) {
  return {
    success: outcome.success,
    status_code: outcome.statusCode,
    error: outcome.error,
    duration_ms: outcome.durationMs,
    attempted_at: outcome.attemptedAt,
    completed_at: outcome.completedAt,
  };
}

/** The deliveries the jobs ask for, minus those already done, cancelled or deleted; inactive endpoints' to cancel. */
async function loadDue(db: Db, jobs: DeliveryJob[]): Promise<{ due: Due[]; cancel: Due[] }> {
  const due: Due[] = [];
  const cancel: Due[] = [];
  for (const [organizationId, group] of Map.groupBy(jobs, (j) => j.organizationId)) {
    const rows = await deliveriesQ.deliveriesForAttempts(
      db,
      organizationId,
      group.map((j) => j.deliveryId),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const job of group) {
      const delivery = byId.get(job.deliveryId);
      // Deleted endpoint (cascade), finished or cancelled delivery, or an attempt an earlier run already recorded.
      if (!delivery || delivery.status !== 'pending' || delivery.attempts !== job.attempt - 1) continue;
      byId.delete(job.deliveryId); // two jobs of the batch naming the same attempt: it is made once
      (delivery.is_active ? due : cancel).push({ job, delivery });
    }
  }
  return { due, cancel };
}

/**
 * Applies final failures (streak + 1; disable at AUTO_DISABLE_AFTER, or at once on 410 Gone) and the successes
 * among them (streak reset) in completion order, on endpoints the caller has locked, as they were when locked. Test
 * events do not count. An endpoint whose counted attempts all succeeded is left alone: recordBatch reset its
 * streak. Returns the endpoints disabled now.
 */
async function updateStreaks(tx: Db, organizationId: string, states: attemptsQ.LockedEndpoint[], done: Done[]): Promise<Set<string>> {
  const counted = done.filter((d) => !d.delivery.test && (d.outcome.success || !d.nextRetryAt));
  const byEndpoint = Map.groupBy(counted, (d) => d.delivery.endpoint_id);
  const disabled = new Set<string>();
  for (const state of states) {
    const items = byEndpoint.get(state.id)?.sort((a, b) => a.outcome.completedAt.getTime() - b.outcome.completedAt.getTime());
    if (!items || items.every((item) => item.outcome.success)) continue;
    let streak = state.consecutive_failures;
    let disable: WebhookDisabledReason | null = null;
    for (const item of items) {
      if (item.outcome.success) {
        streak = 0;
        continue;
      }
      streak += 1;
      if (state.is_active && item.gone) disable = 'gone';
      else if (state.is_active && streak >= AUTO_DISABLE_AFTER) disable = 'consecutive_failures';
      if (disable) break;
    }
    if (streak === state.consecutive_failures && !disable) continue; // nothing changed: no write
    await endpointsQ.setEndpointState(tx, organizationId, state.id, { consecutiveFailures: streak, disable });
    if (disable) disabled.add(state.id);
  }
  return disabled;
}

/**
 * Records one organization's finished attempts and cancellations; returns the retries to queue. Its first statement
 * locks the endpoints concerned before any delivery (see the head of this file) and records what needs no decision;
 * streaks with failures, disabling and retries follow in the caller's transaction. A batch of successes only, with
 * nothing to cancel, needs nothing after that statement (runDeliveryBatch then runs it on its own).
 */
async function recordOutcomes(db: Db, organizationId: string, done: Done[], cancel: Due[]): Promise<Retry[]> {
  const endpointIds = [...new Set([...done, ...cancel].map((d) => d.delivery.endpoint_id))];
  const { locked, advanced } = await attemptsQ.recordBatch(
    db,
    organizationId,
    endpointIds,
    cancel.map((d) => d.delivery.id),
    done.map((d) => ({
      ...attemptFields(d.outcome),
      endpoint_id: d.delivery.endpoint_id,
      delivery_id: d.delivery.id,
      event_id: d.delivery.event_id,
      event_type: d.delivery.event_type,
      attempt: d.job.attempt,
      test: d.delivery.test,
      url: d.delivery.url,
      // Cleared below, with the delivery cancelled, if this batch disables the endpoint.
      next_retry_at: d.nextRetryAt,
      status: d.outcome.success ? 'succeeded' : d.nextRetryAt ? 'pending' : 'failed',
      counts: d.delivery.test ? null : d.outcome.success ? 'success' : d.nextRetryAt ? null : 'failure',
    })),
  );
  const recorded = done.filter((d) => advanced.has(d.delivery.id));
  const disabled = await updateStreaks(db, organizationId, locked, recorded);
  for (const endpointId of disabled) await deliveriesQ.cancelPendingDeliveries(db, organizationId, endpointId);
  return recorded
    .filter((d) => d.nextRetryAt && !disabled.has(d.delivery.endpoint_id))
    .map((d) => ({ job: { ...d.job, attempt: d.job.attempt + 1 }, startAfter: d.nextRetryAt! }));
}

/**
 * Makes the attempts of a fetched batch of jobs and records them. Throws only when the database fails. Crosses
 * organizations: runs on the system handle (`app.db`), each query naming the organization of its jobs.
 */
export async function runDeliveryBatch(app: AppContext, jobs: DeliveryJob[]): Promise<void> {
  const { due, cancel } = await loadDue(app.db, jobs);
  const tuning = webhookTuning();
  const openSigner = batchSigners(); // each endpoint's secret opened once for the batch, not once per attempt
  const done = await mapConcurrently(due, BATCH_CONCURRENCY, async (item): Promise<Done> => {
    const outcome = await postEnvelope({
      url: item.delivery.url,
      sealedSecret: item.delivery.secret,
      eventId: item.delivery.event_id,
      body: item.delivery.body,
      timeoutMs: tuning.deliveryTimeoutMs,
      allowPrivate: app.config.webhookAllowPrivate,
      openSigner,
    });
    // 410 Gone asks us to stop: no retry, and the endpoint is disabled at once (as Svix does).
    const gone = outcome.statusCode === 410;
    const delay = outcome.success || gone || item.delivery.test ? null : retryDelayMs(item.job.attempt, tuning);
    return { ...item, outcome, gone, nextRetryAt: delay === null ? null : new Date(outcome.completedAt.getTime() + delay) };
  });
  if (!done.length && !cancel.length) return;
  const doneByOrg = Map.groupBy(done, (d) => d.job.organizationId);
  const cancelByOrg = Map.groupBy(cancel, (d) => d.job.organizationId);
  const organizations = [...new Set([...doneByOrg.keys(), ...cancelByOrg.keys()])].sort();
  if (!cancel.length && done.every((d) => d.outcome.success)) {
    // Successes only: each organization's one statement is the whole record (atomic alone, its locks its own).
    for (const organizationId of organizations) await recordOutcomes(app.db, organizationId, doneByOrg.get(organizationId)!, []);
    return;
  }
  await inTransaction(app.db, async (tx) => {
    const retries: Retry[] = [];
    for (const organizationId of organizations) {
      retries.push(
        ...(await recordOutcomes(tx, organizationId, doneByOrg.get(organizationId) ?? [], cancelByOrg.get(organizationId) ?? [])),
      );
    }
    if (!retries.length) return;
    if (!app.queue) throw new Error('webhook retries need the job queue');
    await enqueueAttempts(app.queue, tx, retries);
  });
}

/** One job on its own (tests; a job that runs again finds its attempt recorded and does nothing). */
export function runDeliveryJob(app: AppContext, job: DeliveryJob): Promise<void> {
  return runDeliveryBatch(app, [job]);
}

/**
 * POST …/test: sends `{test: true}` as event `type` (default `test`) to the endpoint now and records the attempt.
 * 404 when the organization has no such endpoint (or it was deleted meanwhile).
 */
export async function sendTestDelivery(
  tenant: Tenant,
  services: Services,
  endpointId: string,
  type: string = 'test',
): Promise<attemptsQ.WebhookAttemptRow> {
  const endpoint = found(await endpointsQ.getEndpoint(tenant.db, tenant.organizationId, endpointId), 'Webhook endpoint');
  const eventId = randomUUID();
  const outcome = await postEnvelope({
    url: endpoint.url,
    sealedSecret: endpoint.secret,
    eventId,
    body: envelopeBody(eventId, type, new Date(), { test: true }),
    timeoutMs: webhookTuning().testTimeoutMs,
    allowPrivate: services.config.webhookAllowPrivate,
  });
  try {
    const [row] = await attemptsQ.insertAttempts(tenant.db, tenant.organizationId, [
      {
        ...attemptFields(outcome),
        endpoint_id: endpoint.id,
        delivery_id: null,
        event_id: eventId,
        event_type: type,
        attempt: 1,
        test: true,
        url: endpoint.url,
        next_retry_at: null,
      },
    ]);
    return row!;
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound('Webhook endpoint'); // deleted meanwhile
    throw error;
  }
}

/** GET …/deliveries: a page of the endpoint's attempts, newest first. 404 when the organization has no such endpoint. */
export async function listDeliveries(tenant: Tenant, endpointId: string, page: PageRequest): Promise<Page<attemptsQ.WebhookAttemptRow>> {
  found(await endpointsQ.getEndpoint(tenant.db, tenant.organizationId, endpointId), 'Webhook endpoint');
  return attemptsQ.listAttempts(tenant.db, tenant.organizationId, endpointId, page);
}
