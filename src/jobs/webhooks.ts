// Webhooks section background jobs: one job per delivery attempt (first tries and retries, the latter queued
// with `startAfter`). HTTP failures are handled by the job itself (recorded, retried on the documented
// schedule), so a job throws only when the database fails; pg-boss then runs the batch again, and attempts
// already recorded are not made twice.
import { runDeliveryBatch } from '../domain/webhooks/attempts.ts';
import { DELIVERY_QUEUE, type DeliveryJob } from '../domain/webhooks/queue.ts';
import type { JobDefinition } from './job-definition.ts';

const delivery: JobDefinition<DeliveryJob> = {
  queue: DELIVERY_QUEUE,
  // The jobs of a batch are delivered 50 at a time (one slow receiver does not hold up the others) and recorded
  // in one transaction. Workers poll every 0.5 s, so the batch size bounds the rate (500 per poll); even if every
  // attempt of a batch timed out (10 waves of 10 s) it ends well before pg-boss's expiry.
  batchSize: 500,
  // Two batches in flight per process: one makes its requests while the other records its attempts (the record
  // transactions lock endpoints in one order, so they only queue behind each other, never deadlock).
  concurrency: 2,
  queueOptions: { retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 300 },
  runBatch: (jobs, app) => runDeliveryBatch(app, jobs.map((j) => j.data)),
};

export const webhookJobs: JobDefinition[] = [delivery as JobDefinition];
