// What the webhook worker tests share: a local receiver (500 under /fail, 204 elsewhere), a test server that may
// deliver to it, and a pg-boss of the test's own schema as its queue (no worker runs: tests hand jobs to the job
// definition as src/jobs/workers.ts would).
import { createServer, type IncomingMessage } from 'node:http';
import { PgBoss } from 'pg-boss';
import { inject } from 'vitest';
import { closeDeliveryAgents } from '../../src/domain/webhooks/deliver.ts';
import { createQueues } from '../../src/jobs/workers.ts';
import { startTestServer, type TestServer } from './server.ts';

export type DeliveryHarness = { base: string; srv: TestServer; boss: PgBoss; close: () => Promise<void> };

/**
 * `workers: true` runs every worker of the test server on its own queue instead (dispatch, receipts the carrier
 * simulator queues there, imports, exports, deliveries): for tests that follow a change end to end; `schema` is
 * then unused and `boss` is the server's queue.
 */
export async function startDeliveryHarness(
  schema: string,
  onRequest: (req: IncomingMessage, body: string) => void = () => {},
  opts: { workers?: boolean } = {},
): Promise<DeliveryHarness> {
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onRequest(req, Buffer.concat(chunks).toString());
      res.writeHead(req.url?.startsWith('/fail') ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const srv = await startTestServer({ workers: opts.workers, config: { webhookAllowPrivate: true } });
  const own = !opts.workers;
  const boss = own ? new PgBoss({ connectionString: inject('databaseUrl'), schema, max: 2 }) : srv.context.queue!;
  if (own) {
    boss.on('error', () => {});
    await boss.start();
    await createQueues(boss);
    srv.context.queue = boss;
  }
  return {
    base,
    srv,
    boss,
    close: async () => {
      if (own) await boss.stop({ graceful: false, timeout: 5_000 });
      await srv.close();
      closeDeliveryAgents();
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    },
  };
}
