// A real server for one test file: the app over HTTP on a free port, against the run's database.
import { DatabaseProbe } from '../../src/db/probe.ts';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { inject } from 'vitest';
import { createApp } from '../../src/app.ts';
import { createHttpServer } from '../../src/http/http-server.ts';
import type { AppContext } from '../../src/app-context.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createDb, type Db } from '../../src/db/database.ts';
import { ApiKeyCache } from '../../src/auth/key-cache.ts';
import { startQueue, stopQueue, type JobQueue } from '../../src/jobs/queue.ts';
import { createQueues, startWorkers } from '../../src/jobs/workers.ts';
import { simulatorProviders, type Providers } from '../../src/providers/assemble.ts';
import { loadDocument } from '../../src/contract/document.ts';
import { createApiKeyFor, createOrganization, type CreatedOrganization } from '../../src/domain/organizations.ts';

export type TestServer = {
  baseUrl: string;
  context: AppContext;
  /** The concrete providers (the sandbox simulators, and any real adapter a test plugged in). */
  providers: Providers;
  /** A fresh organization with a full-scope key. */
  newOrg: (name?: string) => Promise<CreatedOrganization>;
  newKey: (organizationId: string, scopes: string[], expiresAt?: Date | null) => Promise<{ id: string; secret: string }>;
  close: () => Promise<void>;
};

/**
 * `workers: true` also runs the background jobs (pg-boss) in this test file's process. Each test server has a
 * job queue schema of its own, so test files never take each other's jobs (they run three at once); a test that
 * hands work to other processes (CLI, spawned API and worker processes) names the schema (`queueSchema`) and
 * starts them with `QUEUE_SCHEMA` set to it. Never the default schema: another file's processes may use it.
 */
export async function startTestServer(
  opts: {
    workers?: boolean;
    config?: Partial<Config>;
    queueSchema?: string;
    databaseUrl?: string;
    /** Builds the providers (a real adapter against its fake); the simulators by default. */
    providers?: (parts: { db: Db; queue: JobQueue }) => Providers;
  } = {},
): Promise<TestServer> {
  const url = opts.databaseUrl ?? inject('databaseUrl');
  const config = { ...loadConfig({ NODE_ENV: 'test', DATABASE_URL: url }), validateResponses: true, ...opts.config };
  const { db, pool } = createDb(url, 5);
  const apiKeyCache = new ApiKeyCache(url);
  await apiKeyCache.start();
  // Always a queue (accepting a message enqueues its dispatch); workers only when asked.
  const queue = await startQueue(url, {
    workers: Boolean(opts.workers),
    schema: opts.queueSchema ?? `pgboss_t${randomBytes(4).toString('hex')}`,
  });
  await createQueues(queue);
  const providers = opts.providers ? opts.providers({ db, queue }) : simulatorProviders({ db, queue, endpoint: { baseUrl: undefined } });
  const databaseProbe = new DatabaseProbe(url);
  const context: AppContext = {
    config,
    db,
    pool,
    databaseProbe,
    log: pino({ level: 'silent' }),
    document: loadDocument(),
    startedAt: new Date(),
    apiKeyCache,
    queue,
    providers,
  };
  if (opts.workers) await startWorkers(queue, context);
  const { express } = await createApp(context);
  const server: Server = createHttpServer(express);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  providers.endpoint.baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    context,
    providers,
    newOrg: (name = 'Test org') => createOrganization(db, context.document, name),
    newKey: (organizationId, scopes, expiresAt = null) => createApiKeyFor(db, organizationId, 'test key', scopes, expiresAt),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopQueue(queue);
      await apiKeyCache.close();
      await databaseProbe.close();
      await db.destroy();
    },
  };
}

export type CallOptions = { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: RequestInit['body'] };

export type CallResult<T = any> = { status: number; body: T; headers: Headers; text: string };

/** One HTTP call; JSON bodies are encoded and decoded. */
export async function call<T = any>(srv: TestServer, method: string, path: string, opts: CallOptions = {}): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: RequestInit['body'] | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(srv.baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}
