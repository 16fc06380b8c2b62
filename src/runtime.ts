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
import { startQueue, stopQueue, type JobQueue } from './jobs/queue.ts';
import { createQueues, startWorkers } from './jobs/workers.ts';
import { installSecretsKey, loadOrCreateKeyFile } from './lib/secrets.ts';
import { sealStoredWebhookSecrets } from './domain/webhooks/signing.ts';
import { assembleProviders, configuredProviders, type Providers } from './providers/assemble.ts';
import { PROVIDER_SECRET_KEYS } from './providers/config.ts';

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
  try {
    await migrateToLatest(db as never);
    const { sealed } = await sealStoredWebhookSecrets(db, secretsKey);
    if (sealed) log.info({ sealed }, 'sealed webhook signing secrets stored in plain text');
    const queue =
      opts.queue === false
        ? undefined
        : await startQueue(pgHandle.url, {
            workers: config.runWorkers,
            superviseSeconds: config.queueSuperviseSeconds,
            schema: config.queueSchema,
            log,
          });
    const apiKeyCache = opts.keyCache === false ? undefined : new ApiKeyCache(pgHandle.url);
    await apiKeyCache?.start();
    if (queue) await createQueues(queue);
    const endpoint = { baseUrl: config.callbackBaseUrl };
    const providers = assembleProviders({
      db,
      queue,
      endpoint,
      real: await configuredProviders(config.providers, endpoint, {
        ownBaseUrl: config.assetBaseUrl,
        allowPrivate: config.webhookAllowPrivate,
      }),
      log,
    });
    const context: AppContext = {
      config,
      db,
      pool,
      log,
      document: loadDocument(),
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
        await db.destroy();
        await pgHandle.stop();
      },
    };
  } catch (error) {
    await db.destroy();
    await pgHandle.stop();
    throw error;
  }
}
