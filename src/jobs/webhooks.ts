// Webhooks section background jobs: the daily purge of history past its retention (src/domain/webhooks/retention.ts),
// and the attempts of deliveries (first tries, several deliveries to a job, and
// retries, one delivery to a job queued with `startAfter`; src/domain/webhooks/queue.ts). HTTP failures are handled
// by the job itself (recorded, retried on the documented schedule), so a job throws only when the database fails;
// pg-boss then runs the batch again, and attempts already recorded are not made twice.
// The queue's constants only (a light module: queries and the job insert); the delivery's work is imported on its first job.
import { DELIVERIES_PER_JOB, attemptsOf, type DeliveryJobData } from '../domain/webhooks/queue.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const delivery: JobDefinition<DeliveryJobData> = {
  queue: QUEUES.webhookDelivery,
  // A fetched batch holds at most 50 jobs × DELIVERIES_PER_JOB (10) = 500 attempts. They are made 50 at a time
  // (one slow receiver does not hold up the others) and recorded in one transaction. Even if every attempt of a
  // batch timed out (10 waves of 10 s) it ends well before pg-boss's expiry. A full batch is followed by the next
  // fetch at once (a full fetch wakes its worker again: src/jobs/workers.ts); new jobs wake the workers by NOTIFY (src/jobs/queue.ts).
  batchSize: 500 / DELIVERIES_PER_JOB,
  // Two batches in flight per process: one makes its requests while the other records its attempts (the record
  // transactions lock endpoints in one order, so they only queue behind each other, never deadlock).
  concurrency: 2,
  // A worker killed mid-batch stops heart-beating: its jobs fail after heartbeatSeconds and are retried (attempts
  // already recorded are not made again), instead of waiting out expireInSeconds. A live worker refreshes the
  // heartbeat while its requests run, so a batch of slow receivers still has the whole expiry.
  queueOptions: { retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 300, heartbeatSeconds: 10 },
  runBatch: async (jobs, app) =>
    (await import('../domain/webhooks/attempts.ts')).runDeliveryBatch(app, attemptsOf(jobs.map((j) => j.data))),
};

const historyPurge: JobDefinition = {
  queue: QUEUES.webhookPurge,
  // Daily: an event's history is kept WEBHOOK_RETENTION_DAYS (30) and gone within the day after.
  schedule: { cron: '23 4 * * *' },
  run: async (_data, app) => {
    const { purgeExpiredWebhookHistory } = await import('../domain/webhooks/retention.ts');
    const purged = await purgeExpiredWebhookHistory(app.db);
    if (purged.events || purged.testAttempts) app.log.info(purged, 'webhook history past its retention purged');
  },
};

export const webhookJobs: JobDefinition[] = [delivery as JobDefinition, historyPurge];
