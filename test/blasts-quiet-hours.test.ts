// A blast that waits for quiet hours says so (issue 37 item 9): the estimate counts the eligible recipients inside
// their quiet hours now, with the time the last of them is due, and the progress shows their messages as held (not
// dispatched) with that time. Before, progress read `percentDispatched: 100` beside `held: 10`, with no end given.
// Deterministic: the contacts are in UTC, one with a quiet period around the whole day (00:00–23:59) and one with
// a one-minute period that does not cover now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Quiet blasts org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

/** A MARKETING-consented RCS contact in UTC with the quiet period `start`–`end`. */
async function contact(start: string, end: string) {
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415777${String(++seq).padStart(4, '0')}`,
      attributes: '{}',
      rcs_capable: true,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: start,
      quiet_hours_end: end,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** 23:59 UTC today, when a 00:00–23:59 quiet period ends. */
const endOfQuiet = () => {
  const d = new Date();
  d.setUTCHours(23, 59, 0, 0);
  return d.toISOString();
};

describe('a blast held by quiet hours', () => {
  it('estimates the recipients inside their quiet hours, and its progress shows them held with the time the last is due', async () => {
    // A one-minute quiet period that cannot cover now (unless the test runs at 23:59 UTC, when it is skipped).
    if (new Date().getUTCHours() === 23 && new Date().getUTCMinutes() >= 58) return;
    const quiet = await contact('00:00', '23:59');
    const open = await contact('23:59', '00:00');
    const created = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Quiet',
        senderId: org.senderId,
        messageType: 'MARKETING',
        contentJson: { type: 'text', text: 'Sale' },
        contactIds: [quiet.id, open.id],
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;

    const estimate = await call(srv, 'GET', `/v1/blasts/${id}/estimate`, { key });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.body.data.audience).toMatchObject({ total: 2, eligible: 2, inQuietHours: 1, heldUntil: endOfQuiet() });

    expect((await call(srv, 'POST', `/v1/blasts/${id}/send`, { key })).status).toBe(200);
    const progress = await until(
      async () => (await call(srv, 'GET', `/v1/blasts/${id}/progress`, { key })).body.data,
      (p) => p.counts.held === 1 && p.counts.queued === 0 && p.totalRecipients === 2,
      'the blast to hand its one sendable message over',
      20_000,
    );
    expect(progress.percentDispatched).toBe(50);
    expect(progress.heldUntil).toBe(endOfQuiet());
    // The detail's progress is the same object.
    expect((await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body.progress).toMatchObject({
      heldUntil: endOfQuiet(),
      percentDispatched: 50,
    });
  });

  it('says nobody is held when nobody is in quiet hours (and for TRANSACTIONAL blasts)', async () => {
    const quiet = await contact('00:00', '23:59');
    const created = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Receipts',
        senderId: org.senderId,
        messageType: 'TRANSACTIONAL',
        contentJson: { type: 'text', text: 'Your receipt' },
        contactIds: [quiet.id],
      },
    });
    expect(created.status, created.text).toBe(201);
    const estimate = await call(srv, 'GET', `/v1/blasts/${created.body.id}/estimate`, { key });
    expect(estimate.body.data.audience).toMatchObject({ eligible: 1, inQuietHours: 0, heldUntil: null });
  });
});
