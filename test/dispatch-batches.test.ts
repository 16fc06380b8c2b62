// What one dispatch of a batch costs the database, and that it still hands each message over once (issue 33/38).
// A blast batch is claimed whole, in one statement (a claim reads the whole batch to find its due messages: claimed
// 500 at a time, a batch of 1,200 was read three times); a fallback chosen at dispatch is recorded with the
// acceptance, not by an update of its own before the send. No workers: each test runs the dispatcher itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { blastTuning, runBatch } from '../src/domain/blasts/sending.ts';
import { DISPATCH_QUEUE, dispatchBatch, type DispatchJob } from '../src/domain/messaging/dispatch.ts';
import { sharedLimiter } from '../src/domain/rate-limits.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
const tuning = { ...blastTuning };

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Dispatch batches');
  key = org.apiKey.secret;
});
afterAll(async () => {
  Object.assign(blastTuning, tuning);
  await srv.close();
});

/** The limiter dispatch asks for a sender's rate (src/domain/messaging/dispatch.ts limiterFor). */
const senderLimiter = (perSecond: number) => sharedLimiter(srv.context.pool, `sender-mps-${perSecond}`, perSecond, 1);

/** Runs the dispatcher for a scope, as its wake job would; answers the statements it sent. */
async function dispatch(job: DispatchJob): Promise<string[]> {
  const seen: string[] = [];
  await watchingStatements(
    (s) => seen.push(s.text),
    () => dispatchBatch(srv.context, [{ data: job }]),
  );
  return seen;
}

const claims = (statements: string[]) => statements.filter((t) => t.includes('with due as')).length;

/**
 * A blast to `phones` (new contacts of cohort `cohort`, RCS capable, marketing consent, quiet hours that never apply),
 * created through the API; answers its id.
 */
async function blastTo(cohort: string, phones: string[]): Promise<string> {
  await sql`insert into contacts (organization_id, phone, phone_country, attributes, rcs_capable, consent_type, time_zone, quiet_hours_start, quiet_hours_end)
    select ${org.organizationId}::uuid, p, 'US', jsonb_build_object('cohort', ${cohort}::text), true, 'MARKETING', 'UTC', '00:00', '00:00'
    from unnest(${phones}::text[]) p`.execute(srv.context.db);
  const segment = await call(srv, 'POST', '/v1/segments/resolve', {
    key,
    body: { conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: cohort }] },
  });
  expect(segment.status, segment.text).toBe(200);
  const blast = await call(srv, 'POST', '/v1/blasts', {
    key,
    body: { name: cohort, senderId: org.senderId, contentJson: { type: 'text', text: 'Sale' }, segmentId: segment.body.data.segmentId },
  });
  expect(blast.status, blast.text).toBe(201);
  return blast.body.id as string;
}

/** The blast's messages counted by status. */
async function statusesOf(blastId: string) {
  return (
    await sql<{ status: string; n: number }>`select status, count(*)::int as n from messages
      where organization_id = ${org.organizationId}::uuid and blast_id = ${blastId}::uuid group by status`.execute(srv.context.db)
  ).rows;
}

/** The carrier simulator's rows for the blast's messages, and how many of them were sent more than once. */
async function carrierRowsOf(blastId: string) {
  return (
    await sql<{ rows: number; repeated: number }>`select count(*)::int as rows, count(*) filter (where send_calls > 1)::int as repeated
      from simulator_messages s join messages m on m.id::text = split_part(s.dedupe_key, ':', 1)
      where m.blast_id = ${blastId}::uuid`.execute(srv.context.db)
  ).rows[0];
}

/** `n` numbers ending in 1 (RCS capable in the carrier sandbox, no magic suffix) from `base`. */
const numbers = (base: number, n: number) => Array.from({ length: n }, (_, g) => `+1415${base + (g + 1) * 10 + 1}`);

describe('dispatch of a batch', () => {
  it('claims a blast batch of 1,200 in one statement and hands each recipient over once', async () => {
    const n = 1200;
    const blastId = await blastTo('batch', numbers(2000000, n));
    blastTuning.firstBatchSize = n; // the whole audience in batch 0
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/send`, { key })).status).toBe(200);
    await runBatch(srv.context, { organizationId: org.organizationId, blastId, batch: 0 });

    const statements = await dispatch({
      blast: { organizationId: org.organizationId, blastId, batch: 0, senderId: org.senderId },
    });

    expect(claims(statements)).toBe(1);
    expect(await statusesOf(blastId)).toEqual([{ status: 'sent', n }]);
    expect(await carrierRowsOf(blastId)).toEqual({ rows: n, repeated: 0 });
  });

  it('drains two blast batches fetched together side by side, each recipient handed over once', async () => {
    // Two wake jobs in one fetch (the queue fetches every one queued): the second batch is claimed while the first
    // is still with the carrier, not after its acceptance is recorded.
    const n = 6;
    const blastId = await blastTo('lanes', numbers(3000000, n));
    Object.assign(blastTuning, { firstBatchSize: n / 2, batchSize: n / 2 });
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/send`, { key })).status).toBe(200);
    for (const batch of [0, 1]) await runBatch(srv.context, { organizationId: org.organizationId, blastId, batch });

    // Both batches fit in the sender's window (10,000 a second): none of it used by the tests before.
    await senderLimiter(10_000).delete(org.senderId);
    const scope = (batch: number) => ({
      blast: { organizationId: org.organizationId, blastId, batch, senderId: org.senderId },
    });
    const seen: string[] = [];
    await watchingStatements(
      (s) => seen.push(s.text),
      () => dispatchBatch(srv.context, [{ data: scope(0) }, { data: scope(1) }]),
    );
    const claimsAt = seen.flatMap((t, i) => (t.includes('with due as') ? [i] : []));
    const firstRecord = seen.findIndex((t) => /update messages m set\s+status = case when m\.status/.test(t));
    expect(claimsAt).toHaveLength(2);
    expect(firstRecord).toBeGreaterThan(claimsAt[1]!);
    expect(await statusesOf(blastId)).toEqual([{ status: 'sent', n }]);
    expect(await carrierRowsOf(blastId)).toEqual({ rows: n, repeated: 0 });
  });

  it("claims a blast batch whole in its sender's next window when other batches took this one", async () => {
    // The sandbox sender takes 10,000 a second, more than a batch: a window another batch used up is waited for (at
    // most a second), and the batch is claimed once, whole — not claimed in part and woken again for the rest.
    const n = 4;
    const blastId = await blastTo('window', numbers(4000000, n));
    Object.assign(blastTuning, { firstBatchSize: n, batchSize: n });
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/send`, { key })).status).toBe(200);
    await runBatch(srv.context, { organizationId: org.organizationId, blastId, batch: 0 });
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .select('throughput_per_second')
      .where('id', '=', org.senderId)
      .executeTakeFirstOrThrow();
    // This second's window, used up by other batches (the limiter dispatch asks: src/domain/messaging/dispatch.ts).
    const limiter = senderLimiter(sender.throughput_per_second);
    await limiter.delete(org.senderId);
    await limiter.consume(org.senderId, sender.throughput_per_second);

    const statements = await dispatch({
      blast: { organizationId: org.organizationId, blastId, batch: 0, senderId: org.senderId },
    });
    await limiter.delete(org.senderId); // the tests after this one start with a window of their own
    expect(claims(statements)).toBe(1);
    expect(await statusesOf(blastId)).toEqual([{ status: 'sent', n }]);
  });

  it('records a fallback chosen at dispatch before the hand-over, and drops it when the carrier refuses', async () => {
    // Unknown capability; the sandbox's lookup answers no RCS for numbers ending in 5–9. …0777: refused at send.
    const [taken, refused] = await Promise.all(
      ['+14155550158', '+14155550777'].map(async (phone) => {
        const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
        expect(res.status, res.text).toBe(201);
        return res.body.id as string;
      }),
    );
    const ids: string[] = [];
    for (const contactId of [taken, refused]) {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped' } },
      });
      expect(res.status, res.text).toBe(200);
      ids.push(res.body.data.messageId);
    }

    const plans = (statements: string[]) => statements.filter((t) => /set planned_channel = v\.channel, fallback_used/.test(t)).length;
    // Each plan is written before the message is handed over, whatever the carrier answers: a receipt that comes
    // back before the acceptance is recorded must find it (test/scale-out.test.ts).
    expect(plans(await dispatch({ messageIds: [ids[0]!] }))).toBe(1);
    expect(plans(await dispatch({ messageIds: [ids[1]!] }))).toBe(1);
    const shown = async (id: string) => (await call(srv, 'GET', `/v1/messages/${id}`, { key })).body.data;
    expect(await shown(ids[0]!)).toMatchObject({
      status: 'sent', // its channel comes with the carrier's receipt; the plan is SMS (below)
      fallbackUsed: true,
      fallbackReason: 'RCS_NOT_SUPPORTED',
    });
    // Refused: failed, its fallback dropped as no carrier accepted it (fallback.ts), as when its plan was written first.
    expect(await shown(ids[1]!)).toMatchObject({ status: 'failed', fallbackUsed: false, fallbackReason: null });
    const planned = await srv.context.db.selectFrom('messages').select(['id', 'planned_channel']).where('id', 'in', ids).execute();
    expect(new Map(planned.map((m) => [m.id, m.planned_channel]))).toEqual(
      new Map([
        [ids[0], 'SMS'],
        [ids[1], 'SMS'],
      ]),
    );
  });
  it("wakes a blast batch's few messages left by id, not the whole batch again", async () => {
    // …0503: the carrier simulator answers 503 twice, so that message waits out the outage and is sent later. Its
    // wake job names it: its next claim reads it alone, not the batch's recipients and messages.
    const phones = ['+14155610011', '+14155610021', '+14155610503'];
    const blastId = await blastTo('straggler', phones);
    Object.assign(blastTuning, { firstBatchSize: phones.length, batchSize: phones.length });
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/send`, { key })).status).toBe(200);
    await runBatch(srv.context, { organizationId: org.organizationId, blastId, batch: 0 });
    await senderLimiter(10_000).delete(org.senderId);

    await dispatch({ blast: { organizationId: org.organizationId, blastId, batch: 0, senderId: org.senderId } });
    const left = await sql<{ id: string; status: string }>`select id, status from messages
      where blast_id = ${blastId}::uuid and contact_phone = ${phones[2]}`.execute(srv.context.db);
    expect(left.rows).toEqual([{ id: expect.any(String), status: 'queued' }]);
    const ofThisBlast = (data: DispatchJob) => data.blast?.blastId === blastId || data.messageIds?.includes(left.rows[0]!.id);
    const wakes = (await srv.context.queue!.findJobs<DispatchJob>(DISPATCH_QUEUE, { queued: true }))
      .filter((j) => ofThisBlast(j.data))
      .sort((a, b) => a.createdOn.getTime() - b.createdOn.getTime());
    // The batch's own wake job (queued by its acceptance), then the one for the message left, by id.
    expect(wakes.map((j) => j.data)).toEqual([
      { blast: { organizationId: org.organizationId, blastId, batch: 0, senderId: org.senderId } },
      { messageIds: [left.rows[0]!.id] },
    ]);
  });
});
