// The delivery queue. A first attempt is queued with its event: one pg-boss job carries up to DELIVERIES_PER_JOB
// deliveries of one organization (a batch of events fans out to many deliveries, and a job per delivery cost
// more in pg-boss's table than the delivery itself). A retry is one job per delivery, queued with `startAfter`
// at its own (jittered) time. First-attempt jobs are inserted by the statement storing their events and deliveries
// (pg-boss's own insert inside it), retries through the caller's transaction (pg-boss `db` option), so an event, its
// deliveries and their jobs commit together or not at all: no delivery row without a job, and no job for a
// rolled-back event.
import { CompiledQuery } from 'kysely';
import { QUEUES } from '../../jobs/queue-names.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { insertEventsAndDeliveries, type NewEventRow } from '../../db/queries/webhooks/deliveries.ts';
import { jobInsertOf, type JobQueue } from '../../jobs/queue.ts';

export const DELIVERY_QUEUE = QUEUES.webhookDelivery;

/** Attempt number `attempt` of delivery `deliveryId`; the worker ignores it once that attempt is recorded. */
export type DeliveryJob = { organizationId: string; deliveryId: string; attempt: number };

/** Attempt number `attempt` of each of `deliveryIds` (one organization's): a job carrying several deliveries. */
type DeliveryBatchJob = { organizationId: string; deliveryIds: string[]; attempt: number };

/** What a job of the delivery queue carries: one delivery (retries; jobs queued before batching) or several. */
export type DeliveryJobData = DeliveryJob | DeliveryBatchJob;

/**
 * Deliveries per first-attempt job. With the worker's batch size (src/jobs/webhooks.ts) it bounds the attempts of
 * one fetched batch.
 */
export const DELIVERIES_PER_JOB = 10;

/** The attempts a fetched batch of jobs asks for, one per delivery. */
export function attemptsOf(jobs: DeliveryJobData[]): DeliveryJob[] {
  return jobs.flatMap((job) =>
    'deliveryIds' in job
      ? job.deliveryIds.map((deliveryId) => ({ organizationId: job.organizationId, deliveryId, attempt: job.attempt }))
      : [job],
  );
}

type PgBossDb = { executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }> };

/** pg-boss statements run on this Kysely connection (inside its transaction when it is one). */
function throughKysely(db: Db): PgBossDb {
  return {
    executeSql: async (text, values = []) => ({ rows: (await db.executeQuery(CompiledQuery.raw(text, values))).rows as any[] }),
  };
}

/** Queues retries (or any single attempts), each at its own time. */
export async function enqueueAttempts(queue: JobQueue, db: Db, jobs: Array<{ job: DeliveryJob; startAfter?: Date }>): Promise<void> {
  if (!jobs.length) return;
  await queue.insert(
    DELIVERY_QUEUE,
    jobs.map(({ job, startAfter }) => (startAfter ? { data: job, startAfter } : { data: job })),
    { db: throughKysely(db) },
  );
}

/**
 * Stores one organization's events and their deliveries and queues the deliveries' first attempts,
 * DELIVERIES_PER_JOB to a job, in one statement (atomic on its own; in the caller's transaction when `db` is one).
 * Returns how many deliveries were queued.
 */
export async function insertEventsAndQueue(
  queue: JobQueue,
  db: Db,
  organizationId: string,
  events: NewEventRow[],
  deliveries: Array<{ eventId: string; endpointId: string }>,
): Promise<number> {
  if (!deliveries.length) return 0;
  const insert = await jobInsertOf(queue, DELIVERY_QUEUE);
  if (insert)
    return (await insertEventsAndDeliveries(db, organizationId, events, deliveries, { insert, perJob: DELIVERIES_PER_JOB })).length;
  if (!db.isTransaction) return inTransaction(db, (tx) => insertEventsAndQueue(queue, tx, organizationId, events, deliveries));
  const ids = await insertEventsAndDeliveries(db, organizationId, events, deliveries, null);
  const jobs: Array<{ data: DeliveryBatchJob }> = [];
  for (let i = 0; i < ids.length; i += DELIVERIES_PER_JOB) {
    jobs.push({ data: { organizationId, deliveryIds: ids.slice(i, i + DELIVERIES_PER_JOB), attempt: 1 } });
  }
  await queue.insert(DELIVERY_QUEUE, jobs, { db: throughKysely(db) });
  return ids.length;
}
