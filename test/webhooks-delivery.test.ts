// The webhook delivery engine end to end: emitEvent → pg-boss job → signed POST to a local receiver → attempt
// recorded → GET …/deliveries. The server runs with WEBHOOK_ALLOW_PRIVATE (the receiver is on 127.0.0.1) and a
// short, jitter-free retry schedule.
//
// The jobs run on a pg-boss of this file's own (schema pgboss_webhooks_test), registered through the real
// createQueues/startWorkers: other test files' workers share the database, and a worker of theirs (without the
// flag and with the documented 5-minute retries) must not pick up these deliveries.
import { until, untilWaitingOnLock } from './support/wait.ts';
import { createHmac } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Ajv } from 'ajv';
import { sql } from 'kysely';
import addFormats from 'ajv-formats';
import { PgBoss } from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { inTransaction } from '../src/db/database.ts';
import { runDeliveryBatch, runDeliveryJob } from '../src/domain/webhooks/attempts.ts';
import { closeDeliveryAgents } from '../src/domain/webhooks/deliver.ts';
import { setResolverForTests } from '../src/net/destination-guard.ts';
import { emitEvent, emitEvents, type NewEvent } from '../src/domain/webhooks/events.ts';
import { tuneWebhooksForTests } from '../src/domain/webhooks/tuning.ts';
import { sealSecret } from '../src/lib/secrets.ts';
import { createQueues, startWorkers } from '../src/jobs/workers.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

// ---- a local receiver whose behaviour is chosen by the path ---------------------------------------------------

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
let receiver: Server;
let base: string;
const received: Received[] = [];
const hits = new Map<string, number>();

function startReceiver(): Promise<void> {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      const [, kind, arg] = path.split('/');
      switch (kind) {
        case 'ok':
          return res.writeHead(204).end();
        case 'fail':
          return res.writeHead(500).end('nope');
        case 'gone':
          return res.writeHead(410).end();
        case 'flaky': // fails the first `arg` times, then succeeds
          return res.writeHead(n <= Number(arg) ? 503 : 200).end('{}');
        case 'slow':
          return void setTimeout(() => res.writeHead(200).end(), Number(arg));
        case 'same-origin':
          return res.writeHead(307, { location: `/ok/redirected-${arg}` }).end();
        case 'cross-origin': // localhost is another origin than 127.0.0.1
          return res.writeHead(307, { location: `${base.replace('127.0.0.1', 'localhost')}/ok/crossed-${arg}` }).end();
        case 'loop':
          return res.writeHead(302, { location: path }).end();
        default:
          return res.writeHead(404).end();
      }
    });
  });
  return new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
}

const requestsTo = (prefix: string) => received.filter((r) => r.path.startsWith(prefix));

// ---- server, queue, helpers ---------------------------------------------------------------------------------------

let srv: TestServer;
let boss: PgBoss;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let restoreTuning: () => void;
let unique = 0;
const names = new Map<string, string[]>();

beforeAll(async () => {
  await startReceiver();
  const address = receiver.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  setResolverForTests(async (host): Promise<LookupAddress[]> => {
    const known = names.get(host) ?? (host === 'localhost' ? ['127.0.0.1'] : undefined);
    if (!known) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return known.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 }));
  });
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  boss = new PgBoss({ connectionString: inject('databaseUrl'), schema: 'pgboss_webhooks_test', max: 4 });
  boss.on('error', () => {});
  await boss.start();
  await createQueues(boss);
  srv.context.queue = boss;
  await startWorkers(boss, srv.context);
}, 120_000);

afterAll(async () => {
  restoreTuning?.();
  setResolverForTests(null);
  await boss.stop({ graceful: false, timeout: 5_000 });
  await srv.close();
  closeDeliveryAgents();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

beforeEach(async () => {
  org = await srv.newOrg('Delivery org'); // one per test: earlier endpoints must not receive this test's events
  srv.context.config.webhookAllowPrivate = true;
  restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [50, 50, 50], jitter: 0, deliveryTimeoutMs: 2_000, testTimeoutMs: 2_000 });
});

async function endpoint(
  path: string,
  events = ['message.delivered'],
  key = org.apiKey.secret,
): Promise<{ id: string; secret: string; url: string }> {
  const res = await call(srv, 'POST', '/v1/webhook-endpoints', { key, body: { url: `${base}${path}`, events } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function attempts(endpointId: string, query = '', key = org.apiKey.secret) {
  const res = await call(srv, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries${query}`, { key });
  expect(res.status).toBe(200);
  return res.body as { data: any[]; pagination: { total: number; hasMore: boolean; page: number; limit: number } };
}

async function getEndpoint(id: string, key = org.apiKey.secret) {
  const list = await call(srv, 'GET', '/v1/webhook-endpoints', { key });
  return list.body.data.find((e: { id: string }) => e.id === id);
}

const doc = () => srv.context.document as unknown as { components: { schemas: Record<string, { examples: Array<{ data: any }> }> } };
/** The documented example data of message.delivered, with a fresh message id. */
const deliveredData = () => ({
  ...doc().components.schemas.MessageDeliveredWebhookEvent!.examples[0]!.data,
  messageId: crypto.randomUUID(),
});
const delivered = (organizationId = org.organizationId): NewEvent => ({ organizationId, type: 'message.delivered', data: deliveredData() });
const emit = (event: NewEvent = delivered()) => emitEvent(srv.context.db, boss, event);
const path = (kind: string, arg: string | number = '') => `/${kind}/${arg || `${++unique}`}${arg ? `/${++unique}` : ''}`;

function envelopeValidator(schema: string) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(srv.context.document, 'doc');
  return ajv.getSchema(`doc#/components/schemas/${schema}`)!;
}

// ---- tests ------------------------------------------------------------------------------------------------------------

describe('signed deliveries', () => {
  it('delivers the documented envelope, verifiable with the standardwebhooks library and by X-Signature', async () => {
    const ep = await endpoint(path('ok'));
    const event = delivered();
    expect(await emit(event)).toEqual({ events: 1, deliveries: 1 });
    const [req] = await until(
      async () => requestsTo(new URL(ep.url).pathname),
      (r) => r.length === 1,
      'the delivery',
    );

    // The secret is stored sealed; the worker opens it to sign, and the signature verifies with the plain secret.
    const row = await srv.context.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', ep.id).executeTakeFirstOrThrow();
    expect(row.secret.startsWith('v1:')).toBe(true);
    expect(row.secret).not.toContain(ep.secret.slice(6));
    const payload = new Webhook(ep.secret).verify(req!.body, req!.headers as Record<string, string>) as any;
    expect(payload).toMatchObject({ type: 'message.delivered', apiVersion: '1.0.0', data: event.data });
    expect(payload.id).toBe(req!.headers['webhook-id']);
    expect(envelopeValidator('MessageDeliveredWebhookEvent')(payload)).toBe(true);
    expect(req!.headers['content-type']).toBe('application/json');

    const ts = req!.headers['webhook-timestamp'] as string;
    const mac = createHmac('sha256', Buffer.from(ep.secret.slice(6), 'base64'))
      .update(`${payload.id}.${ts}.${req!.body}`)
      .digest('hex');
    expect(req!.headers['x-signature']).toBe(`t=${ts},v1=${mac}`);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);

    // A tampered body or another secret fails verification.
    expect(() => new Webhook(ep.secret).verify(req!.body.replace('delivered', 'read'), req!.headers as Record<string, string>)).toThrow();
    const other = (await call(srv, 'POST', '/v1/webhook-endpoints', { key: org.apiKey.secret, body: { url: ep.url, events: ['test'] } }))
      .body.data;
    expect(() => new Webhook(other.secret).verify(req!.body, req!.headers as Record<string, string>)).toThrow();

    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the attempt row',
    );
    expect(log.data[0]).toMatchObject({
      endpointId: ep.id,
      eventId: payload.id,
      event: 'message.delivered',
      attempt: 1,
      test: false,
      url: ep.url,
      success: true,
      statusCode: 204,
      error: null,
      nextRetryAt: null,
    });
    expect(log.data[0].durationMs).toBeGreaterThanOrEqual(0);
  });

  it('delivers only to active endpoints of the same organization subscribed to the event', async () => {
    const other = await srv.newOrg('Other delivery org');
    const subscribed = await endpoint(path('ok'), ['message.delivered', 'message.read']);
    const notSubscribed = await endpoint(path('ok'), ['message.sent']);
    const disabled = await endpoint(path('ok'), ['message.delivered']);
    await call(srv, 'PATCH', `/v1/webhook-endpoints/${disabled.id}`, { key: org.apiKey.secret, body: { isActive: false } });
    const foreign = await endpoint(path('ok'), ['message.delivered'], other.apiKey.secret);

    expect(await emit()).toEqual({ events: 1, deliveries: 1 });
    await until(
      () => attempts(subscribed.id),
      (l) => l.data.length === 1,
      'the subscribed delivery',
    );
    await new Promise((r) => setTimeout(r, 700)); // one more worker poll: nothing else may arrive
    for (const ep of [notSubscribed, disabled, foreign]) expect(requestsTo(new URL(ep.url).pathname)).toHaveLength(0);
    expect((await attempts(foreign.id, '', other.apiKey.secret)).data).toHaveLength(0);

    // Nobody subscribed: nothing stored, nothing queued.
    expect(
      await emitEvent(srv.context.db, boss, { organizationId: org.organizationId, type: 'blast.status_changed', data: { test: true } }),
    ).toEqual({ events: 0, deliveries: 0 });
  });

  it('fans a batch of events out to every subscriber in one go', async () => {
    const a = await endpoint(path('ok'));
    const b = await endpoint(path('ok'));
    const result = await emitEvents(srv.context.db, boss, [delivered(), delivered(), delivered()]);
    expect(result.events).toBe(3);
    expect(result.deliveries).toBe(6);
    for (const ep of [a, b])
      await until(
        () => attempts(ep.id),
        (l) => l.data.length === 3,
        'three deliveries',
      );
    const ids = (await attempts(a.id)).data.map((d) => d.eventId).sort();
    expect((await attempts(b.id)).data.map((d) => d.eventId).sort()).toEqual(ids);
  });

  it("commits with the caller's transaction: a rolled-back change raises no event", async () => {
    const ep = await endpoint(path('ok'));
    await expect(
      inTransaction(srv.context.db, async (tx) => {
        await emitEvent(tx, boss, delivered());
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await new Promise((r) => setTimeout(r, 700));
    expect(requestsTo(new URL(ep.url).pathname)).toHaveLength(0);
    expect((await attempts(ep.id)).data).toHaveLength(0);
  });

  it('lists attempts newest first, paginated', async () => {
    const ep = await endpoint(path('ok'));
    for (let i = 0; i < 3; i++) {
      await emit();
      await until(
        () => attempts(ep.id),
        (l) => l.data.length === i + 1,
        `delivery ${i + 1}`,
      );
    }
    const all = await attempts(ep.id);
    const times = all.data.map((d) => new Date(d.attemptedAt).getTime());
    expect(times).toEqual([...times].sort((x, y) => y - x));
    const page2 = await attempts(ep.id, '?limit=2&page=2');
    expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 3, hasMore: false });
    expect(page2.data.map((d) => d.id)).toEqual([all.data[2].id]);
  });
});

describe('retries', () => {
  it('retries on the schedule with the same id and body, recording each attempt', async () => {
    const p = path('flaky', 2);
    const ep = await endpoint(p);
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 3,
      'three attempts',
    );
    expect(log.data.map((d) => [d.attempt, d.success, d.statusCode, d.error])).toEqual([
      [3, true, 200, null],
      [2, false, 503, 'HTTP 503'],
      [1, false, 503, 'HTTP 503'],
    ]);
    expect(new Set(log.data.map((d) => d.eventId)).size).toBe(1);
    expect(log.data[0].nextRetryAt).toBeNull();
    for (const failed of log.data.slice(1)) {
      const gap = new Date(failed.nextRetryAt).getTime() - new Date(failed.completedAt).getTime();
      expect(gap).toBe(50); // the tuned schedule, no jitter
    }
    const reqs = requestsTo(p);
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(reqs.map((r) => r.body)).size).toBe(1);
    expect((await getEndpoint(ep.id)).consecutiveFailures).toBe(0);
  });

  it('stops after the last scheduled retry and counts one failed delivery', async () => {
    const ep = await endpoint(path('fail'));
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 4 && l.data[0].nextRetryAt === null,
      'four attempts',
    );
    expect(log.data.map((d) => d.attempt)).toEqual([4, 3, 2, 1]);
    expect(log.data.slice(1).every((d) => d.nextRetryAt !== null)).toBe(true);
    await until(
      () => getEndpoint(ep.id),
      (e) => e.consecutiveFailures === 1,
      'the failure count',
    );
    await new Promise((r) => setTimeout(r, 700));
    expect((await attempts(ep.id)).data).toHaveLength(4);
  });

  it('treats a timeout as a failure', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [], deliveryTimeoutMs: 200 });
    const ep = await endpoint(path('slow', 1_000));
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the timed-out attempt',
    );
    expect(log.data[0]).toMatchObject({ success: false, statusCode: null, error: 'timeout after 200 ms', nextRetryAt: null });
  });

  it('treats a connection error as a failure', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [] });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: org.apiKey.secret,
      body: { url: `http://127.0.0.1:${port}/x`, events: ['message.delivered'] },
    });
    await emit();
    const log = await until(
      () => attempts(res.body.data.id),
      (l) => l.data.length === 1,
      'the refused attempt',
    );
    expect(log.data[0]).toMatchObject({ success: false, statusCode: null, error: 'connection refused' });
  });

  it('never retries an event whose data is {test: true}', async () => {
    const ep = await endpoint(path('fail'));
    await emitEvent(srv.context.db, boss, { organizationId: org.organizationId, type: 'message.delivered', data: { test: true } });
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the attempt',
    );
    expect(log.data[0]).toMatchObject({ test: true, success: false, nextRetryAt: null });
    await new Promise((r) => setTimeout(r, 700));
    expect((await attempts(ep.id)).data).toHaveLength(1);
    expect((await getEndpoint(ep.id)).consecutiveFailures).toBe(0);
  });

  it('records an attempt once even if its job runs twice', async () => {
    const ep = await endpoint(path('ok'));
    await emit();
    await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the delivery',
    );
    const row = await srv.context.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', ep.id)
      .executeTakeFirstOrThrow();
    await runDeliveryJob(srv.context, { organizationId: org.organizationId, deliveryId: row.id, attempt: 1 });
    await runDeliveryJob(srv.context, { organizationId: 'b0b0b0b0-0000-4000-8000-000000000000', deliveryId: row.id, attempt: 2 }); // another tenant
    expect(requestsTo(new URL(ep.url).pathname)).toHaveLength(1);
    expect((await attempts(ep.id)).data).toHaveLength(1);
  });
});

describe('concurrent recording', () => {
  // Two recordings (two workers' batches, or a worker and a PATCH) each lock endpoints, then deliveries. They used
  // to take them in different orders (a batch reset the streak of its succeeding endpoints before locking its
  // failing ones in id order): two batches could deadlock, one was aborted, and pg-boss ran it again — its
  // receivers got every event of the batch a second time.
  it('locks the endpoints of a batch in id order, before anything else, so recordings never deadlock', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [] });
    const [low, high] = [await endpoint(path('ok')), await endpoint(path('ok'))].sort((x, y) => (x.id < y.id ? -1 : 1));
    await call(srv, 'PATCH', `/v1/webhook-endpoints/${low!.id}`, { key: org.apiKey.secret, body: { url: `${base}${path('fail')}` } });
    await srv.context.db.updateTable('webhook_endpoints').set({ consecutive_failures: 3 }).where('id', '=', high!.id).execute();
    // Deliveries without jobs: this test runs the batch itself.
    await emitEvent(srv.context.db, { insert: async () => [] } as unknown as PgBoss, delivered());
    const deliveries = await srv.context.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', 'in', [low!.id, high!.id])
      .execute();
    expect(deliveries).toHaveLength(2);
    const jobs = deliveries.map((d) => ({ organizationId: org.organizationId, deliveryId: d.id, attempt: 1 }));
    let outcome: unknown;
    // Another recording holds `low` and then takes `high`, as the lock order allows.
    await srv.context.db.transaction().execute(async (tx) => {
      await sql`select id from webhook_endpoints where id = ${low!.id} for no key update`.execute(tx);
      const batch = runDeliveryBatch(srv.context, jobs).then(
        () => 'recorded',
        (error: unknown) => error,
      );
      await untilWaitingOnLock(srv.context.db, '%webhook_endpoints%', 'the batch to wait for the held endpoint');
      await sql`set local lock_timeout = '5s'`.execute(tx);
      await sql`select id from webhook_endpoints where id = ${high!.id} for no key update`.execute(tx);
      outcome = batch;
    });
    expect(await outcome).toBe('recorded');
    expect(await getEndpoint(low!.id)).toMatchObject({ consecutiveFailures: 1, isActive: true });
    expect(await getEndpoint(high!.id)).toMatchObject({ consecutiveFailures: 0, isActive: true });
    expect((await attempts(low!.id)).data).toMatchObject([{ success: false, statusCode: 500 }]);
    expect((await attempts(high!.id)).data).toMatchObject([{ success: true }]);
  });
});

describe('disabling', () => {
  it('disables after 10 failed deliveries in a row and re-enables with PATCH', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [] });
    const ep = await endpoint(path('fail'));
    await emitEvents(
      srv.context.db,
      boss,
      Array.from({ length: 9 }, () => delivered()),
    );
    await until(
      () => getEndpoint(ep.id),
      (e) => e.consecutiveFailures === 9,
      'nine failures',
    );
    expect((await getEndpoint(ep.id)).isActive).toBe(true);
    await emit();
    const off = await until(
      () => getEndpoint(ep.id),
      (e) => !e.isActive,
      'the automatic disable',
    );
    expect(off).toMatchObject({ isActive: false, disabledReason: 'consecutive_failures', consecutiveFailures: 10 });
    expect(off.disabledAt).not.toBeNull();

    // Disabled: new events are not delivered to it.
    const before = requestsTo(new URL(ep.url).pathname).length;
    await emit();
    await new Promise((r) => setTimeout(r, 700));
    expect(requestsTo(new URL(ep.url).pathname)).toHaveLength(before);

    const on = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
      key: org.apiKey.secret,
      body: { isActive: true, url: `${base}${path('ok')}` },
    });
    expect(on.body.data).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
    await emit();
    await until(
      () => attempts(ep.id),
      (l) => l.data[0]?.success === true,
      'a delivery after re-enabling',
    );
  });

  it('resets the streak on a success', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [] });
    const ep = await endpoint(path('flaky', 2));
    for (const expected of [1, 2, 0]) {
      await emit();
      await until(
        () => getEndpoint(ep.id),
        (e) => e.consecutiveFailures === expected,
        `streak ${expected}`,
      );
    }
  });

  it('disables at once on 410 Gone, without retrying', async () => {
    const ep = await endpoint(path('gone'));
    await emit();
    const off = await until(
      () => getEndpoint(ep.id),
      (e) => !e.isActive,
      'the disable',
    );
    expect(off).toMatchObject({ disabledReason: 'gone', consecutiveFailures: 1 });
    const log = await attempts(ep.id);
    expect(log.data).toHaveLength(1);
    expect(log.data[0]).toMatchObject({ statusCode: 410, success: false, nextRetryAt: null });
  });

  it('cancels pending retries when the endpoint is disabled', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [800] });
    const ep = await endpoint(path('fail'));
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the first attempt',
    );
    expect(log.data[0].nextRetryAt).not.toBeNull();
    await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey.secret, body: { isActive: false } });
    expect((await attempts(ep.id)).data[0].nextRetryAt).toBeNull();
    await new Promise((r) => setTimeout(r, 1_600)); // past the retry's due time and a worker poll
    expect((await attempts(ep.id)).data).toHaveLength(1);
    expect(requestsTo(new URL(ep.url).pathname)).toHaveLength(1);
  });
});

describe('destinations at delivery time', () => {
  it('follows a redirect on the same origin', async () => {
    const p = path('same-origin');
    const ep = await endpoint(p);
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the attempt',
    );
    expect(log.data[0]).toMatchObject({ success: true, statusCode: 204 });
    const arg = p.split('/')[2];
    expect(requestsTo(`/ok/redirected-${arg}`)).toHaveLength(1);
    const [first, second] = [requestsTo(p)[0]!, requestsTo(`/ok/redirected-${arg}`)[0]!];
    expect(second.body).toBe(first.body);
    expect(second.headers['webhook-signature']).toBe(first.headers['webhook-signature']);
  });

  it('does not follow a redirect to another origin, nor an endless one', async () => {
    restoreTuning = tuneWebhooksForTests({ retryDelaysMs: [] });
    const cross = path('cross-origin');
    const ep = await endpoint(cross);
    const loop = await endpoint(path('loop'));
    await emit();
    const log = await until(
      () => attempts(ep.id),
      (l) => l.data.length === 1,
      'the attempt',
    );
    expect(log.data[0]).toMatchObject({ success: false, statusCode: 307 });
    expect(log.data[0].error).toMatch(/another origin/);
    expect(requestsTo(`/ok/crossed-${cross.split('/')[2]}`)).toHaveLength(0);
    const loopLog = await until(
      () => attempts(loop.id),
      (l) => l.data.length === 1,
      'the loop attempt',
    );
    expect(loopLog.data[0]).toMatchObject({ success: false, statusCode: 302, error: 'HTTP 302: too many redirects' });
    expect(requestsTo(new URL(loop.url).pathname)).toHaveLength(4);
  });

  it('refuses at connect time a host that now resolves to a private address (DNS rebinding)', async () => {
    srv.context.config.webhookAllowPrivate = false; // production mode for this delivery
    names.set('rebind.example.com', ['93.184.216.34']);
    const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: org.apiKey.secret,
      body: { url: 'https://rebind.example.com/hook', events: ['message.delivered'] },
    });
    expect(res.status).toBe(201);
    names.set('rebind.example.com', ['127.0.0.1']);
    await emit();
    const log = await until(
      () => attempts(res.body.data.id),
      (l) => l.data.length >= 1,
      'the refused attempt',
    );
    expect(log.data[0]).toMatchObject({
      success: false,
      statusCode: null,
      durationMs: null,
      error: 'destination resolves to a non-public address',
    });
    expect(log.data[0].nextRetryAt).not.toBeNull(); // a refused destination is a failure like any other
    await call(srv, 'DELETE', `/v1/webhook-endpoints/${res.body.data.id}`, { key: org.apiKey.secret });
  });
});

describe('testWebhookEndpoint', () => {
  it('sends one signed {test: true} delivery with the requested event name, and never retries it', async () => {
    const p = path('ok');
    const ep = await endpoint(p);
    const res = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey.secret, body: { event: 'message.read' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      endpointId: ep.id,
      event: 'message.read',
      attempt: 1,
      test: true,
      success: true,
      statusCode: 204,
      error: null,
      nextRetryAt: null,
    });
    const [req] = requestsTo(p);
    const payload = new Webhook(ep.secret).verify(req!.body, req!.headers as Record<string, string>) as any;
    expect(payload).toMatchObject({ id: res.body.data.eventId, type: 'message.read', data: { test: true } });
    expect(Object.keys(payload.data)).toEqual(['test']);
    expect(envelopeValidator('MessageReadWebhookEvent')(payload)).toBe(true);

    const fallback = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey.secret });
    expect(fallback.body.data.event).toBe('test');
    expect(JSON.parse(requestsTo(p)[1]!.body).type).toBe('test');

    const log = await attempts(ep.id);
    expect(log.data.map((d) => d.id)).toEqual([fallback.body.data.id, res.body.data.id]);
  });

  it('reports a failing receiver in a 200 without retrying or counting it', async () => {
    const p = path('fail');
    const ep = await endpoint(p);
    const res = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ success: false, statusCode: 500, error: 'HTTP 500', test: true, nextRetryAt: null });
    await new Promise((r) => setTimeout(r, 700)); // a retry would be due after 50 ms
    expect(requestsTo(p)).toHaveLength(1);
    expect((await attempts(ep.id)).data).toHaveLength(1);
    expect(await getEndpoint(ep.id)).toMatchObject({ isActive: true, consecutiveFailures: 0 });
  });

  it('sends nothing unsigned when the stored secret cannot be opened (sealed with another key)', async () => {
    const p = path('ok');
    const ep = await endpoint(p);
    const foreign = sealSecret(ep.secret, Buffer.alloc(32, 7));
    // Dated in the past: start-up checks the newest sealed secret against its key, and processes other files start
    // on this shared database must not find this one.
    await sql`update webhook_endpoints set secret = ${foreign}, created_at = '2000-01-01Z' where id = ${ep.id}`.execute(srv.context.db);
    const res = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ success: false, statusCode: null, durationMs: null });
    expect(res.body.data.error).toMatch(/^signing secret unavailable: the secret cannot be decrypted with this key/);
    expect(requestsTo(p)).toHaveLength(0);
  });

  it('times out and works on a disabled endpoint without changing it', async () => {
    restoreTuning = tuneWebhooksForTests({ testTimeoutMs: 200 });
    const ep = await endpoint(path('slow', 1_000));
    await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey.secret, body: { isActive: false } });
    const res = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey.secret });
    expect(res.body.data).toMatchObject({ success: false, statusCode: null, error: 'timeout after 200 ms' });
    expect(await getEndpoint(ep.id)).toMatchObject({ isActive: false, disabledReason: 'manual', consecutiveFailures: 0 });
  });
});
