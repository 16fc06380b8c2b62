// How the delivery worker records a batch (issue 13): one statement locks the endpoints, advances the deliveries and
// inserts the attempts; a batch of successes needs nothing else (no transaction), while failures, disabling and
// retries follow under the same locks. These tests hold the rules that split must not bend: the endpoints are locked
// before any delivery in the one statement too, and a batch that disables its endpoint queues none of the retries
// its other failures asked for and leaves none announced in the attempt log.
//
// No worker runs here: the test hands jobs to the job definition as src/jobs/workers.ts would, on a pg-boss of its
// own (schema pgboss_webhook_record_test).
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emitEvents, type NewEvent } from '../src/domain/webhooks/events.ts';
import { DELIVERY_QUEUE, type DeliveryJobData } from '../src/domain/webhooks/queue.ts';
import { tuneWebhooksForTests } from '../src/domain/webhooks/tuning.ts';
import { webhookJobs } from '../src/jobs/webhooks.ts';
import { call, type TestServer } from './support/server.ts';
import { untilWaitingOnLock } from './support/wait.ts';
import { startDeliveryHarness, type DeliveryHarness } from './support/webhook-harness.ts';

let harness: DeliveryHarness;
let base: string;
let srv: TestServer;
let boss: PgBoss;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let restoreTuning: () => void;
let unique = 0;

const definition = webhookJobs.find((d) => d.queue === DELIVERY_QUEUE)!;

beforeAll(async () => {
  harness = await startDeliveryHarness('pgboss_webhook_record_test');
  ({ base, srv, boss } = harness);
}, 120_000);

afterAll(async () => {
  restoreTuning?.();
  await harness.close();
});

beforeEach(async () => {
  org = await srv.newOrg('Record org');
  restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [60_000], jitter: 0, deliveryTimeoutMs: 2_000 });
});

async function endpoint(kind: 'ok' | 'fail'): Promise<{ id: string }> {
  const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key: org.apiKey.secret,
    body: { url: `${base}/${kind}/${++unique}`, events: ['message.delivered'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const delivered = (n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    organizationId: org.organizationId,
    type: 'message.delivered',
    data: { test: false, n: i } as never,
  }));

/** The endpoint's deliveries (oldest first), their first-attempt jobs taken off the queue: each test runs its own. */
async function emitTo(endpointId: string, n: number): Promise<string[]> {
  await emitEvents(srv.context.db, boss, delivered(n));
  await boss.fetch(DELIVERY_QUEUE, { batchSize: 1_000 });
  const rows = await srv.context.db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

const job = (deliveryId: string, attempt: number) => ({
  id: `${deliveryId}#${attempt}`,
  data: { organizationId: org.organizationId, deliveryId, attempt } as DeliveryJobData,
});
const delivery = (id: string) => srv.context.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (deliveryId: string) =>
  srv.context.db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
const endpointRow = (id: string) =>
  srv.context.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('recording a batch', () => {
  it('disables the endpoint at its tenth final failure and cancels the retry another attempt of the batch asked for', async () => {
    const ep = await endpoint('fail');
    const [a, b] = await emitTo(ep.id, 2);
    await definition.runBatch!([job(a!, 1)], srv.context); // fails, retry due in a minute
    await srv.context.db.updateTable('webhook_endpoints').set({ consecutive_failures: 9 }).where('id', '=', ep.id).execute();

    // a's last attempt fails for good (the tenth in a row); b's first fails and would be retried.
    await definition.runBatch!([job(a!, 2), job(b!, 1)], srv.context);
    expect(await endpointRow(ep.id)).toMatchObject({ is_active: false, disabled_reason: 'consecutive_failures', consecutive_failures: 10 });
    expect(await delivery(a!)).toMatchObject({ status: 'failed', attempts: 2, next_attempt_at: null });
    expect(await delivery(b!)).toMatchObject({ status: 'cancelled', attempts: 1, next_attempt_at: null });
    expect((await attemptsOf(a!)).map((r) => [r.attempt, r.success])).toEqual([
      [1, false],
      [2, false],
    ]);
    expect((await attemptsOf(a!))[1]!.next_retry_at).toBeNull();
    expect(await attemptsOf(b!)).toMatchObject([{ attempt: 1, success: false, status_code: 500, next_retry_at: null }]);
    const queued = await boss.findJobs<DeliveryJobData>(DELIVERY_QUEUE, { queued: true });
    expect(queued.filter((j) => 'deliveryId' in j.data && j.data.deliveryId === b)).toHaveLength(0);
  });

  it('resets a failure streak with a batch of successes, and records nothing twice when the batch runs again', async () => {
    const ep = await endpoint('ok');
    const ids = await emitTo(ep.id, 3);
    await srv.context.db.updateTable('webhook_endpoints').set({ consecutive_failures: 4 }).where('id', '=', ep.id).execute();
    const jobs = ids.map((id) => job(id, 1));
    await definition.runBatch!(jobs, srv.context);
    expect(await endpointRow(ep.id)).toMatchObject({ is_active: true, consecutive_failures: 0 });
    for (const id of ids) {
      expect(await delivery(id)).toMatchObject({ status: 'succeeded', attempts: 1, next_attempt_at: null });
      expect(await attemptsOf(id)).toMatchObject([{ attempt: 1, success: true, status_code: 204, next_retry_at: null }]);
    }
    await definition.runBatch!(jobs, srv.context);
    for (const id of ids) expect(await attemptsOf(id)).toHaveLength(1);
  });

  it('locks the endpoint before any delivery when a batch of successes records in one statement', async () => {
    const ep = await endpoint('ok');
    const ids = await emitTo(ep.id, 2);
    let outcome: unknown;
    // Another recording (or a PATCH) holds the endpoint and then takes its deliveries, as the lock order allows.
    await srv.context.db.transaction().execute(async (tx) => {
      await sql`select id from webhook_endpoints where id = ${ep.id} for no key update`.execute(tx);
      const batch = definition.runBatch!(
        ids.map((id) => job(id, 1)),
        srv.context,
      ).then(
        () => 'recorded',
        (error: unknown) => error,
      );
      await untilWaitingOnLock(srv.context.db, '%webhook_endpoints%', 'the batch to wait for the held endpoint');
      await sql`set local lock_timeout = '5s'`.execute(tx);
      await sql`select id from webhook_deliveries where id = any(${ids}::uuid[]) for update`.execute(tx);
      outcome = batch;
    });
    expect(await outcome).toBe('recorded');
    for (const id of ids) expect(await attemptsOf(id)).toMatchObject([{ attempt: 1, success: true }]);
  });
});
