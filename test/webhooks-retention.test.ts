// The webhook history's retention (src/domain/webhooks/retention.ts, documented on listWebhookDeliveries): the
// daily purge removes an event with its deliveries and their attempts 30 days after the event was raised, and a
// test attempt 30 days after it was made; younger history, and other organizations', stays.
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { emitEvents, type NewEvent } from '../src/domain/webhooks/events.ts';
import { DELIVERY_QUEUE, type DeliveryJobData } from '../src/domain/webhooks/queue.ts';
import { WEBHOOK_RETENTION_DAYS } from '../src/domain/webhooks/retention.ts';
import { QUEUES } from '../src/jobs/queue-names.ts';
import { webhookJobs } from '../src/jobs/webhooks.ts';
import { call, type TestServer } from './support/server.ts';
import { startDeliveryHarness, type DeliveryHarness } from './support/webhook-harness.ts';

let harness: DeliveryHarness;
let srv: TestServer;
let boss: PgBoss;

beforeAll(async () => {
  harness = await startDeliveryHarness('pgboss_webhook_retention_test');
  ({ srv, boss } = harness);
}, 120_000);
afterAll(() => harness.close());

const job = (queue: string) => webhookJobs.find((d) => d.queue === queue)!;

/** An organization with an endpoint, `n` events delivered to it (one attempt each) and one test delivery. */
async function withHistory(name: string, n: number) {
  const org = await srv.newOrg(name);
  const key = org.apiKey.secret;
  const created = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${harness.base}/ok/${name.replaceAll(' ', '-')}`, events: ['message.delivered'] },
  });
  expect(created.status, created.text).toBe(201);
  const endpointId: string = created.body.data.id;
  const events: NewEvent[] = Array.from({ length: n }, (_, i) => ({
    organizationId: org.organizationId,
    type: 'message.delivered',
    data: { n: i } as never,
  }));
  await emitEvents(srv.context.db, boss, events);
  const jobs = await boss.fetch<DeliveryJobData>(DELIVERY_QUEUE, { batchSize: 1_000 });
  await job(DELIVERY_QUEUE).runBatch!(
    jobs.filter((j) => j.data.organizationId === org.organizationId),
    srv.context,
  );
  expect((await call(srv, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key, body: {} })).status).toBe(200);
  const attempts = async () =>
    (await call(srv, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`, { key })).body.data as Array<{
      eventId: string;
      test: boolean;
    }>;
  return { org, endpointId, attempts };
}

const count = async (table: 'webhook_events' | 'webhook_deliveries' | 'webhook_delivery_attempts', orgId: string) =>
  Number(
    (await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where organization_id = ${orgId}`.execute(srv.context.db))
      .rows[0]!.n,
  );

it('removes an event, its deliveries and their attempts 30 days after it was raised, a test attempt 30 days after it was made', async () => {
  const aged = await withHistory('Retention aged org', 3);
  const other = await withHistory('Retention other org', 2);
  expect(await aged.attempts()).toHaveLength(4); // three deliveries and the test
  const [oldEvent, ...youngEvents] = (
    await sql<{ id: string }>`select id from webhook_events where organization_id = ${aged.org.organizationId} order by id`.execute(
      srv.context.db,
    )
  ).rows.map((r) => r.id);

  // One event just past the retention, another just inside it; the test attempt past it.
  const daysAgo = (days: number) => sql<Date>`now() - make_interval(days => ${days})`;
  await srv.context.db
    .updateTable('webhook_events')
    .set({ created_at: daysAgo(WEBHOOK_RETENTION_DAYS + 1) })
    .where('id', '=', oldEvent!)
    .execute();
  await srv.context.db
    .updateTable('webhook_events')
    .set({ created_at: daysAgo(WEBHOOK_RETENTION_DAYS - 1) })
    .where('id', '=', youngEvents[0]!)
    .execute();
  await srv.context.db
    .updateTable('webhook_delivery_attempts')
    .set({ attempted_at: daysAgo(WEBHOOK_RETENTION_DAYS + 1) })
    .where('organization_id', '=', aged.org.organizationId)
    .where('delivery_id', 'is', null)
    .execute();

  await job(QUEUES.webhookPurge).run!({}, srv.context, { id: 'purge' });

  const left = await aged.attempts();
  expect(left.map((a) => a.eventId).sort()).toEqual([...youngEvents].sort());
  expect(left.some((a) => a.test)).toBe(false);
  expect(await count('webhook_events', aged.org.organizationId)).toBe(2);
  expect(await count('webhook_deliveries', aged.org.organizationId)).toBe(2);
  expect(await count('webhook_delivery_attempts', aged.org.organizationId)).toBe(2);
  // Another organization's history, all of it young, is untouched.
  expect(await other.attempts()).toHaveLength(3);
});

it("finds an endpoint's deliveries and attempts by index, as deleting the endpoint does (its cascade), not by reading every organization's", async () => {
  const { org, endpointId } = await withHistory('Retention plan org', 1);
  // The attempts refer to their endpoint by (organization_id, endpoint_id) (migration 0039), so the cascade's lookup
  // starts with the organization, a prefix of webhook_attempts_endpoint_idx on every PostgreSQL version (by
  // endpoint_id alone, only PostgreSQL 18's skip scan could use it; 13–17 read the table).
  const { rows: keys } = await sql<{ def: string }>`
    select pg_get_constraintdef(oid) as def from pg_constraint
    where conrelid = 'webhook_delivery_attempts'::regclass and confrelid = 'webhook_endpoints'::regclass`.execute(srv.context.db);
  expect(keys.map((k) => k.def)).toEqual([
    'FOREIGN KEY (organization_id, endpoint_id) REFERENCES webhook_endpoints(organization_id, id) ON DELETE CASCADE',
  ]);
  // The statements the cascades run (ri_triggers: `delete from only <table> where <key columns> = …`), planned with
  // sequential scans priced out: a plan that still reads the table has no index that can answer them.
  const cascades = [
    { table: 'webhook_deliveries', where: sql`endpoint_id = ${endpointId}` },
    { table: 'webhook_delivery_attempts', where: sql`organization_id = ${org.organizationId} and endpoint_id = ${endpointId}` },
  ];
  for (const { table, where } of cascades) {
    const plan = await srv.context.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain delete from only ${sql.table(table)} where ${where}`.execute(tx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan, table).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
    expect(plan, table).not.toMatch(/Seq Scan/);
  }
});

it("refuses an attempt that names another organization's endpoint", async () => {
  const mine = await withHistory('Attempt key org', 1);
  const theirs = await withHistory('Attempt key other org', 1);
  const insert = sql`
    insert into webhook_delivery_attempts (organization_id, endpoint_id, event_id, event_type, attempt, test, url, success, attempted_at)
    values (${mine.org.organizationId}, ${theirs.endpointId}, gen_random_uuid(), 'test', 1, true, 'http://127.0.0.1/', true, now())`;
  await expect(insert.execute(srv.context.db)).rejects.toMatchObject({ code: '23503' });
});
