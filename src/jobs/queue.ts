// Background work runs on pg-boss (PostgreSQL-backed, SKIP LOCKED), in the same database as the data.
// Sections register their queues and workers through registerWorkers(); the API process runs them unless
// RUN_WORKERS=0 (then a separate `npm run worker`-style process can take them).
import { PgBoss } from 'pg-boss';

export type JobQueue = PgBoss;

export async function startQueue(url: string, opts: { workers: boolean; superviseSeconds?: number; schema?: string }): Promise<JobQueue> {
  const boss = new PgBoss({
    connectionString: url,
    schema: opts.schema ?? 'pgboss',
    max: 4,
    supervise: opts.workers,
    schedule: opts.workers,
    ...(opts.superviseSeconds ? { superviseIntervalSeconds: opts.superviseSeconds, monitorIntervalSeconds: opts.superviseSeconds } : {}),
  });
  boss.on('error', () => {}); // surfaced through job states; a transient connection error must not crash the process
  await boss.start();
  return boss;
}

export async function stopQueue(boss: JobQueue): Promise<void> {
  await boss.stop({ graceful: true, timeout: 10_000 });
}
