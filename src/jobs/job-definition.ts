// What a section declares for each kind of background work (src/jobs/<section>.ts); src/jobs/workers.ts
// registers them all. A section's file imports the domain only inside run/runBatch (`await import(...)`, types
// aside): the workers are registered at start without loading the work they do.
import type { AppContext } from '../app-context.ts';
import type { QueueName } from './queue-names.ts';

export type JobDefinition<T extends object = object> = {
  queue: QueueName;
  /** Runs one job; throwing makes pg-boss retry it per the queue's policy. */
  run?: (data: T, app: AppContext, job: { id: string }) => Promise<void>;
  /** Runs a whole fetched batch at once (set-based work); throwing retries the batch. */
  runBatch?: (jobs: Array<{ id: string; data: T }>, app: AppContext) => Promise<void>;
  queueOptions?: { retryLimit?: number; retryDelay?: number; retryBackoff?: boolean; expireInSeconds?: number; heartbeatSeconds?: number };
  /** Jobs fetched per poll; each is run in turn. */
  batchSize?: number;
  /** Batches this process works on at once. */
  concurrency?: number;
  /**
   * A recurring job: pg-boss cron (UTC), kept in the database, so however many processes run workers it is
   * queued once per tick.
   */
  schedule?: { cron: string; data?: T };
};
