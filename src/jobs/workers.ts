// Background work is declared per section (src/jobs/<section>.ts) and registered here. A worker gets the
// same AppContext as a request handler. Queues are created on start (idempotent).
import type { AppContext } from '../app-context.ts';
import type { JobQueue } from './queue.ts';
import { contactJobs } from './contacts.ts';
import { complianceJobs } from './compliance.ts';
import { webhookJobs } from './webhooks.ts';

export type JobDefinition<T extends object = object> = {
  queue: string;
  /** Runs one job; throwing makes pg-boss retry it per the queue's policy. */
  run: (data: T, app: AppContext, job: { id: string }) => Promise<void>;
  queueOptions?: { retryLimit?: number; retryDelay?: number; retryBackoff?: boolean; expireInSeconds?: number };
  /** Jobs fetched per poll; each is run in turn. */
  batchSize?: number;
};

export const jobDefinitions: JobDefinition[] = [...contactJobs, ...complianceJobs, ...webhookJobs] as JobDefinition[];

export async function createQueues(boss: JobQueue): Promise<void> {
  for (const def of jobDefinitions) await boss.createQueue(def.queue, { notify: true, ...def.queueOptions });
}

export async function startWorkers(boss: JobQueue, app: AppContext): Promise<void> {
  for (const def of jobDefinitions) {
    await boss.work<object>(def.queue, { batchSize: def.batchSize ?? 1, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      for (const job of jobs) await def.run(job.data, app, { id: job.id });
    });
  }
}
