// The direct sends' read, shared (issue 38, bench part m1). Each direct send read its sender's facts and its contact's
// in a statement of its own: 4,212 reads for 4,212 sends in a round of part m1, against 467 accepting statements
// (direct-batches.ts), each read a round trip that wakes a PostgreSQL backend for 0.12 ms of work. The sends of one
// process asking the same question of the same sender (organization, sender, message type, whether content rules
// and quiet hours apply) while a read of theirs runs wait for it to end, then are read together: the sender's facts
// once, each contact's own (whether it is a test device of the sender and of its fallback, its quiet-hours group) by
// id (accept.ts loadDirectSendFacts). A lane of src/lib/lanes.ts; a send alone waits for nothing. A send inside a
// transaction (an Idempotency-Key's, a subscribed endpoint's) reads alone, in it.
import * as accept from '../../db/queries/messages/accept.ts';
import { runShared } from '../../db/statement-scope.ts';
import type { TenantDb } from '../../db/tenant.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { Lanes, type Waiter } from '../../lib/lanes.ts';

/** Reads of a lane running at once: one, so that the sends arriving meanwhile are read together. */
const IN_FLIGHT = 1;
/** Contacts per read at most (the rest wait for the next). */
const MAX_BATCH = 32;

type Waiting = Waiter<accept.SendFacts | undefined> & {
  db: TenantDb;
  organizationId: string;
  query: accept.DirectFactsQuery;
  contactId: string;
};

/** Lanes per job queue (one per app: test files run several apps in one process, each with its own database). */
const lanesOf = new WeakMap<JobQueue, Lanes<Waiting>>();

/** The facts of a direct send to `contactId`; undefined when it is not a contact of the organization. */
export async function readDirectSendFacts(
  queue: JobQueue,
  db: TenantDb,
  organizationId: string,
  query: accept.DirectFactsQuery,
  contactId: string,
): Promise<accept.SendFacts | undefined> {
  if (db.isTransaction) return (await accept.loadDirectSendFacts(db, organizationId, query, [contactId])).get(contactId);
  let lanes = lanesOf.get(queue);
  if (!lanes) lanesOf.set(queue, (lanes = new Lanes({ inFlight: IN_FLIGHT, take, run })));
  const { senderId, messageType, rules, quiet, eventTypes } = query;
  const key = JSON.stringify([organizationId, senderId ?? null, messageType, rules, quiet, eventTypes]);
  return new Promise((done, failed) => lanes.add(key, { db, organizationId, query, contactId, done, failed }));
}

const take = (waiting: Waiting[]) => ({ batch: waiting.slice(0, MAX_BATCH), rest: waiting.slice(MAX_BATCH) });

/** One read for the batch, each send answered its contact's facts; not under one send's client (runShared). */
function run(batch: Waiting[]): Promise<void> {
  const [first] = batch as [Waiting];
  const ids = [...new Set(batch.map((w) => w.contactId))];
  return runShared(() => accept.loadDirectSendFacts(first.db, first.organizationId, first.query, ids)).then(
    (facts) => batch.forEach((w) => w.done(facts.get(w.contactId))),
    (error: unknown) => batch.forEach((w) => w.failed(error)),
  );
}
