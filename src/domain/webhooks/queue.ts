// The delivery queue: one pg-boss job per attempt. Jobs are inserted through the caller's transaction (pg-boss
// `db` option), so an event, its deliveries and their jobs commit together or not at all: no delivery row
// without a job, and no job for a rolled-back event.
import { QUEUES } from '../../jobs/queue-names.ts';
import { CompiledQuery } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../../jobs/queue.ts';

export const DELIVERY_QUEUE = QUEUES.webhookDelivery;

/** Attempt number `attempt` of delivery `deliveryId`; the worker ignores it once that attempt is recorded. */
export type DeliveryJob = { organizationId: string; deliveryId: string; attempt: number };

type PgBossDb = { executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }> };

/** pg-boss statements run on this Kysely connection (inside its transaction when it is one). */
function throughKysely(db: Db): PgBossDb {
  return {
    executeSql: async (text, values = []) => ({ rows: (await db.executeQuery(CompiledQuery.raw(text, values))).rows as any[] }),
  };
}

export async function enqueueAttempts(queue: JobQueue, db: Db, jobs: Array<{ job: DeliveryJob; startAfter?: Date }>): Promise<void> {
  if (!jobs.length) return;
  await queue.insert(
    DELIVERY_QUEUE,
    jobs.map(({ job, startAfter }) => (startAfter ? { data: job, startAfter } : { data: job })),
    { db: throughKysely(db) },
  );
}
