// GET /v1/messages/{id} (issue 37 item 7): one message by the id the send answered, with its channel, fallback
// reason, segments, cost and status history; another organization's id is a 404; the scope is conversations:read.
// Sent for real through the dispatch worker and the carrier simulator (RCS handset: sent, delivered, read).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
  [org, other] = await Promise.all([srv.newOrg('Get message org'), srv.newOrg('Other get message org')]);
});
afterAll(() => srv.close());

/** A contact whose number ends in `suffix` (carrier sandbox: 0–4 RCS, 5–9 SMS only), in UTC, never in quiet hours. */
async function contact(suffix: string, quiet = { start: '23:59', end: '00:00' }) {
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415888${String(++seq).padStart(4 - suffix.length, '0')}${suffix}`,
      attributes: '{}',
      rcs_capable: Number(suffix.at(-1)) < 5,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: quiet.start,
      quiet_hours_end: quiet.end,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

async function send(contactId: string, messageType = 'TRANSACTIONAL'): Promise<string> {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key: org.apiKey.secret,
    body: { contactId, messageType, content: { type: 'text', text: 'Your order has shipped.' } },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.messageId;
}

const get = (id: string, key = org.apiKey.secret) => call(srv, 'GET', `/v1/messages/${id}`, { key });

describe('GET /v1/messages/{id}', () => {
  it('answers the message with its channel, segments, cost and status history in order', async () => {
    const id = await send((await contact('1')).id);
    const read = await until(
      () => get(id),
      (r) => r.body.data?.status === 'read',
      'the message to be read',
      20_000,
    );
    const m = read.body.data;
    expect(m).toMatchObject({ id, direction: 'outbound', channel: 'RCS', fallbackUsed: false, fallbackReason: null, segments: 1 });
    expect(m.cost).toEqual({ amount: expect.any(String), currency: 'USD' });
    expect(m.statusHistory.map((h: { status: string }) => h.status)).toEqual(['queued', 'sent', 'delivered', 'read']);
    expect(m.statusHistory.map((h: { at: string }) => h.at)).toEqual([m.createdAt, m.sentAt, m.deliveredAt, m.readAt]);
    const times = m.statusHistory.map((h: { at: string }) => Date.parse(h.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The same message as its conversation lists it, plus the history.
    const listed = await call(srv, 'GET', `/v1/conversations/${m.conversationId}/messages`, { key: org.apiKey.secret });
    const { statusHistory: _history, ...plain } = m;
    expect(listed.body.data.find((x: { id: string }) => x.id === id)).toEqual(plain);
  });

  it('shows a message held for quiet hours, then revoked', async () => {
    const id = await send((await contact('2', { start: '00:00', end: '23:59' })).id, 'MARKETING');
    expect((await call(srv, 'POST', `/v1/messages/${id}/revoke`, { key: org.apiKey.secret })).status).toBe(200);
    const m = (await get(id)).body.data;
    expect(m.status).toBe('revoked');
    expect(m.statusHistory.map((h: { status: string }) => h.status)).toEqual(['held', 'revoked']);
    expect(m.statusHistory[1].at).toBe(m.revokedAt);
  });

  it('answers 404 for another organization’s message and an unknown id, 403 without conversations:read', async () => {
    const id = await send((await contact('3')).id);
    const theirs = await get(id, other.apiKey.secret);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('NOT_FOUND');
    expect((await get('3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b')).status).toBe(404);
    expect((await get('not-a-uuid')).status).toBe(400);
    const sender = await srv.newKey(org.organizationId, ['messages:send']);
    expect((await get(id, sender.secret)).status).toBe(403);
    const reader = await srv.newKey(org.organizationId, ['conversations:read']);
    expect((await get(id, reader.secret)).status).toBe(200);
  });
});
