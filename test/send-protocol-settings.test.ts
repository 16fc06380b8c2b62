// A sender's protocol settings take effect on its messages (issue 32 item 2), through HTTP: `smartEncoding` maps
// typographic characters to GSM-7 before segmenting (preview, acceptance and the recorded bill agree), and
// `validityPeriodSeconds` fails a message that waited longer than that with `EXPIRED` and `message.failed`.
// No workers: each test runs the dispatcher itself (dispatchBatch) when it wants to.
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchBatch } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Protocol settings');
  key = org.apiKey.secret;
  // An endpoint subscribed to message.failed: the events are recorded (nothing delivers them without workers).
  const endpoint = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['message.failed'] },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
});
afterAll(() => srv.close());

async function newContact(): Promise<string> {
  const res = await call(srv, 'POST', '/v1/contacts', {
    key,
    body: { phone: `+1415${randomInt(2_000_000, 9_999_999)}` },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const sms = (config: Record<string, unknown>) =>
  call(srv, 'POST', `/v1/sender-ids/${org.senderId}/protocols`, { key, body: { type: 'SMS', config } });
const patchSms = (config: Record<string, unknown>) =>
  call(srv, 'PATCH', `/v1/sender-ids/${org.senderId}/protocols/SMS`, { key, body: { config } });

const messageRow = (id: string) => srv.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
/** The message as its conversation's list shows it (GET /v1/conversations/{id}/messages). */
async function shownMessage(id: string): Promise<Record<string, unknown>> {
  const { conversation_id } = await messageRow(id);
  const res = await call(srv, 'GET', `/v1/conversations/${conversation_id}/messages`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data.find((m: { id: string }) => m.id === id);
}
const dispatch = (id: string) => dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);

// 100 characters with curly quotes and a long dash: UCS-2 needs 2 segments (67 a part), GSM-7 one (160).
const TYPOGRAPHIC = `\u201CWe\u2019re open\u201D \u2014 ${'x'.repeat(84)}`;

describe('smartEncoding', () => {
  it('maps typographic characters to GSM-7 in the preview, the estimate at send and the bill; off, they stay UCS-2', async () => {
    expect((await sms({ smartEncoding: true })).status).toBe(200);
    const contactId = await newContact();
    const body = { contactId, channelType: 'SMS', messageType: 'TRANSACTIONAL', content: { type: 'text', text: TYPOGRAPHIC } };

    const preview = await call(srv, 'POST', '/v1/messages/preview', { key, body: { ...body, senderId: org.senderId } });
    expect(preview.status, preview.text).toBe(200);
    const shown = preview.body.data.renderings[0];
    expect(shown).toMatchObject({ encoding: 'GSM7', segments: 1, body: `"We're open" - ${'x'.repeat(84)}` });

    const sent = await call(srv, 'POST', '/v1/messages/send', { key, body });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toMatchObject({ encoding: 'GSM7', segments: 1, estimatedCost: shown.cost });
    await dispatch(sent.body.data.messageId);
    const billed = await messageRow(sent.body.data.messageId);
    expect(billed).toMatchObject({ status: 'sent', encoding: 'GSM7', segments: 1 });

    expect((await patchSms({ smartEncoding: false })).status).toBe(200);
    const plain = await call(srv, 'POST', '/v1/messages/preview', { key, body: { ...body, senderId: org.senderId } });
    expect(plain.body.data.renderings[0]).toMatchObject({ encoding: 'UCS2', segments: 2 });
    const again = await call(srv, 'POST', '/v1/messages/send', { key, body });
    expect(again.body.data).toMatchObject({ encoding: 'UCS2', segments: 2 });
    await dispatch(again.body.data.messageId);
    expect(await messageRow(again.body.data.messageId)).toMatchObject({ status: 'sent', encoding: 'UCS2', segments: 2 });
  });
});

describe('validityPeriodSeconds', () => {
  it('a message that waited longer than its channel allows fails EXPIRED with message.failed, unsent', async () => {
    expect((await patchSms({ validityPeriodSeconds: 60 })).status).toBe(200);
    const contactId = await newContact();
    const body = { contactId, channelType: 'SMS', messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your code is 1234' } };
    const [old, fresh] = [
      await call(srv, 'POST', '/v1/messages/send', { key, body }),
      await call(srv, 'POST', '/v1/messages/send', { key, body }),
    ];
    expect(old.status, old.text).toBe(200);
    // The first waited two minutes (held, behind the sender's rate, retrying: the clock is what counts).
    await sql`update messages set created_at = now() - interval '2 minutes' where id = ${old.body.data.messageId}::uuid`.execute(
      srv.context.db,
    );
    await dispatchBatch(srv.context, [{ data: { messageIds: [old.body.data.messageId, fresh.body.data.messageId] } }]);

    expect(await shownMessage(old.body.data.messageId)).toMatchObject({ status: 'failed', error: { code: 'EXPIRED' } });
    expect((await messageRow(fresh.body.data.messageId)).status).toBe('sent');
    const calls = await srv.context.db
      .selectFrom('simulator_messages')
      .select('send_calls')
      .where('dedupe_key', '=', old.body.data.messageId)
      .execute();
    expect(calls).toEqual([]); // never reached the carrier
    const events = await srv.context.db
      .selectFrom('webhook_events')
      .select('body')
      .where('organization_id', '=', org.organizationId)
      .where('type', '=', 'message.failed')
      .execute();
    const failed = events.map((e) => JSON.parse(e.body).data).find((d: { messageId: string }) => d.messageId === old.body.data.messageId);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'EXPIRED' } });
  });
});
