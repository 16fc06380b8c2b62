// What every request handler can reach: configuration, the database and the logger. Built once at start.
import type { Logger } from 'pino';
import type { ApiKeyCache } from './auth/key-cache.ts';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { OpenApiDocument } from './http/document.ts';

export type AppContext = {
  config: Config;
  db: Db;
  log: Logger;
  document: OpenApiDocument;
  startedAt: Date;
  /** Authenticated keys, invalidated through LISTEN/NOTIFY; absent in one-shot tools (CLI). */
  apiKeyCache?: ApiKeyCache;
};
