// Blasts section background jobs (src/domain/blasts/sending.ts): the scheduled start, one job per batch of
// recipients, and the advance job that follows a running blast to DISPATCHED and SENT.
import type { AdvanceJob, BatchJob, StartJob } from '../domain/blasts/sending.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const start: JobDefinition<StartJob> = {
  queue: QUEUES.blastStart,
  queueOptions: { retryLimit: 5, retryDelay: 2, retryBackoff: true },
  run: async (data, app) => (await import('../domain/blasts/sending.ts')).runScheduledStart(app, data),
};

const sendBatch: JobDefinition<BatchJob> = {
  queue: QUEUES.blastSendBatch,
  // A retry resumes the batch: recipients already accepted or skipped are not touched again.
  queueOptions: { retryLimit: 10, retryDelay: 2, retryBackoff: true },
  concurrency: 2,
  run: async (data, app) => (await import('../domain/blasts/sending.ts')).runBatch(app, data),
};

const advance: JobDefinition<AdvanceJob> = {
  queue: QUEUES.blastAdvance,
  queueOptions: { retryLimit: 10, retryDelay: 2 },
  run: async (data, app) => (await import('../domain/blasts/sending.ts')).runAdvance(app, data),
};

export const blastJobs: JobDefinition[] = [start as JobDefinition, sendBatch as JobDefinition, advance as JobDefinition];
