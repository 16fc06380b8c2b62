// Background jobs: recurring work is scheduled in the database (pg-boss cron), once however many workers run,
// and the idempotency purge removes keys past the 24-hour replay window.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../src/jobs/queue-names.ts';
import type { JobDefinition } from '../src/jobs/job-definition.ts';
import type { QueueName } from '../src/jobs/queue-names.ts';
import { createQueues, jobDefinitions, workOn } from '../src/jobs/workers.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

describe('scheduled jobs', () => {
  it('registers every schedule a job definition declares, the idempotency purge among them', async () => {
    const schedules = await srv.context.queue!.getSchedules();
    const declared = jobDefinitions.filter((d) => d.schedule).map((d) => ({ name: d.queue, cron: d.schedule!.cron }));
    expect(declared).toContainEqual({ name: QUEUES.idempotencyPurge, cron: expect.any(String) });
    for (const d of declared) expect(schedules).toContainEqual(expect.objectContaining(d));
  });

  it('a start rewrites only the schedules that differ from their declaration (createQueues)', async () => {
    const boss = srv.context.queue!;
    const updatedOn = async () => new Map((await boss.getSchedules()).map((s) => [s.name, s.updatedOn.getTime()]));
    const before = await updatedOn();
    await new Promise((r) => setTimeout(r, 10));
    await createQueues(boss); // as the next start does
    expect(await updatedOn()).toEqual(before);
    // A schedule that differs (a release changed its cron) is written back to what its definition declares.
    const purge = jobDefinitions.find((d) => d.queue === QUEUES.idempotencyPurge)!;
    await boss.schedule(purge.queue, '0 0 1 1 *', {}, { tz: 'UTC' });
    await createQueues(boss);
    const schedules = await boss.getSchedules();
    expect(schedules.find((s) => s.name === purge.queue)?.cron).toBe(purge.schedule!.cron);
    const after = await updatedOn();
    for (const [name, time] of before) if (name !== purge.queue) expect(after.get(name)).toBe(time);
  });

  it('every queue name is declared once in QUEUES', () => {
    const names = jobDefinitions.map((d) => d.queue);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(Object.values(QUEUES)).toContain(n);
  });

  it('the purge removes Idempotency-Key records older than 24 hours and keeps the others', async () => {
    const { organizationId } = await srv.newOrg('Purge org');
    const row = (key: string, hoursAgo: number) => ({
      organization_id: organizationId,
      key,
      operation_id: 'sendMessage',
      request_hash: 'x',
      response_status: 200,
      response_body: '{}',
      created_at: sql<Date>`now() - make_interval(hours => ${hoursAgo})`,
    });
    await srv.context.db
      .insertInto('idempotency_keys')
      .values([row('old', 25), row('fresh', 23)] as never)
      .execute();
    await srv.context.queue!.send(QUEUES.idempotencyPurge, {});
    const keysLeft = async () =>
      (await srv.context.db.selectFrom('idempotency_keys').select('key').where('organization_id', '=', organizationId).execute()).map(
        (r) => r.key,
      );
    const deadline = Date.now() + 15_000;
    while ((await keysLeft()).includes('old') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await keysLeft()).toEqual(['fresh']);
  });
});

describe('workers', () => {
  it('work through a backlog of one-at-a-time jobs back to back, not one fetch per poll interval', async () => {
    const boss = srv.context.queue!;
    const queue = 'test.backlog' as QueueName;
    await boss.createQueue(queue, { notify: true }); // as createQueues makes every queue
    const runs: Array<{ started: number; ended: number }> = [];
    const def: JobDefinition = {
      queue,
      run: async () => {
        const started = Date.now();
        await new Promise((r) => setTimeout(r, 20));
        runs.push({ started, ended: Date.now() });
      },
    };
    // Queued before the worker exists: no NOTIFY will announce them, only the backlog itself.
    await boss.insert(
      queue,
      Array.from({ length: 6 }, (_, i) => ({ data: { i } })),
    );
    await workOn(boss, def, srv.context);
    const deadline = Date.now() + 15_000;
    while (runs.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await boss.offWork(queue);
    expect(runs).toHaveLength(6);
    // Waiting for the poll (1 s with NOTIFY on) between jobs would leave gaps of about a second.
    const gaps = runs.slice(1).map((r, i) => r.started - runs[i]!.ended);
    expect(Math.max(...gaps)).toBeLessThan(500);
  });
});
