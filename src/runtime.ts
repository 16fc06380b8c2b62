// Assembles the parts every entry point needs (server, admin CLI, tests, benchmark): PostgreSQL (embedded
// or DATABASE_URL), migrations, Kysely, pg-boss, logger. close() releases them in reverse order. The secrets key
// (src/lib/secrets.ts) is installed first, and secrets stored in plain text are sealed right after migrating.
import pino, { type Logger } from 'pino';
import type { AppContext } from './app-context.ts';
import { ApiKeyCache } from './auth/key-cache.ts';
import type { Config } from './config.ts';
import { createDb, migrateToLatest } from './db/database.ts';
import { resolvePostgres } from './db/postgres-server.ts';
import { loadDocument } from './contract/document.ts';
import { loadTenantTables } from './db/tenant.ts';
import { startQueue, stopQueue, type JobQueue } from './jobs/queue.ts';
import { createQueues, startWorkers } from './jobs/workers.ts';
import { installSecretsKey, loadOrCreateKeyFile } from './lib/secrets.ts';
import { sealStoredWebhookSecrets } from './domain/webhooks/signing.ts';
import { assembleProviders, configuredProviders, type Providers } from './providers/assemble.ts';
import { PROVIDER_SECRET_KEYS } from './providers/config.ts';
import { DatabaseProbe } from './db/probe.ts';

export type Runtime = {
  context: AppContext;
  /** The concrete providers behind context.providers (entry points set the callback URL, inject sandbox inbound). */
  providers: Providers;
  queue: JobQueue | undefined;
  databaseUrl: string;
  close: () => Promise<void>;
};

export async function startRuntime(config: Config, opts: { log?: Logger; queue?: boolean; keyCache?: boolean } = {}): Promise<Runtime> {
  // Provider credentials are redacted wherever a logged object carries them (config.providers is never logged whole).
  const log = opts.log ?? pino({ level: config.logLevel, redact: PROVIDER_SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]) });
  const secretsKey = config.secretsKey ?? loadOrCreateKeyFile(config.dataDir);
  installSecretsKey(secretsKey);
  const pgHandle = await resolvePostgres(config);
  const { db, pool } = createDb(pgHandle.url);
  // The start-up's database work is round trips more than CPU: the steps that do not depend on each other run at
  // once (issue 38, bench part a: start-up to the first /health). pg-boss keeps its own schema, which no migration
  // touches, so the queue starts while the migrations run; everything that reads our tables waits for them.
  const queueStart =
    opts.queue === false
      ? Promise.resolve(undefined)
      : startQueue(pgHandle.url, {
          workers: config.runWorkers,
          superviseSeconds: config.queueSuperviseSeconds,
          schema: config.queueSchema,
          log,
        });
  const apiKeyCache = opts.keyCache === false ? undefined : new ApiKeyCache(pgHandle.url);
  const listening = apiKeyCache?.start();
  const migrated = migrateToLatest(db as never);
  const afterMigrations = migrated.then(async () => {
    void loadTenantTables(db).catch(() => {}); // read once per process (src/db/tenant.ts): ready when the app asks
    const { sealed } = await sealStoredWebhookSecrets(db, secretsKey);
    if (sealed) log.info({ sealed }, 'sealed webhook signing secrets stored in plain text');
  });
  const queueReady = queueStart.then(async (queue) => {
    if (queue) await createQueues(queue);
    return queue;
  });
  const endpoint = { baseUrl: config.callbackBaseUrl };
  const real = configuredProviders(config.providers, endpoint, {
    ownBaseUrl: config.assetBaseUrl,
    allowPrivate: config.webhookAllowPrivate,
  });
  // One Promise.all over every step, so each failure has a handler; the first one is the start-up's error.
  const started = Promise.all([queueReady, afterMigrations, listening, real]);
  try {
    const [queue, , , realProviders] = await started;
    const providers = assembleProviders({ db, queue, endpoint, real: realProviders, log });
    const databaseProbe = new DatabaseProbe(pgHandle.url);
    const context: AppContext = {
      config,
      db,
      pool,
      log,
      databaseProbe,
      // Parsed on first use (the MCP catalogue, /openapi.json, an operation's first request body or response check):
      // start-up routes by generated/operations.json (src/http/operations.ts), /health needs none of it (issue 38).
      get document() {
        return loadDocument();
      },
      startedAt: new Date(),
      apiKeyCache,
      queue,
      providers,
    };
    if (queue && config.runWorkers) await startWorkers(queue, context);
    return {
      context,
      providers,
      queue,
      databaseUrl: pgHandle.url,
      close: async () => {
        if (queue) await stopQueue(queue);
        await apiKeyCache?.close();
        await databaseProbe.close();
        await db.destroy();
        await pgHandle.stop();
      },
    };
  } catch (error) {
    // Every step started has ended (settled) before what it uses is closed.
    await Promise.allSettled([queueReady, afterMigrations, listening, real]);
    const queue = await queueStart.catch(() => undefined);
    if (queue) await stopQueue(queue).catch(() => {});
    await apiKeyCache?.close().catch(() => {});
    await db.destroy();
    await pgHandle.stop();
    throw error;
  }
}
