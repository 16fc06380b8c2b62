// Webhook deliveries per second to a local keep-alive receiver (node:http on 127.0.0.1):
//  engine: emitEvents (events + deliveries + pg-boss jobs, committed together) → the webhook-delivery worker as
//          src/jobs/workers.ts registers it (signed POST, attempt recorded) — clock stops when every attempt is
//          recorded in PostgreSQL.
//  bare:   the same number of signed POSTs made directly with a keep-alive agent, as many in flight as the worker
//          runs at once; no queue, no database.
import { createServer, request, Agent } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';
import { closeDeliveryAgents } from '../src/domain/webhooks/deliver.ts';
import { createEndpoint } from '../src/domain/webhooks/endpoints.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { emitEvents, envelopeBody, type NewEvent } from '../src/domain/webhooks/events.ts';
import { signerFor } from '../src/domain/webhooks/signing.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';

export type WebhookBenchResult = { deliveries: number; engine: number; bare: number; emitMs: number };

const CONCURRENCY = 50; // what runDeliveryBatch keeps in flight
const EMIT_BATCH = 100; // events per emitEvents call, like a receipt worker's batch

export function startReceiver(): Promise<{ url: string; close: () => Promise<void>; count: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/hooks`,
        count: () => count,
        close: async () => {
          server.closeAllConnections();
          await new Promise((r) => server.close(r));
        },
      });
    }),
  );
}

async function bare(url: string, n: number, data: object): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  // The key prepared once, as the engine does per batch: the baseline is the cheapest way to make the same POSTs.
  const sign = signerFor('whsec_' + Buffer.alloc(24, 7).toString('base64'));
  const post = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const id = randomUUID();
      const body = envelopeBody(id, 'message.delivered', new Date(), { ...data, messageId: randomUUID(), n: i });
      const req = request(url, { method: 'POST', agent, headers: { ...sign(id, body), 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await post(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return n / seconds;
}

async function engine(runtime: Runtime, url: string, n: number): Promise<{ perSecond: number; emitMs: number }> {
  const { db, queue, document } = runtime.context;
  const org = await createOrganization(db, document, `Webhook bench ${randomUUID()}`);
  const { row: endpoint } = await createEndpoint(await tenantFor(runtime.context, org.organizationId), runtime.context, {
    url,
    events: ['message.delivered'],
  });
  const data = (document as any).components.schemas.MessageDeliveredWebhookEvent.examples[0].data; // the documented example
  const events: NewEvent[] = Array.from({ length: n }, () => ({
    organizationId: org.organizationId,
    type: 'message.delivered',
    data: { ...data, messageId: randomUUID() },
  }));
  const t0 = performance.now();
  for (let i = 0; i < n; i += EMIT_BATCH) await emitEvents(db, queue!, events.slice(i, i + EMIT_BATCH));
  const emitMs = performance.now() - t0;
  // Polled every 5 ms through the index of pending deliveries, which empties as attempts are recorded (a delivery
  // advances in the statement recording its attempt), so each poll reads what is left, not every attempt made so far;
  // once none is pending, the successful attempts are counted to be sure every one is recorded.
  for (;;) {
    const { rows } = await sql<{ pending: boolean }>`select exists (select from webhook_deliveries
      where organization_id = ${org.organizationId} and endpoint_id = ${endpoint.id} and status = 'pending') as pending`.execute(db);
    if (!rows[0]!.pending) {
      const { rows: recorded } = await sql<{ n: string }>`select count(*) as n from webhook_delivery_attempts
        where organization_id = ${org.organizationId} and endpoint_id = ${endpoint.id} and success`.execute(db);
      if (Number(recorded[0]!.n) >= n) break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { perSecond: n / ((performance.now() - t0) / 1000), emitMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * BENCH_ROUNDS rounds (3 by default): in each, the bare POSTs right before the engine's deliveries, so both meet the
 * same machine; the figures are the medians of the rounds.
 */
export async function benchWebhookDeliveries(
  databaseUrl: string,
  n = Number(process.env.BENCH_WEBHOOKS ?? 2_000),
  rounds = Number(process.env.BENCH_ROUNDS ?? 3),
): Promise<WebhookBenchResult> {
  const receiver = await startReceiver();
  const env = { DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: '1' } as const;
  try {
    const example = (loadDocument() as any).components.schemas.MessageDeliveredWebhookEvent.examples[0].data;
    // Warm-ups as long as the measured rounds, for both sides: after 200 requests V8 was still optimising the bare
    // client during the measured rounds (13,000-15,500/s there; 16,000-18,700/s warm), which flattered the ratio.
    for (let r = 0; r < rounds; r++) await bare(receiver.url, n, example);
    const bareRates: number[] = [];

    // As shipped: the runtime registers every worker, ours included.
    const shipped = await startRuntime(loadConfig({ ...env, RUN_WORKERS: '1' }), { keyCache: false });
    const shippedResults: Array<{ perSecond: number; emitMs: number }> = [];
    try {
      for (let r = 0; r < rounds; r++) await engine(shipped, receiver.url, n); // connections, prepared plans, JIT
      for (let r = 0; r < rounds; r++) {
        bareRates.push(await bare(receiver.url, n, example));
        shippedResults.push(await engine(shipped, receiver.url, n));
      }
    } finally {
      await shipped.close();
    }

    return {
      deliveries: n,
      engine: median(shippedResults.map((x) => x.perSecond)),
      bare: median(bareRates),
      emitMs: median(shippedResults.map((x) => x.emitMs)),
    };
  } finally {
    closeDeliveryAgents();
    await receiver.close();
  }
}
