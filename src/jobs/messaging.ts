// Conversations section background jobs: dispatch to the provider, RCS delivery deadlines, the carrier simulator's callbacks, and the
// hourly purge of expired Idempotency-Key records.
import type { DispatchJob } from '../domain/messaging/dispatch.ts';
import type { RcsExpiryJob } from '../domain/messaging/rcs-expiry.ts';
import type { CallbackJob } from '../providers/simulator.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const dispatch: JobDefinition<DispatchJob> = {
  queue: QUEUES.messageDispatch,
  batchSize: 200,
  // Two batches in flight: one is with the provider while the next is claimed and recorded.
  concurrency: 2,
  // A worker that dies mid-batch stops heart-beating; pg-boss then hands the jobs to another worker, and the
  // provider's dedupe key keeps the repeat from reaching the handset.
  queueOptions: { retryLimit: 20, retryDelay: 1, retryBackoff: true, heartbeatSeconds: 10 },
  runBatch: async (jobs, app) => (await import('../domain/messaging/dispatch.ts')).dispatchBatch(app, jobs),
};

// An RCS message's delivery deadline (src/domain/messaging/rcs-expiry.ts): one job per hand-over batch, due then.
const rcsExpiry: JobDefinition<RcsExpiryJob> = {
  queue: QUEUES.messageRcsExpiry,
  // One hand-over batch (at most a claim's 500 messages) at a time: its revokes go to the carrier together.
  batchSize: 1,
  // A revoke the provider could not answer is asked again (what was settled is skipped on the retry).
  queueOptions: { retryLimit: 10, retryDelay: 5, retryBackoff: true, heartbeatSeconds: 30 },
  runBatch: async (jobs, app) => (await import('../domain/messaging/rcs-expiry.ts')).expireRcsMessages(app, jobs),
};

const simulatorCallbacks: JobDefinition<CallbackJob> = {
  queue: QUEUES.simulatorCallback,
  batchSize: 50,
  // As dispatch: a killed worker's callbacks are retried after the heartbeat, not after pg-boss's 15-minute expiry.
  queueOptions: { retryLimit: 10, retryDelay: 1, retryBackoff: true, heartbeatSeconds: 10 },
  runBatch: async (jobs, app) => {
    const { CarrierSimulator, deliverSimulatorCallbacks } = await import('../providers/simulator.ts');
    const simulator = app.providers.sandbox('PROVIDER_A');
    if (!(simulator instanceof CarrierSimulator)) throw new Error('the sandbox is no carrier simulator');
    const base = simulator.callbackBaseUrl;
    if (!base) throw new Error('no callback base URL: the simulator cannot reach the service yet');
    await deliverSimulatorCallbacks(
      app.db,
      base,
      jobs.map((job) => job.data),
    );
  },
};

const idempotencyPurge: JobDefinition = {
  queue: QUEUES.idempotencyPurge,
  // Hourly: a key is kept for the 24-hour replay window and gone within the hour after it.
  schedule: { cron: '17 * * * *' },
  run: async (_data, app) => {
    const { purgeExpiredIdempotencyKeys } = await import('../domain/idempotency.ts');
    await purgeExpiredIdempotencyKeys(app.db);
  },
};

export const conversationJobs: JobDefinition[] = [dispatch, rcsExpiry, simulatorCallbacks, idempotencyPurge] as JobDefinition[];
