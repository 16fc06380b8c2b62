// GET /health through HTTP: 200 while the database answers, 503 with the same body shape (`degraded`, database
// `down`, `latencyMs: null`) when it does not, so a load balancer takes the instance out (src/domain/health.ts).
import type { Server } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { AppContext } from '../src/app-context.ts';
import { DatabaseProbe } from '../src/db/probe.ts';
import { createHttpServer } from '../src/http/http-server.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

describe('GET /health', () => {
  it('answers 200 ok with the database up and its latency', async () => {
    const res = await fetch(`${srv.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', database: { status: 'up', latencyMs: expect.any(Number) } });
  });

  it('answers 503 degraded, database down, when the database cannot be reached', async () => {
    // An app started against the test database, whose probe is then swapped for one that cannot connect (port 1
    // on loopback refuses): start-up needs the database, the probe must notice it is gone.
    const context: AppContext = { ...srv.context, config: { ...srv.context.config, validateResponses: true } };
    const { express } = await createApp(context);
    const unreachable = new DatabaseProbe('postgres://nobody@127.0.0.1:1/none');
    context.databaseProbe = unreachable;
    const server: Server = createHttpServer(express);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ status: 'degraded', database: { status: 'down', latencyMs: null } });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await unreachable.close();
    }
  });

  it('answers 200 at once while every pooled connection is busy: the probe has its own connection', async () => {
    // Every connection of the request pool held (as under load, by requests in flight): a probe queued behind
    // them would wait for one, then report the database down after PROBE_TIMEOUT_MS.
    const held = await Promise.all(Array.from({ length: srv.context.pool.options.max ?? 10 }, () => srv.context.pool.connect()));
    try {
      const res = await fetch(`${srv.baseUrl}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', database: { status: 'up' } });
    } finally {
      for (const client of held) client.release();
    }
  });

  it('recovers after its connection is closed by the server', async () => {
    await fetch(`${srv.baseUrl}/health`); // the probe's connection exists
    await srv.context.db.executeQuery(
      sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'messaging-service-api:health'`.compile(
        srv.context.db,
      ),
    );
    // The first probe after the kill may see the dead connection; the next one connects anew.
    let body: unknown;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${srv.baseUrl}/health`);
      body = await res.json();
      if (res.status === 200) break;
    }
    expect(body).toMatchObject({ status: 'ok', database: { status: 'up' } });
  });
});
