// Background work is declared per section (src/jobs/<section>.ts) and registered here. A worker gets the
// same AppContext as a request handler. Queues and schedules are created on start (idempotent). A declaration holds
// only what registering needs (queue, options, schedule); its run imports the domain module that does the work on
// its first job, so starting the workers loads none of them (issue 38: start-up to the first /health).
import { isDeepStrictEqual } from 'node:util';
import type { AppContext } from '../app-context.ts';
import type { JobDefinition } from './job-definition.ts';
import type { JobQueue } from './queue.ts';
import { contactJobs } from './contacts.ts';
import { complianceJobs } from './compliance.ts';
import { webhookJobs } from './webhooks.ts';
import { conversationJobs } from './messaging.ts';
import { submissionJobs } from './submissions.ts';
import { assetJobs } from './assets.ts';
import { blastJobs } from './blasts.ts';
import { analyticsJobs } from './analytics.ts';
import { acquisitionJobs } from './acquisition.ts';
import { billingJobs } from './billing.ts';

export const jobDefinitions: JobDefinition[] = [
  ...contactJobs,
  ...complianceJobs,
  ...webhookJobs,
  ...conversationJobs,
  ...submissionJobs,
  ...assetJobs,
  ...blastJobs,
  ...analyticsJobs,
  ...acquisitionJobs,
  ...billingJobs,
] as JobDefinition[];

/**
 * Creates the queues, and brings an existing queue's options to what its definition says now: pg-boss's createQueue
 * leaves a queue that exists untouched (ON CONFLICT DO NOTHING), so an option added later (a heartbeat) never reached
 * a database whose queue was created before it. One read of every queue and one of every schedule; a statement only
 * for a queue or schedule missing or differing.
 */
export async function createQueues(boss: JobQueue): Promise<void> {
  const [queues, schedules] = await Promise.all([boss.getQueues(), boss.getSchedules()]);
  const existing = new Map(queues.map((q) => [q.name, q as unknown as Record<string, unknown>]));
  // Schedules the same way: written only when missing or differing. Upserting each one at every start cost one
  // statement per schedule (7) on pg-boss's 4 connections, 120-200 ms of the start-up's wall time at a load of 8
  // (issue 38, bench part a), and moved each row's updated_on, which is meant to track edits to the definition.
  const stored = new Map(schedules.filter((s) => (s.key ?? '') === '').map((s) => [s.name, s]));
  const create = async (def: JobDefinition) => {
    const options = { notify: true, ...def.queueOptions };
    const queue = existing.get(def.queue);
    if (!queue) await boss.createQueue(def.queue, options);
    else if (Object.entries(options).some(([key, value]) => queue[key] !== value)) await boss.updateQueue(def.queue, options);
    // pg-boss queues the job on each tick in the processes that run workers.
    if (def.schedule) {
      const [data, scheduleOptions] = [def.schedule.data ?? {}, { tz: 'UTC' }];
      const row = stored.get(def.queue);
      const same =
        row?.cron === def.schedule.cron &&
        row.timezone === scheduleOptions.tz &&
        isDeepStrictEqual(row.data ?? {}, data) &&
        isDeepStrictEqual(row.options ?? {}, scheduleOptions);
      if (!same) await boss.schedule(def.queue, def.schedule.cron, data, scheduleOptions);
    }
  };
  // Queues are created at once on pg-boss's connections, not one round trip after another at every start (issue
  // 38, bench part a); pg-boss serialises its own DDL with an advisory lock. A queue that names a dead-letter queue
  // needs that one to exist first, so those come after the others, in order.
  const later = (def: JobDefinition) => Boolean((def.queueOptions as { deadLetter?: string } | undefined)?.deadLetter);
  await Promise.all(jobDefinitions.filter((def) => !later(def)).map(create));
  for (const def of jobDefinitions.filter(later)) await create(def);
}

export async function startWorkers(boss: JobQueue, app: AppContext): Promise<void> {
  for (const def of jobDefinitions) await workOn(boss, def, app);
}

/** Registers the workers of one job definition: `concurrency` of them, each fetching `batchSize` jobs at a time. */
export async function workOn(boss: JobQueue, def: JobDefinition, app: AppContext): Promise<void> {
  const batchSize = def.batchSize ?? 1;
  const polling = {
    batchSize,
    pollingIntervalSeconds: 0.5,
    // NOTIFY wakes workers for new jobs, but not for jobs scheduled for later (retries, held messages,
    // delayed receipts): poll every second as the backstop instead of pg-boss's 30 s default.
    notifyPollingIntervalSeconds: 1,
  };
  // One worker per unit of concurrency, each knowing its own id: after a full fetch it wakes itself to fetch again
  // at once, so a backlog is worked through back to back instead of one fetch per poll interval. pg-boss's own
  // burstWhenBatchFull ignores a batch size of 1: a blast's 200 batch jobs, queued together, ran two a second (one
  // per worker per second), which alone set a 1,000,000-recipient blast's pace.
  for (let i = 0; i < (def.concurrency ?? 1); i++) {
    let workerId: string | undefined;
    workerId = await boss.work<object>(def.queue, polling, async (jobs) => {
      if (def.runBatch)
        await def.runBatch(
          jobs.map((j) => ({ id: j.id, data: j.data })),
          app,
        );
      else for (const job of jobs) await def.run!(job.data, app, { id: job.id });
      // Ended by the first short fetch: a queue that has run dry waits for its poll (or a NOTIFY) again.
      if (jobs.length >= batchSize && workerId) boss.notifyWorker(workerId);
    });
  }
}
