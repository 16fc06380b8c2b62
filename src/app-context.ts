// What every request handler can reach: configuration, the database and the logger. Built once at start.
import type { Logger } from 'pino';
import type pg from 'pg';
import type { ApiKeyCache } from './auth/key-cache.ts';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { DatabaseProbe } from './db/probe.ts';
import type { OpenApiDocument } from './contract/document.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { ProviderDirectory } from './providers/provider.ts';

export type AppContext = {
  config: Config;
  db: Db;
  /** The pool under `db`, for libraries that take a pg client (rate limiter). */
  pool: pg.Pool;
  log: Logger;
  /** The health check's own connection (src/db/probe.ts). */
  databaseProbe: DatabaseProbe;
  document: OpenApiDocument;
  startedAt: Date;
  /** Authenticated keys, invalidated through LISTEN/NOTIFY; absent in one-shot tools (CLI). */
  apiKeyCache?: ApiKeyCache;
  /** pg-boss, for enqueueing background work; absent in one-shot tools (CLI). */
  queue?: JobQueue;
  /** The carrier-side providers: one per slot (the built-in simulator unless configured otherwise), src/providers/assemble.ts. */
  providers: ProviderDirectory;
};

/** What handlers and the domain get as services: the context without its system handles (`db`, `pool`). */
export type AppServices = Omit<AppContext, 'db' | 'pool'>;

/**
 * `app` without `db` and `pool`, copied by property descriptor: a spread would read the lazy `document`
 * (src/runtime.ts) and parse the whole API document in a process or request that never needs it.
 */
export function servicesOf(app: AppContext): AppServices {
  const { db: _db, pool: _pool, ...rest } = Object.getOwnPropertyDescriptors(app);
  return Object.defineProperties({}, rest) as AppServices;
}
