// Background work runs on pg-boss (PostgreSQL-backed, SKIP LOCKED), in the same database as the data.
// Sections register their queues and workers through registerWorkers(); the API process runs them unless
// RUN_WORKERS=0 (then a separate `npm run worker`-style process can take them).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { PgBoss } from 'pg-boss';
// pg-boss's own SQL builders, not in its published entry point: written against pg-boss 12.35.0 (the pinned
// version); test/library-internals.test.ts fails by name if an upgrade moves or changes them.
import { insertJobs, notifyChannelSql } from 'pg-boss/dist/plans.js';

export type JobQueue = PgBoss;

/**
 * pg-boss's statement inserting jobs into one queue, split around its one parameter (the jobs as JSON text), so a
 * statement that writes rows can queue their jobs itself: rows and jobs commit together in one round trip.
 * `notify` is the expression that wakes the queue's listening workers (null: the queue does not notify).
 */
export type JobInsert = { head: string; tail: string; notify: string | null };

const jobInserts = new WeakMap<JobQueue, Map<string, Promise<JobInsert | null>>>();

/**
 * The JobInsert of queue `name` (its table, retry and retention defaults, its NOTIFY), read once per queue off the
 * statement pg-boss would run for an insert (captured, not run). null for a stand-in queue that runs no SQL through
 * the handle it is given.
 */
export function jobInsertOf(queue: JobQueue, name: string): Promise<JobInsert | null> {
  let byName = jobInserts.get(queue);
  if (!byName) jobInserts.set(queue, (byName = new Map()));
  let insert = byName.get(name);
  if (!insert) {
    insert = (async () => {
      let text: string | undefined;
      const capture = { executeSql: async (sqlText: string) => ((text = sqlText), { rows: [{ id: randomUUID() }] }) };
      await queue.insert(name, [{ data: {} }], { db: capture });
      if (text === undefined) return null;
      const into = /INSERT INTO\s+(\w+)\.(\w+)/i.exec(text);
      if (!into) throw new Error(`pg-boss: no job insert in ${text.slice(0, 200)}`);
      const [, schema, table] = into as unknown as [string, string, string];
      const [head, tail, ...rest] = insertJobs(schema, { table, name, returnId: true, notify: false }).split('$1');
      if (head === undefined || tail === undefined || rest.length > 0) throw new Error('pg-boss insertJobs: expected one parameter');
      return { head, tail, notify: text.includes('pg_notify(') ? `pg_notify(${notifyChannelSql(schema)}, '${name}')` : null };
    })();
    const cached = insert;
    cached.catch(() => byName.delete(name));
    byName.set(name, cached);
  }
  return insert;
}

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
