// Delivery jobs carrying several deliveries (issue 13): how emitEvents queues first attempts, and how the worker's
// batch runs them — each attempt made and recorded once however the jobs are split or run again, jobs queued
// before batching (one delivery each) still run, and each endpoint's secret signs only its own deliveries.
//
// No worker runs here: the test fetches the jobs from a pg-boss of its own (schema pgboss_webhook_batching_test)
// and hands them to the job definition as src/jobs/workers.ts would.
import { sql } from 'kysely';
import type { IncomingHttpHeaders } from 'node:http';
import type { PgBoss } from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emitEvents, type NewEvent } from '../src/domain/webhooks/events.ts';
import { DELIVERIES_PER_JOB, DELIVERY_QUEUE, type DeliveryJobData } from '../src/domain/webhooks/queue.ts';
import { tuneWebhooksForTests } from '../src/domain/webhooks/tuning.ts';
import { sealSecret } from '../src/lib/secrets.ts';
import { webhookJobs } from '../src/jobs/webhooks.ts';
import { call, type TestServer } from './support/server.ts';
import { startDeliveryHarness, type DeliveryHarness } from './support/webhook-harness.ts';

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
let harness: DeliveryHarness;
let base: string;
const received: Received[] = [];
let srv: TestServer;
let boss: PgBoss;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let restoreTuning: () => void;
let unique = 0;

const definition = webhookJobs.find((d) => d.queue === DELIVERY_QUEUE)!;

beforeAll(async () => {
  harness = await startDeliveryHarness('pgboss_webhook_batching_test', (req, body) =>
    received.push({ path: req.url ?? '/', headers: req.headers, body }),
  );
  ({ base, srv, boss } = harness);
}, 120_000);

afterAll(async () => {
  restoreTuning?.();
  await harness.close();
});

beforeEach(async () => {
  org = await srv.newOrg('Batching org');
  restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [60_000], jitter: 0, deliveryTimeoutMs: 2_000 });
});

async function endpoint(kind = 'ok'): Promise<{ id: string; secret: string; url: string; path: string }> {
  const path = `/${kind}/${++unique}`;
  const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key: org.apiKey.secret,
    body: { url: `${base}${path}`, events: ['message.delivered'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...res.body.data, path };
}

const delivered = (n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    organizationId: org.organizationId,
    type: 'message.delivered',
    data: { test: false, n: i } as never,
  }));

/** Every job of the queue that is due now, as the worker would get them. */
async function dueJobs(): Promise<Array<{ id: string; data: DeliveryJobData }>> {
  const jobs = await boss.fetch<DeliveryJobData>(DELIVERY_QUEUE, { batchSize: 1_000 });
  return jobs.map((j) => ({ id: j.id, data: j.data }));
}

const attemptRows = (endpointId: string) =>
  srv.context.db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('attempted_at')
    .execute();

describe('first attempts, several deliveries to a job', () => {
  it(`queues ${DELIVERIES_PER_JOB} deliveries of an organization to a job and makes each attempt once`, async () => {
    await dueJobs(); // nothing left over from another test
    const a = await endpoint();
    const b = await endpoint();
    expect(await emitEvents(srv.context.db, boss, delivered(12))).toEqual({ events: 12, deliveries: 24 });

    const jobs = await dueJobs();
    const sizes = jobs.map((j) => ('deliveryIds' in j.data ? j.data.deliveryIds.length : 1));
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(24);
    expect(sizes.every((n) => n <= DELIVERIES_PER_JOB)).toBe(true);
    expect(jobs).toHaveLength(Math.ceil(24 / DELIVERIES_PER_JOB));
    expect(jobs.every((j) => j.data.organizationId === org.organizationId && j.data.attempt === 1)).toBe(true);

    // The batch size bounds the attempts of one fetched batch (the expiry reasoning of src/jobs/webhooks.ts).
    expect(definition.batchSize! * DELIVERIES_PER_JOB).toBeLessThanOrEqual(500);

    await definition.runBatch!(jobs, srv.context);
    for (const ep of [a, b]) {
      expect(received.filter((r) => r.path === ep.path)).toHaveLength(12);
      const rows = await attemptRows(ep.id);
      expect(rows).toHaveLength(12);
      expect(rows.every((r) => r.success && r.attempt === 1 && r.url === ep.url && r.next_retry_at === null)).toBe(true);
      // Each request is signed with its own endpoint's secret.
      for (const req of received.filter((r) => r.path === ep.path))
        expect(() => new Webhook(ep.secret).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
    }

    // The same jobs run again (a worker died before completing them): nothing is sent or recorded twice.
    await definition.runBatch!(jobs, srv.context);
    for (const ep of [a, b]) {
      expect(received.filter((r) => r.path === ep.path)).toHaveLength(12);
      expect(await attemptRows(ep.id)).toHaveLength(12);
    }
  });

  it('runs a job queued before batching (one delivery) alongside a job carrying the same delivery, once', async () => {
    await dueJobs();
    const ep = await endpoint();
    await emitEvents(srv.context.db, boss, delivered(3));
    const [job] = await dueJobs();
    expect(job!.data).toMatchObject({ deliveryIds: expect.any(Array), attempt: 1 });
    const [first] = (job!.data as { deliveryIds: string[] }).deliveryIds;
    const legacy = { id: 'legacy', data: { organizationId: org.organizationId, deliveryId: first!, attempt: 1 } };
    await definition.runBatch!([legacy, job!], srv.context);
    expect(received.filter((r) => r.path === ep.path)).toHaveLength(3);
    expect(await attemptRows(ep.id)).toHaveLength(3);
  });

  it('queues a retry per failed delivery, at its own time', async () => {
    await dueJobs();
    const ep = await endpoint('fail');
    await emitEvents(srv.context.db, boss, delivered(3));
    await definition.runBatch!(await dueJobs(), srv.context);
    const rows = await attemptRows(ep.id);
    expect(rows.map((r) => [r.success, r.status_code, r.next_retry_at === null])).toEqual([
      [false, 500, false],
      [false, 500, false],
      [false, 500, false],
    ]);
    for (const r of rows) expect(r.next_retry_at!.getTime() - r.completed_at!.getTime()).toBe(60_000);
    const retries = await boss.findJobs<DeliveryJobData>(DELIVERY_QUEUE, { queued: true });
    const mine = retries.filter((j) => j.data.organizationId === org.organizationId);
    expect(mine).toHaveLength(3);
    expect(mine.every((j) => 'deliveryId' in j.data && j.data.attempt === 2)).toBe(true);
    const due = new Map(rows.map((r) => [r.delivery_id, r.next_retry_at!.getTime()]));
    for (const j of mine) expect(j.startAfter.getTime()).toBe(due.get((j.data as { deliveryId: string }).deliveryId));
  });

  it("signs each endpoint's deliveries with its own secret, and sends nothing for one whose secret cannot be opened", async () => {
    await dueJobs();
    const good = await endpoint();
    const sealedElsewhere = await endpoint();
    // Dated in the past: start-up checks the newest sealed secret against its key, and processes other files start
    // on this shared database must not find this one.
    const foreign = sealSecret(sealedElsewhere.secret, Buffer.alloc(32, 7));
    await sql`update webhook_endpoints set secret = ${foreign}, created_at = '2000-01-01Z' where id = ${sealedElsewhere.id}`.execute(
      srv.context.db,
    );
    await emitEvents(srv.context.db, boss, delivered(4));
    await definition.runBatch!(await dueJobs(), srv.context);

    const sent = received.filter((r) => r.path === good.path);
    expect(sent).toHaveLength(4);
    for (const req of sent) expect(() => new Webhook(good.secret).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
    expect((await attemptRows(good.id)).every((r) => r.success)).toBe(true);

    expect(received.filter((r) => r.path === sealedElsewhere.path)).toHaveLength(0);
    const refused = await attemptRows(sealedElsewhere.id);
    expect(refused).toHaveLength(4);
    for (const r of refused) {
      expect(r).toMatchObject({ success: false, status_code: null, duration_ms: null });
      expect(r.error).toMatch(/^signing secret unavailable: the secret cannot be decrypted with this key/);
    }
  });
});
