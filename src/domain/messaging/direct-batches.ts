// Direct sends accepted together (issue 38, bench part m1). A direct send outside any transaction (no
// Idempotency-Key, no contact created by `to`, no endpoint subscribed to its events) is one statement, committed on
// its own: PostgreSQL's CPU per send (about two thirds of the machine's at 20 connections) went mostly to what each
// execution of that statement pays whatever its number of recipients — its plan opened and initialised, the rollup
// statement trigger, the sender's attribution, the wake-job insert, the commit and its WAL flush.
//
// So the sends of one process that are ready while earlier ones are being accepted wait for one of those to end,
// and then go together, in one execution of the same statement (accept.ts acceptDirect: one recipient per send,
// each with its own content key): a lane (src/lib/lanes.ts) holds the sends that can share a statement: same
// organization (the statement names one: tenant walls hold as for one send), and the same set but for the content
// (sender, channel plan, gate inputs, origin; see laneKey). At most IN_FLIGHT statements of a lane run at once; a
// send arriving while fewer run starts its own at once, so a send alone waits for nothing (group commit).
//
// Each send is still answered with its own outcome: its message, its skip reason (DNC_LISTED, NO_CONSENT … as the
// caller turns it into its 422), or no row when its contact was deleted meanwhile. The statement is atomic: when it
// fails with an error of PostgreSQL's (a constraint, a timeout: nothing of it was committed), each of its sends is
// accepted again on its own, so one send's failure is its own. An error without PostgreSQL's answer (the connection
// lost: the commit may have happened) fails every send of the batch, as it fails one send today: never sent twice.
import * as accept from '../../db/queries/messages/accept.ts';
import { runShared } from '../../db/statement-scope.ts';
import type { TenantDb } from '../../db/tenant.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { Lanes, type Waiter } from '../../lib/lanes.ts';

/**
 * Statements of a lane running at once. One: the statement's fixed cost is most of it (bench part m1: 1.9 ms for one
 * recipient, 3.4 ms for seven, loaded machine), so the larger batches of one at a time cost PostgreSQL less than two
 * at a time (same run against main: PostgreSQL CPU per send 0.44-0.50 of main's with one, 0.47-0.68 with two, as
 * two ran a third of their statements for one send). The sends' reads have lanes of their own (send-reads.ts).
 */
const IN_FLIGHT = 1;
/** Sends per statement at most (the rest wait for the next): bounds the statement's size and its shapes (compiled-once.ts). */
const MAX_BATCH = 32;

type Waiting = Waiter<accept.Outcome | undefined> & {
  db: TenantDb;
  organizationId: string;
  wake: accept.Wake;
  contactId: string;
  set: accept.DirectSet;
};

/** Lanes per job queue (one per app: test files run several apps in one process, each with its own database). */
const lanesOf = new WeakMap<JobQueue, Lanes<Waiting>>();

/**
 * What sends must share to go in one statement: everything of the set but its contents and the gate's time and
 * blocked contents (per content: merged by key). The gate's `now` of a batch is one of its sends', milliseconds from
 * the others' (the quiet-hours holds, computed from each send's time, are part of the key: equal ones only).
 */
function laneKey(organizationId: string, set: accept.DirectSet, wake: accept.Wake): string {
  const { contents: _contents, gate, ...rest } = set;
  const { messageType, skip, holds, defaults } = gate;
  return JSON.stringify([organizationId, wake.head, wake.tail, rest, messageType, skip, holds, defaults]);
}

/**
 * Accepts one direct send (a set of one content, for `contactId`), with the sends of the same lane that are ready
 * meanwhile: answers its outcome (undefined when the contact is gone).
 */
export function acceptDirectSend(
  queue: JobQueue,
  db: TenantDb,
  organizationId: string,
  { recipients: _recipients, blastId: _blastId, ...set }: accept.AcceptSet,
  contactId: string,
  wake: accept.Wake,
): Promise<accept.Outcome | undefined> {
  let lanes = lanesOf.get(queue);
  if (!lanes) lanesOf.set(queue, (lanes = new Lanes({ inFlight: IN_FLIGHT, take: takeBatch, run: runBatch })));
  const key = laneKey(organizationId, set, wake);
  return new Promise((done, failed) => lanes.add(key, { db, organizationId, wake, contactId, set, done, failed }));
}

/** Runs a batch of one lane: not under one send's client, as the others wait on the same statement (runShared). */
function runBatch(batch: Waiting[]): Promise<void> {
  return runShared(() => acceptBatch(batch[0]!.organizationId, batch, batch[0]!.wake)).catch(
    (error: unknown) => batch.forEach((w) => w.failed(error)), // a defect of ours: every send still answered
  );
}

/** The first waiting sends, one per contact (its conversation is upserted once per statement): a contact's second send waits for the next. */
function takeBatch(waiting: Waiting[]): { batch: Waiting[]; rest: Waiting[] } {
  const batch: Waiting[] = [];
  const contacts = new Set<string>();
  const rest = waiting.filter((w) => {
    if (batch.length >= MAX_BATCH || contacts.has(w.contactId)) return true;
    contacts.add(w.contactId);
    batch.push(w);
    return false;
  });
  return { batch, rest };
}

/** Accepts the batch in one statement, each send answered with its own outcome; one by one if PostgreSQL refused the statement. */
async function acceptBatch(organizationId: string, batch: Waiting[], wake: accept.Wake): Promise<void> {
  if (batch.length === 1) {
    const [one] = batch as [Waiting];
    return accept.acceptDirect(one.db, organizationId, one.set, [one.contactId], wake).then(([o]) => one.done(o), one.failed);
  }
  // In contact order: batches of two lanes lock their conversations in one order (a deadlock would be retried, below).
  batch.sort((a, b) => (a.contactId < b.contactId ? -1 : a.contactId > b.contactId ? 1 : 0));
  const { set, keys } = mergedSet(batch);
  let outcomes: accept.Outcome[];
  try {
    outcomes = await accept.acceptDirect(
      batch[0]!.db,
      organizationId,
      set,
      batch.map((w) => w.contactId),
      wake,
      keys,
    );
  } catch (error) {
    if (!refusedByPostgres(error)) return batch.forEach((w) => w.failed(error));
    await Promise.all(batch.map((w) => acceptBatch(organizationId, [w], wake)));
    return;
  }
  const byContact = new Map(outcomes.map((o) => [o.recipient_id, o]));
  for (const w of batch) w.done(byContact.get(w.contactId));
}

/**
 * The batch's set: the first send's, with each distinct content once (sends of the same content share its key) and
 * the blocked ones named by their new key; `keys[i]` is the i-th send's.
 */
function mergedSet(batch: Waiting[]): { set: accept.DirectSet; keys: string[] } {
  const contents: accept.AcceptContent[] = [];
  const blockedKeys: string[] = [];
  const byContent = new Map<string, string>();
  const keys = batch.map(({ set }) => {
    const { key: own, ...content } = set.contents[0]!;
    const blocked = set.gate.blockedKeys.includes(own);
    const identity = JSON.stringify([content, blocked]);
    let key = byContent.get(identity);
    if (key === undefined) {
      key = String(contents.length);
      byContent.set(identity, key);
      contents.push({ ...content, key });
      if (blocked) blockedKeys.push(key);
    }
    return key;
  });
  const first = batch[0]!.set;
  return { set: { ...first, contents, gate: { ...first.gate, blockedKeys } }, keys };
}

/**
 * Whether PostgreSQL answered the statement with an error (a SQLSTATE): it was rolled back, so its sends may be
 * accepted again. Not a lost connection (class 08) or a server shutting down (57P): the commit may have happened.
 */
function refusedByPostgres(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
}
