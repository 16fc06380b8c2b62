// Making and recording delivery attempts.
//
// runDeliveryBatch (the webhook-delivery worker) is at-least-once. The HTTP requests of a fetched batch are made
// concurrently, outside any transaction; then one transaction records every attempt, advances the deliveries,
// updates the endpoints' failure streaks (disabling where the rules say so) and queues the retries with pg-boss
// `startAfter`. If the worker dies between the requests and that commit, pg-boss runs the batch again and a
// receiver may see an event twice (same `webhook-id`, as documented); an attempt already recorded is never made
// again.
//
// sendTestDelivery (POST …/test): one synchronous attempt, recorded with `test: true`, never retried, and it does
// not touch the endpoint's state.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../app-context.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as q from '../../db/queries/webhooks.ts';
import type { WebhookDisabledReason } from '../../db/tables/webhooks.ts';
import { postEnvelope, type AttemptOutcome } from './deliver.ts';
import { envelopeBody } from './events.ts';
import { enqueueAttempts, type DeliveryJob } from './queue.ts';
import { retryDelayMs } from './retry-schedule.ts';
import { AUTO_DISABLE_AFTER, webhookTuning } from './tuning.ts';

/** How many requests of one batch are in flight at once. */
const BATCH_CONCURRENCY = 50;

type Due = { job: DeliveryJob; delivery: q.DeliveryForAttempt };
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
async function loadDue(db: Db, jobs: DeliveryJob[]): Promise<{ due: Due[]; cancel: Map<string, string[]> }> {
  const due: Due[] = [];
  const cancel = new Map<string, string[]>();
  for (const [organizationId, group] of Map.groupBy(jobs, (j) => j.organizationId)) {
    const rows = await q.deliveriesForAttempts(db, organizationId, group.map((j) => j.deliveryId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const job of group) {
      const delivery = byId.get(job.deliveryId);
      // Deleted endpoint (cascade), finished or cancelled delivery, or an attempt an earlier run already recorded.
      if (!delivery || delivery.status !== 'pending' || delivery.attempts !== job.attempt - 1) continue;
      if (delivery.is_active) due.push({ job, delivery });
      else cancel.set(organizationId, [...(cancel.get(organizationId) ?? []), delivery.id]);
    }
  }
  return { due, cancel };
}

/**
 * Applies successes (streak reset) and final failures (streak + 1; disable at AUTO_DISABLE_AFTER, or at once on
 * 410 Gone) in completion order. Test events do not count. Returns the endpoints disabled now.
 */
async function updateStreaks(tx: Db, organizationId: string, done: Done[]): Promise<Set<string>> {
  const counted = done.filter((d) => !d.delivery.test && (d.outcome.success || !d.nextRetryAt));
  const byEndpoint = Map.groupBy(counted, (d) => d.delivery.endpoint_id);
  const failing = [...byEndpoint].filter(([, items]) => items.some((i) => !i.outcome.success)).map(([id]) => id);
  await q.resetStreaks(tx, organizationId, [...byEndpoint.keys()].filter((id) => !failing.includes(id)));
  const disabled = new Set<string>();
  if (!failing.length) return disabled;
  for (const state of await q.lockEndpointStates(tx, organizationId, failing)) {
    const items = byEndpoint.get(state.id)!.sort((a, b) => a.outcome.completedAt.getTime() - b.outcome.completedAt.getTime());
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
    await q.setEndpointState(tx, organizationId, state.id, { consecutiveFailures: streak, disable });
    if (disable) disabled.add(state.id);
  }
  return disabled;
}

/** Records one organization's finished attempts; returns the retries to queue. */
async function recordOutcomes(tx: Db, organizationId: string, done: Done[]): Promise<Retry[]> {
  const advanced = await q.advanceDeliveries(
    tx,
    organizationId,
    done.map((d) => ({
      id: d.delivery.id,
      attempt: d.job.attempt,
      status: d.outcome.success ? 'succeeded' : d.nextRetryAt ? 'pending' : 'failed',
      nextAttemptAt: d.nextRetryAt,
    })),
  );
  const recorded = done.filter((d) => advanced.has(d.delivery.id));
  const disabled = await updateStreaks(tx, organizationId, recorded);
  for (const endpointId of disabled) await q.cancelPendingDeliveries(tx, organizationId, endpointId);
  const retries: Retry[] = [];
  const rows = recorded.map((d) => {
    const nextRetryAt = d.nextRetryAt && !disabled.has(d.delivery.endpoint_id) ? d.nextRetryAt : null;
    if (nextRetryAt) retries.push({ job: { ...d.job, attempt: d.job.attempt + 1 }, startAfter: nextRetryAt });
    return {
      ...attemptFields(d.outcome),
      endpoint_id: d.delivery.endpoint_id,
      delivery_id: d.delivery.id,
      event_id: d.delivery.event_id,
      event_type: d.delivery.event_type,
      attempt: d.job.attempt,
      test: d.delivery.test,
      url: d.delivery.url,
      next_retry_at: nextRetryAt,
    };
  });
  await q.insertAttempts(tx, organizationId, rows);
  return retries;
}

/** Makes the attempts of a fetched batch of jobs and records them. Throws only when the database fails. */
export async function runDeliveryBatch(app: AppContext, jobs: DeliveryJob[]): Promise<void> {
  const { due, cancel } = await loadDue(app.db, jobs);
  const tuning = webhookTuning();
  const done = await mapConcurrently(due, BATCH_CONCURRENCY, async (item): Promise<Done> => {
    const outcome = await postEnvelope({
      url: item.delivery.url,
      sealedSecret: item.delivery.secret,
      eventId: item.delivery.event_id,
      body: item.delivery.body,
      timeoutMs: tuning.deliveryTimeoutMs,
      allowPrivate: app.config.webhookAllowPrivate,
    });
    // 410 Gone asks us to stop: no retry, and the endpoint is disabled at once (as Svix does).
    const gone = outcome.statusCode === 410;
    const delay = outcome.success || gone || item.delivery.test ? null : retryDelayMs(item.job.attempt, tuning);
    return { ...item, outcome, gone, nextRetryAt: delay === null ? null : new Date(outcome.completedAt.getTime() + delay) };
  });
  if (!done.length && !cancel.size) return;
  await inTransaction(app.db, async (tx) => {
    for (const [organizationId, ids] of cancel) await q.cancelDeliveries(tx, organizationId, ids);
    const retries: Retry[] = [];
    for (const [organizationId, items] of Map.groupBy(done, (d) => d.job.organizationId)) {
      retries.push(...(await recordOutcomes(tx, organizationId, items)));
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

/** Sends `{test: true}` as event `type` to the endpoint now; undefined when the endpoint does not exist. */
export async function sendTestDelivery(app: AppContext, organizationId: string, endpointId: string, type: string): Promise<q.WebhookAttemptRow | undefined> {
  const endpoint = await q.getEndpoint(app.db, organizationId, endpointId);
  if (!endpoint) return undefined;
  const eventId = randomUUID();
  const outcome = await postEnvelope({
    url: endpoint.url,
    sealedSecret: endpoint.secret,
    eventId,
    body: envelopeBody(eventId, type, new Date(), { test: true }),
    timeoutMs: webhookTuning().testTimeoutMs,
    allowPrivate: app.config.webhookAllowPrivate,
  });
  try {
    const [row] = await q.insertAttempts(app.db, organizationId, [
      { ...attemptFields(outcome), endpoint_id: endpoint.id, delivery_id: null, event_id: eventId, event_type: type, attempt: 1, test: true, url: endpoint.url, next_retry_at: null },
    ]);
    return row;
  } catch (error) {
    if ((error as { code?: string }).code === '23503') return undefined; // the endpoint was deleted meanwhile
    throw error;
  }
}
