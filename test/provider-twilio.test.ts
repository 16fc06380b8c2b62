// The Twilio adapter end to end, against Prism serving Twilio's own OpenAPI document (test/fixtures/providers/):
// a send through the API reaches Twilio as a request Twilio's schemas accept, its status callbacks (signed with
// X-Twilio-Signature, as Twilio signs them) move the message, an inbound reply and a STOP take the shared inbound
// path, forged callbacks are refused with 403 and malformed signed ones with 400; number search goes to Twilio.
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleProviders } from '../src/providers/assemble.ts';
import { TwilioProvider } from '../src/providers/twilio/adapter.ts';
import { startPreferProxy, type PreferProxy } from './support/prefer-proxy.ts';
import { startPrism, type Prism } from './support/prism.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

const ACCOUNT_SID = `AC${randomBytes(16).toString('hex')}`;
const AUTH_TOKEN = randomBytes(16).toString('hex');
const SERVICE_SID = `MG${randomBytes(16).toString('hex')}`;

let prism: Prism;
let proxy: PreferProxy;
let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  prism = await startPrism(fileURLToPath(new URL('./fixtures/providers/twilio_api_v2010.messaging.json', import.meta.url)));
  // Between the adapter and Prism: picks the document's example Prism answers where a test needs one (revoke).
  proxy = await startPreferProxy(prism.baseUrl, { basicAuth: `${ACCOUNT_SID}:${AUTH_TOKEN}` });
  srv = await startTestServer({
    workers: true,
    providers: ({ db, queue }) => {
      const endpoint = { baseUrl: undefined };
      const twilioA = new TwilioProvider({
        name: 'PROVIDER_A',
        endpoint,
        settings: {
          accountSid: ACCOUNT_SID,
          authToken: AUTH_TOKEN,
          messagingServiceSid: SERVICE_SID,
          apiBaseUrl: proxy.baseUrl,
          timeoutMs: 5000,
        },
      });
      // PROVIDER_B: the same account with a wrong auth token (Twilio answers 401, error 20003).
      const twilioB = new TwilioProvider({
        name: 'PROVIDER_B',
        endpoint,
        settings: { accountSid: ACCOUNT_SID, authToken: randomBytes(16).toString('hex'), apiBaseUrl: proxy.baseUrl, timeoutMs: 5000 },
      });
      return assembleProviders({ db, queue, endpoint, real: { PROVIDER_A: twilioA, PROVIDER_B: twilioB } });
    },
  });
  org = await srv.newOrg('Twilio org');
  key = org.apiKey.secret;
}, 120_000);
afterAll(async () => {
  await srv?.close();
  await proxy?.close();
  prism?.stop();
});

async function sender(
  type: 'LONG_CODE' | 'RCS_AGENT' = 'LONG_CODE',
  provider: 'PROVIDER_A' | 'PROVIDER_B' = 'PROVIDER_A',
): Promise<{ id: string; phone: string }> {
  const phone = `+1415${randomInt(2_000_000, 9_999_999)}`;
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: org.organizationId,
      name: `Twilio ${type}`,
      type,
      status: 'ACTIVE',
      provider,
      phone_number: phone,
      is_sandbox: false,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, phone };
}

async function contact(rcsCapable: boolean | null = false): Promise<{ id: string; phone: string }> {
  const phone = `+1312${randomInt(2_000_000, 9_999_999)}`;
  const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
  expect(res.status, res.text).toBe(201);
  await srv.context.db.updateTable('contacts').set({ rcs_capable: rcsCapable }).where('id', '=', res.body.id).execute();
  return { id: res.body.id, phone };
}

const messageRow = (id: string) =>
  srv.context.db
    .selectFrom('messages')
    .select(['status', 'channel', 'planned_channel', 'provider', 'provider_message_id', 'error_code', 'fallback_used'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

async function sendAndWaitSent(body: Record<string, unknown>): Promise<{ id: string; sid: string }> {
  const res = await call(srv, 'POST', '/v1/messages/send', { key, body: { messageType: 'TRANSACTIONAL', ...body } });
  expect(res.status, res.text).toBe(200);
  const id = res.body.data.messageId as string;
  const row = await until(
    () => messageRow(id),
    (m) => m.status !== 'queued' && m.status !== 'sending',
    'the Twilio send',
  );
  expect(row, prism.violations().join('\n')).toMatchObject({ status: 'sent', provider: 'PROVIDER_A' });
  expect(row.provider_message_id).toMatch(/^(SM|MM)[0-9a-fA-F]{32}$/);
  return { id, sid: row.provider_message_id! };
}

/** Posts form fields to our callback route as Twilio does: signed over the full URL and the fields. */
async function twilioPost(pathAndQuery: string, fields: Record<string, string>, signature?: string): Promise<Response> {
  const url = `${srv.baseUrl}${pathAndQuery}`;
  const params = { AccountSid: ACCOUNT_SID, ...fields };
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}

const statusCallback = (id: string, channel: string, fields: Record<string, string>) =>
  twilioPost(`/provider-callbacks/PROVIDER_A?${new URLSearchParams({ ref: id, ch: channel })}`, fields);

describe('Twilio SMS', () => {
  it('sends through Twilio (Prism accepts every request), then delivered and failed status callbacks move the messages', async () => {
    const s = await sender();
    const c = await contact();
    const sent = await sendAndWaitSent({
      contactId: c.id,
      senderId: s.id,
      channelType: 'SMS',
      content: { type: 'text', text: 'Your order shipped' },
    });
    const queued = await statusCallback(sent.id, 'SMS', { MessageSid: sent.sid, MessageStatus: 'sent', From: s.phone, To: c.phone });
    expect(queued.status).toBe(204);
    const delivered = await statusCallback(sent.id, 'SMS', {
      MessageSid: sent.sid,
      MessageStatus: 'delivered',
      From: s.phone,
      To: c.phone,
    });
    expect(delivered.status).toBe(204);
    expect(await messageRow(sent.id)).toMatchObject({ status: 'delivered', channel: 'SMS' });

    const other = await sendAndWaitSent({ contactId: c.id, senderId: s.id, channelType: 'SMS', content: { type: 'text', text: 'Second' } });
    const failed = await statusCallback(other.id, 'SMS', {
      MessageSid: other.sid,
      MessageStatus: 'undelivered',
      ErrorCode: '30003',
      From: s.phone,
      To: c.phone,
    });
    expect(failed.status).toBe(204);
    // Twilio's error code is kept.
    expect(await messageRow(other.id)).toMatchObject({ status: 'undeliverable', error_code: 'TWILIO_30003' });
    expect(prism.violations().join('\n')).toBe('');
  });

  it('takes an inbound reply and a STOP through the shared inbound path', async () => {
    const s = await sender();
    const c = await contact();
    const reply = await twilioPost('/provider-callbacks/PROVIDER_A', {
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      SmsStatus: 'received',
      From: c.phone,
      To: s.phone,
      Body: 'Thanks!',
      NumMedia: '0',
    });
    expect(reply.status, await reply.text()).toBe(204);
    const inbound = await srv.context.db
      .selectFrom('messages')
      .select(['direction', 'channel', 'content'])
      .where('organization_id', '=', org.organizationId)
      .where('contact_id', '=', c.id)
      .where('direction', '=', 'inbound')
      .execute();
    expect(inbound).toHaveLength(1);
    expect(inbound[0]).toMatchObject({ channel: 'SMS', content: expect.objectContaining({ text: 'Thanks!' }) });

    const stop = await twilioPost('/provider-callbacks/PROVIDER_A', {
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      SmsStatus: 'received',
      From: c.phone,
      To: s.phone,
      Body: 'STOP',
      NumMedia: '0',
    });
    expect(stop.status).toBe(204);
    const optOut = await srv.context.db
      .selectFrom('opt_outs')
      .select(['phone', 'keyword'])
      .where('organization_id', '=', org.organizationId)
      .where('phone', '=', c.phone)
      .executeTakeFirst();
    expect(optOut).toMatchObject({ phone: c.phone });
    // The confirmation reply goes out through Twilio too.
    const confirmation = await until(
      () =>
        srv.context.db
          .selectFrom('messages')
          .select(['status', 'provider', 'provider_message_id'])
          .where('contact_id', '=', c.id)
          .where('origin', '=', 'keyword_reply')
          .executeTakeFirst(),
      (m) => m?.status === 'sent',
      'the STOP confirmation sent through Twilio',
    );
    expect(confirmation).toMatchObject({ provider: 'PROVIDER_A', provider_message_id: expect.stringMatching(/^(SM|MM)/) });
    const refused = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c.id,
        senderId: s.id,
        channelType: 'SMS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'After STOP' },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('OPTED_OUT');
    expect(prism.violations().join('\n')).toBe('');
  });

  it('refuses forged callbacks with 403 (bad, missing or another token’s signature) and stores nothing', async () => {
    const s = await sender();
    const c = await contact();
    const fields = {
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      SmsStatus: 'received',
      From: c.phone,
      To: s.phone,
      Body: 'forged',
      NumMedia: '0',
    };
    const url = `${srv.baseUrl}/provider-callbacks/PROVIDER_A`;
    for (const signature of ['AAAA', twilio.getExpectedTwilioSignature('another-token', url, { AccountSid: ACCOUNT_SID, ...fields })]) {
      const res = await twilioPost('/provider-callbacks/PROVIDER_A', fields, signature);
      expect(res.status).toBe(403);
    }
    const unsigned = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ AccountSid: ACCOUNT_SID, ...fields }).toString(),
    });
    expect(unsigned.status).toBe(403);
    // A signed body altered on the way (another Body) no longer matches.
    const tampered = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, { AccountSid: ACCOUNT_SID, ...fields }),
      },
      body: new URLSearchParams({ AccountSid: ACCOUNT_SID, ...fields, Body: 'changed' }).toString(),
    });
    expect(tampered.status).toBe(403);
    const stored = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(stored).toEqual([]);
  });

  it('refuses a signed callback it cannot use with 400 (a media URL that is no URI, a status callback without our ref)', async () => {
    const s = await sender();
    const c = await contact();
    const media = await twilioPost('/provider-callbacks/PROVIDER_A', {
      MessageSid: `MM${randomBytes(16).toString('hex')}`,
      SmsStatus: 'received',
      From: c.phone,
      To: s.phone,
      Body: '',
      NumMedia: '1',
      MediaUrl0: 'not a uri',
    });
    expect(media.status).toBe(400);
    const noRef = await twilioPost('/provider-callbacks/PROVIDER_A', {
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      MessageStatus: 'delivered',
    });
    expect(noRef.status).toBe(400);
  });

  it('searches Twilio’s inventory for PROVIDER_A (the request passes Prism)', async () => {
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key,
      body: { provider: 'PROVIDER_A', inventoryType: 'Local', leadingNumber: '415', capabilities: ['SMS'] },
    });
    expect(res.status, res.text).toBe(200);
    for (const row of res.body.data) expect(row.provider).toBe('PROVIDER_A');
    expect(prism.output()).toMatch(/get \/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/AvailablePhoneNumbers\/US\/Local\.json/);
    expect(prism.violations().join('\n')).toBe('');
  });
});

describe('Twilio RCS through the Messaging Service', () => {
  it('hands RCS to the Messaging Service; a delivery Twilio made by SMS is recorded as our fallback', async () => {
    const s = await sender('RCS_AGENT');
    const c = await contact(null);
    const rcs = await sendAndWaitSent({
      contactId: c.id,
      senderId: s.id,
      channelType: 'RCS',
      content: { type: 'text', text: 'Your table is ready' },
    });
    expect(await messageRow(rcs.id)).toMatchObject({ planned_channel: 'RCS', fallback_used: false });
    // Delivered over RCS: From is the agent's rcs: address.
    const read = await statusCallback(rcs.id, 'RCS', { MessageSid: rcs.sid, MessageStatus: 'read', From: 'rcs:acme_agent', To: c.phone });
    expect(read.status).toBe(204);
    expect(await messageRow(rcs.id)).toMatchObject({ status: 'read', channel: 'RCS', fallback_used: false });

    const fellBack = await sendAndWaitSent({
      contactId: c.id,
      senderId: s.id,
      channelType: 'RCS',
      content: { type: 'text', text: 'Second course' },
    });
    // Twilio's fallback: the same message delivered from the service's phone number, as SMS.
    const delivered = await statusCallback(fellBack.id, 'RCS', {
      MessageSid: fellBack.sid,
      MessageStatus: 'delivered',
      From: s.phone,
      To: c.phone,
    });
    expect(delivered.status).toBe(204);
    // (Twilio's SID says which: SM… an SMS, MM… an MMS; Prism makes either up.)
    const carried = fellBack.sid.startsWith('MM') ? 'MMS' : 'SMS';
    expect(await messageRow(fellBack.id)).toMatchObject({ status: 'delivered', channel: carried, fallback_used: true });
    const reason = await srv.context.db
      .selectFrom('messages')
      .select('fallback_reason')
      .where('id', '=', fellBack.id)
      .executeTakeFirstOrThrow();
    expect(reason.fallback_reason).toBe('RCS_NOT_SUPPORTED');
    expect(prism.violations().join('\n')).toBe('');
  });

  it('revokes an RCS message in flight with Twilio’s cancel (Status=canceled); one Twilio already sent answers 409', async () => {
    const s = await sender('RCS_AGENT');
    const c = await contact(null);
    const cancel = { method: 'POST', path: /\/Messages\/(SM|MM)[0-9a-fA-F]{32}\.json$/ };
    const rcs = await sendAndWaitSent({
      contactId: c.id,
      senderId: s.id,
      channelType: 'RCS',
      content: { type: 'text', text: 'Flash sale' },
    });
    // Twilio answers the cancel with the message canceled (the document's cancelMessage example).
    proxy.prefer({ ...cancel, value: 'example=cancelMessage' });
    try {
      const revoked = await call(srv, 'POST', `/v1/messages/${rcs.id}/revoke`, { key });
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body.data).toMatchObject({ messageId: rcs.id, status: 'revoked' });
      const request = proxy.requests.find((r) => r.method === 'POST' && r.path.endsWith(`/Messages/${rcs.sid}.json`))!;
      expect(new URLSearchParams(request.body).get('Status')).toBe('canceled');

      // Too late: Twilio answers the cancel with the message in another status (its redactBody example: sent).
      const late = await sendAndWaitSent({
        contactId: c.id,
        senderId: s.id,
        channelType: 'RCS',
        content: { type: 'text', text: 'Too late' },
      });
      proxy.prefer({ ...cancel, value: 'example=redactBody' });
      const refused = await call(srv, 'POST', `/v1/messages/${late.id}/revoke`, { key });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.code).toBe('INVALID_STATE');
      expect((await messageRow(late.id)).status).toBe('sent');
    } finally {
      proxy.prefer(undefined);
    }
    expect(prism.violations().join('\n')).toBe('');
  });
});

describe('Twilio credentials', () => {
  it('a 401 (wrong auth token) fails the message PROVIDER_AUTH_FAILED at once with Twilio’s code, and /health shows it', async () => {
    const s = await sender('LONG_CODE', 'PROVIDER_B');
    const c = await contact();
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c.id, senderId: s.id, channelType: 'SMS', messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hi' } },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.data.messageId as string;
    const row = await until(
      () =>
        srv.context.db
          .selectFrom('messages')
          .select(['status', 'error_code', 'error_message', 'cost_units'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      (m) => m.status === 'failed' || m.status === 'sent',
      'the refused send',
    );
    expect(row).toEqual({
      status: 'failed',
      error_code: 'PROVIDER_AUTH_FAILED',
      error_message:
        "Twilio refused this service's credentials (HTTP 401, TWILIO_20003: Authenticate); check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN.",
      cost_units: null,
    });
    const sends = proxy.requests.filter(
      (r) => r.method === 'POST' && r.path.endsWith('/Messages.json') && new URLSearchParams(r.body).get('To') === c.phone,
    );
    expect(sends).toHaveLength(1);
    const health = (await call(srv, 'GET', '/health')).body.providers as Array<Record<string, any>>;
    expect(health.find((p) => p.name === 'PROVIDER_B')).toMatchObject({
      credentialsRefused: true,
      circuit: 'closed',
      consecutiveFailures: 0,
    });
    expect(health.find((p) => p.name === 'PROVIDER_A')).toMatchObject({ credentialsRefused: false });
  });
});
