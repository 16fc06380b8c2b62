// A worker killed mid-job (kill -9, a lost machine) leaves its jobs `active`. With a heartbeat on the queue, pg-boss's
// supervisor fails them once their heartbeat is stale and they are retried; without one they wait out the queue's
// expiry (5 minutes for webhook deliveries, 15 for imports and the simulator's callbacks). The queues are created
// by src/jobs/workers.ts createQueues, which also brings a queue created by an older version to today's options.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startQueue, stopQueue, type JobQueue } from '../src/jobs/queue.ts';
import { QUEUES } from '../src/jobs/queue-names.ts';
import { createQueues, jobDefinitions } from '../src/jobs/workers.ts';
import { until } from './support/wait.ts';

let boss: JobQueue;
beforeAll(async () => {
  // A schema of its own; the supervisor looks for stale heartbeats every second.
  boss = await startQueue(inject('databaseUrl'), {
    workers: true,
    superviseSeconds: 1,
    schema: `pgboss_t${randomBytes(4).toString('hex')}`,
  });
});
afterAll(async () => {
  await stopQueue(boss);
});

const optionsOf = (queue: string) => jobDefinitions.find((d) => d.queue === queue)!.queueOptions!;
const watched = [QUEUES.webhookDelivery, QUEUES.simulatorCallback, QUEUES.contactImport];

describe('queue heartbeats', () => {
  it('a queue created before its heartbeat was defined gets it when the queues are created again', async () => {
    // As an older version created them: the same options without heartbeatSeconds.
    for (const queue of watched) {
      const { heartbeatSeconds: _h, ...older } = optionsOf(queue);
      await boss.createQueue(queue, { notify: true, ...older });
      expect((await boss.getQueue(queue))!.heartbeatSeconds ?? null).toBeNull();
    }
    await createQueues(boss);
    for (const queue of watched) {
      const stored = (await boss.getQueue(queue))!;
      expect(stored.heartbeatSeconds, queue).toBe(optionsOf(queue).heartbeatSeconds);
      expect(stored.heartbeatSeconds, queue).toBeGreaterThanOrEqual(10);
    }
    // A second start changes nothing and fails on nothing.
    await createQueues(boss);
    expect((await boss.getQueue(QUEUES.messageDispatch))!.heartbeatSeconds).toBe(optionsOf(QUEUES.messageDispatch).heartbeatSeconds);
  });

  it("a job whose worker died is retried once its heartbeat is stale, long before the queue's expiry", { timeout: 90_000 }, async () => {
    await createQueues(boss);
    const claimed = await Promise.all(
      watched.map(async (queue) => {
        const id = (await boss.send(queue, { probe: true }))!;
        // Claimed as a worker claims it, and never touched again: the worker that fetched it is dead.
        const [job] = await boss.fetch(queue);
        expect(job?.id).toBe(id);
        return { queue, id, at: Date.now() };
      }),
    );
    await Promise.all(
      claimed.map(async ({ queue, id, at }) => {
        const { heartbeatSeconds, expireInSeconds = 15 * 60 } = optionsOf(queue);
        const job = await until(
          () => boss.getJobById<object>(queue, id),
          (j) => j?.state !== 'active',
          `${queue}'s dead job to leave active`,
          (heartbeatSeconds! + 20) * 1000,
        );
        const waited = (Date.now() - at) / 1000;
        expect(job!.state, queue).toBe('retry');
        expect(job!.output, queue).toMatchObject({ value: { message: 'job heartbeat timeout' } });
        expect(waited, queue).toBeLessThan(heartbeatSeconds! + 20);
        expect(waited, queue).toBeLessThan(expireInSeconds / 4);
      }),
    );
  });
});
