// A blast's audience resolved batch by batch as it sends (issue 33), through HTTP and the real database. No worker
// runs in this file: the launch queues the first batch job, and the test runs each batch job itself (runBatch, as
// the worker would) to see the blast between two batches. Batches of 2 recipients (blastTuning).
//  - the launch answers before any recipient exists, and progress says the audience is not resolved yet;
//  - a contact who opts out after the launch but before its batch is skipped OPTED_OUT (the gate of that moment);
//  - a contact added during the send is a recipient when its id sorts after the batches already taken;
//  - a batch job run twice (at once, and again) takes its slice once and queues the next batch once;
//  - a cancel between two batches stops the slices still to come.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blastTuning, runBatch } from '../src/domain/blasts/sending.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;
const defaults = { ...blastTuning };

beforeAll(async () => {
  Object.assign(blastTuning, { batchSize: 2, firstBatchSize: 2 });
  srv = await startTestServer();
  org = await srv.newOrg('Lazy blasts org');
  key = org.apiKey.secret;
});
afterAll(async () => {
  Object.assign(blastTuning, defaults);
  await srv.close();
});

/** `n` RCS contacts of a cohort, with marketing consent and quiet hours that never apply; in contact-id order. */
async function contacts(n: number, cohort: string, id?: string) {
  const rows = [];
  for (let i = 0; i < n; i++)
    rows.push(
      await srv.context.db
        .insertInto('contacts')
        .values({
          ...(id ? { id } : {}),
          organization_id: org.organizationId,
          phone: `+1415${String(++seq).padStart(6, '0')}7`,
          attributes: JSON.stringify({ cohort }),
          rcs_capable: true,
          consent_type: 'MARKETING',
          time_zone: 'UTC',
          quiet_hours_start: '00:00',
          quiet_hours_end: '00:00',
        })
        .returning(['id', 'phone'])
        .executeTakeFirstOrThrow(),
    );
  return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** A blast to a cohort's segment, launched now (no worker runs: its batches wait for the test). */
async function launched(cohort: string): Promise<string> {
  const seg = await call(srv, 'POST', '/v1/segments/resolve', {
    key,
    body: { conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: cohort }] },
  });
  expect(seg.status).toBe(200);
  const created = await call(srv, 'POST', '/v1/blasts', {
    key,
    body: {
      name: cohort,
      senderId: org.senderId,
      contentJson: { type: 'text', text: `Hello ${cohort}` },
      segmentId: seg.body.data.segmentId,
    },
  });
  expect(created.status).toBe(201);
  const launch = await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key });
  expect(launch.status).toBe(200);
  expect(launch.body.data).toMatchObject({ status: 'SENDING', scheduledAt: null, recipientCount: null, estimatedCost: null });
  return created.body.id;
}

const batch = (blastId: string, n: number) => runBatch(srv.context, { organizationId: org.organizationId, blastId, batch: n });

async function progress(blastId: string) {
  const res = await call(srv, 'GET', `/v1/blasts/${blastId}/progress`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The blast's recipient rows: contact, batch, status, reason. */
function recipients(blastId: string) {
  return srv.context.db
    .selectFrom('blast_recipients')
    .select(['contact_id', 'batch', 'status', 'skip_reason', 'message_id'])
    .where('blast_id', '=', blastId)
    .orderBy('contact_id')
    .execute();
}

/** Send-batch jobs queued for the blast, by batch number. */
async function batchJobs(blastId: string): Promise<number[]> {
  const jobs = await srv.context.queue!.findJobs<{ batch: number }>('blasts.send-batch', { data: { blastId } });
  return jobs.map((j) => j.data.batch).sort((a, b) => a - b);
}

describe('the audience resolved batch by batch', () => {
  it('the launch answers before any recipient exists; progress says the audience is not resolved, then counts each batch', async () => {
    const cs = await contacts(5, 'lazy-launch');
    const id = await launched('lazy-launch');
    expect(await recipients(id)).toEqual([]);
    expect(await batchJobs(id)).toEqual([0]);
    expect(await progress(id)).toMatchObject({
      status: 'SENDING',
      totalRecipients: 0,
      pendingRecipients: 0,
      audienceResolved: false,
      percentDispatched: 0,
    });
    const blast = (await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body;
    expect(blast).toMatchObject({ status: 'SENDING', recipientCount: null });

    await batch(id, 0);
    const first = await recipients(id);
    expect(first.map((r) => [r.contact_id, r.batch, r.status])).toEqual([
      [cs[0]!.id, 0, 'accepted'],
      [cs[1]!.id, 0, 'accepted'],
    ]);
    expect(await progress(id)).toMatchObject({ totalRecipients: 2, audienceResolved: false });
    await batch(id, 1);
    await batch(id, 2);
    expect((await recipients(id)).map((r) => [r.contact_id, r.batch, r.status])).toEqual(
      cs.map((c, i) => [c.id, Math.floor(i / 2), 'accepted']),
    );
    expect(await progress(id)).toMatchObject({ totalRecipients: 5, pendingRecipients: 0, audienceResolved: true });
    // The last slice was short: no batch 3.
    expect(await batchJobs(id)).toEqual([0, 1, 2]);
  });

  it('a contact who opts out after the launch, before its batch, is skipped OPTED_OUT', async () => {
    const cs = await contacts(4, 'lazy-optout');
    const id = await launched('lazy-optout');
    await batch(id, 0);
    const late = cs[3]!;
    // Its batch has not come: it is no recipient yet.
    expect((await recipients(id)).map((r) => r.contact_id)).not.toContain(late.id);
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: late.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    await batch(id, 1);
    const rows = await recipients(id);
    expect(rows.find((r) => r.contact_id === late.id)).toMatchObject({
      batch: 1,
      status: 'skipped',
      skip_reason: 'OPTED_OUT',
      message_id: null,
    });
    expect(rows.filter((r) => r.status === 'accepted')).toHaveLength(3);
    expect(await progress(id)).toMatchObject({ totalRecipients: 3, skipped: 1, skippedByReason: { OPTED_OUT: 1 } });
  });

  it('a contact added during the send is reached when its id sorts after the batches already taken (a new id does), not otherwise', async () => {
    const cs = await contacts(3, 'lazy-added');
    const id = await launched('lazy-added');
    await batch(id, 0);
    // Contact ids are time-ordered (a new one sorts last); explicit ids show the rule: the order against the batches taken.
    const [before] = await contacts(1, 'lazy-added', '00000000-0000-4000-8000-000000000001');
    const [after] = await contacts(1, 'lazy-added', 'ffffffff-ffff-4fff-bfff-ffffffffffff');
    await batch(id, 1);
    await batch(id, 2);
    const rows = await recipients(id);
    expect(rows.map((r) => r.contact_id)).toEqual([...cs.map((c) => c.id), after!.id]);
    expect(rows.map((r) => r.contact_id)).not.toContain(before!.id);
    expect(await progress(id)).toMatchObject({ totalRecipients: 4, audienceResolved: true });
  });

  it('a batch job run twice at once, and again, takes its slice once and sends nobody twice', async () => {
    const cs = await contacts(5, 'lazy-twice');
    const id = await launched('lazy-twice');
    await Promise.all([batch(id, 0), batch(id, 0)]);
    await batch(id, 0);
    expect((await recipients(id)).map((r) => [r.contact_id, r.batch])).toEqual([
      [cs[0]!.id, 0],
      [cs[1]!.id, 0],
    ]);
    // The next batch was queued once.
    expect(await batchJobs(id)).toEqual([0, 1]);
    await Promise.all([batch(id, 1), batch(id, 1), batch(id, 2)]);
    await batch(id, 2);
    await batch(id, 1);
    const rows = await recipients(id);
    expect(rows.map((r) => r.contact_id)).toEqual(cs.map((c) => c.id));
    expect(rows.every((r) => r.status === 'accepted')).toBe(true);
    const messages = await srv.context.db
      .selectFrom('messages')
      .select(['contact_id'])
      .where(
        'contact_id',
        'in',
        cs.map((c) => c.id),
      )
      .execute();
    expect(messages).toHaveLength(5);
  });

  it('a cancel between two batches stops the slices still to come', async () => {
    await contacts(5, 'lazy-cancel');
    const id = await launched('lazy-cancel');
    await batch(id, 0);
    const cancel = await call(srv, 'POST', `/v1/blasts/${id}/cancel`, { key });
    expect(cancel.status).toBe(200);
    await batch(id, 1);
    await batch(id, 2);
    const rows = await recipients(id);
    // Only the first slice was ever resolved; its queued messages were withdrawn.
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.batch === 0 && r.status === 'cancelled')).toBe(true);
    expect(await batchJobs(id)).toEqual([0, 1]);
    expect(await progress(id)).toMatchObject({ status: 'CANCELLED', cancelled: 2, pendingRecipients: 0, audienceResolved: false });
  });
});
