// Background work runs on pg-boss (PostgreSQL-backed, SKIP LOCKED), in the same database as the data.
// Sections register their queues and workers through registerWorkers(); the API process runs them unless
// RUN_WORKERS=0 (then a separate `npm run worker`-style process can take them).
import type { Logger } from 'pino';
import { PgBoss } from 'pg-boss';

export type JobQueue = PgBoss;

export async function startQueue(
  url: string,
  opts: { workers: boolean; superviseSeconds?: number; schema?: string; log?: Pick<Logger, 'warn'> },
): Promise<JobQueue> {
  const boss = new PgBoss({
    connectionString: url,
    schema: opts.schema ?? 'pgboss',
    max: 4,
    supervise: opts.workers,
    schedule: opts.workers,
    // Workers are woken by NOTIFY when a job is queued (every queue is created with `notify`), not by their next
    // poll: without the listener the notifications went unheard and a new job waited up to a polling interval.
    useListenNotify: opts.workers,
    ...(opts.superviseSeconds ? { superviseIntervalSeconds: opts.superviseSeconds, monitorIntervalSeconds: opts.superviseSeconds } : {}),
  });
  // A lost database must not crash the process (pg-boss retries), but the operator must hear of it: one line
  // per kind of error every 30 s at most.
  const lastLogged = new Map<string, number>();
  boss.on('error', (error: Error & { code?: string }) => {
    const kind = error.code ?? error.message;
    const now = Date.now();
    if ((lastLogged.get(kind) ?? 0) > now - 30_000) return;
    lastLogged.set(kind, now);
    opts.log?.warn({ err: error }, `job queue lost the database or failed: ${error.message}`);
  });
  await boss.start();
  return boss;
}

export async function stopQueue(boss: JobQueue): Promise<void> {
  await boss.stop({ graceful: true, timeout: 10_000 });
}
