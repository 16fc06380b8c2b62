// Background work is declared per section (src/jobs/<section>.ts) and registered here. A worker gets the
// same AppContext as a request handler. Queues and schedules are created on start (idempotent).
import type { AppContext } from '../app-context.ts';
import type { JobDefinition } from './job-definition.ts';
import type { JobQueue } from './queue.ts';
import { contactJobs } from './contacts.ts';
import { complianceJobs } from './compliance.ts';
import { webhookJobs } from './webhooks.ts';
import { conversationJobs } from './conversations.ts';
import { submissionJobs } from './submissions.ts';
import { assetJobs } from './assets.ts';
import { blastJobs } from './blasts.ts';
import { analyticsJobs } from './analytics.ts';

export const jobDefinitions: JobDefinition[] = [...contactJobs, ...complianceJobs, ...webhookJobs, ...conversationJobs, ...submissionJobs, ...assetJobs, ...blastJobs, ...analyticsJobs] as JobDefinition[];

export async function createQueues(boss: JobQueue): Promise<void> {
  for (const def of jobDefinitions) {
    await boss.createQueue(def.queue, { notify: true, ...def.queueOptions });
    // Idempotent (an upsert by queue name); pg-boss queues the job on each tick in the processes that run workers.
    if (def.schedule) await boss.schedule(def.queue, def.schedule.cron, def.schedule.data ?? {}, { tz: 'UTC' });
  }
}

export async function startWorkers(boss: JobQueue, app: AppContext): Promise<void> {
  for (const def of jobDefinitions) {
    const batchSize = def.batchSize ?? 1;
    const polling = {
      batchSize,
      pollingIntervalSeconds: 0.5,
      // NOTIFY wakes workers for new jobs, but not for jobs scheduled for later (retries, held messages,
      // delayed receipts): poll every second as the backstop instead of pg-boss's 30 s default.
      notifyPollingIntervalSeconds: 1,
      // With a backlog, fetch the next batch at once instead of waiting for a poll: also for one job at a time
      // (a blast's 200 batch jobs, queued together, otherwise ran one per worker per poll interval).
      burstWhenBatchFull: true,
      ...(def.concurrency ? { localConcurrency: def.concurrency } : {}),
    };
    await boss.work<object>(def.queue, polling, async (jobs) => {
      if (def.runBatch) return def.runBatch(jobs.map((j) => ({ id: j.id, data: j.data })), app);
      for (const job of jobs) await def.run!(job.data, app, { id: job.id });
    });
  }
}
