// GET /health through HTTP: 200 while the database answers, 503 with the same body shape (`degraded`, database
// `down`, `latencyMs: null`) when it does not, so a load balancer takes the instance out (src/domain/health.ts).
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { AppContext } from '../src/app-context.ts';
import { createDb } from '../src/db/database.ts';
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
    // An app started against the test database, whose database handle is then swapped for one that cannot connect
    // (port 1 on loopback refuses): start-up needs the database, the probe must notice it is gone.
    const context: AppContext = { ...srv.context, config: { ...srv.context.config, validateResponses: true } };
    const { express } = await createApp(context);
    const unreachable = createDb('postgres://nobody@127.0.0.1:1/none', 1).db;
    context.db = unreachable;
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
      await unreachable.destroy();
    }
  });
});
