// Public sign-ups as an attacker would send them, against a server with the default configuration (no
// TRUST_PROXY): each request comes from a loopback address of its own (127.x.y.z), so the connection's address is
// the client's and tests never share a rate-limit bucket. Forged X-Forwarded-For, the per-phone and per-campaign
// limits, destination countries, confirmed opt-in through the handset's YES (through the carrier callback), an
// existing customer left untouched, plain names in the welcome text, and the expiry of unconfirmed sign-ups.
import { randomInt } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { purgeExpiredSignUps } from '../src/domain/acquisition/pending.ts';
import { PUBLIC_CONFIRM_MESSAGE } from '../src/domain/acquisition/public-enroll.ts';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let listId: string;
let senderNumber: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Public sign-up org');
  key = org.apiKey.secret;
  listId = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'Public list' } })).body.data.id;
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
});
afterAll(() => srv.close());

let seq = 0;
const phone = () => `+1415555${String(5000 + seq++).padStart(4, '0')}`;
/** A loopback address no other request of the run uses: the connection's address, i.e. one real client. */
const client = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

type Answer = { status: number; body: any; headers: Record<string, string | string[] | undefined> };

/** POST `body` as JSON from the local address `from`. */
function postFrom(from: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(srv.baseUrl + path);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (res) => {
        let raw = '';
        res.on('data', (chunk: Buffer) => (raw += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: raw ? JSON.parse(raw) : undefined, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const enroll = (campaignId: string, body: Record<string, unknown>, from = client(), headers: Record<string, string> = {}) =>
  postFrom(from, `/public/acquisition/${campaignId}/enroll`, { consent: true, ...body }, headers);

async function campaign(body: Record<string, unknown> = {}) {
  const res = await call(srv, 'POST', '/acquisition-campaigns', {
    key,
    body: { name: 'Spring club', type: 'WEB_FORM', listId, status: 'ACTIVE', ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; confirmedOptIn: boolean; allowedCountries: string[] | null; maxSignupsPerHour: number };
}

/** A text from the handset `from` to the organization's sender, as the carrier delivers it. */
async function reply(from: string, text: string): Promise<void> {
  const payload = JSON.stringify({
    type: 'inbound',
    providerMessageId: `SIMIN${randomInt(1e12)}`,
    from,
    to: senderNumber,
    channel: 'SMS',
    text,
    at: new Date().toISOString(),
  });
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), payload) },
    body: payload,
  });
  expect(res.status).toBe(204);
}

async function contactOf(num: string) {
  const id = (
    await srv.context.db
      .selectFrom('contacts')
      .select('id')
      .where('organization_id', '=', org.organizationId)
      .where('phone', '=', num)
      .executeTakeFirst()
  )?.id;
  if (!id) return undefined;
  const res = await call(srv, 'GET', `/v1/contacts/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}
const consentOf = async (contactId: string) =>
  (await call(srv, 'GET', `/v1/contacts/${contactId}/consent`, { key })).body.data as Array<Record<string, unknown>>;
const statsOf = async (campaignId: string) => (await call(srv, 'GET', `/acquisition-campaigns/${campaignId}`, { key })).body.stats;

/**
 * The texts in the contact's conversations, newest first, with their conversation's source. (The conversations
 * are found in the database: a list's `lastMessagePreview` of a text over 100 characters is issue 31's item 3.)
 */
async function textsOf(contactId: string) {
  const convs = await srv.context.db
    .selectFrom('conversations')
    .select('id')
    .where('organization_id', '=', org.organizationId)
    .where('contact_id', '=', contactId)
    .execute();
  const out: Array<{ direction: string; text: string; source: { type: string; campaignId: string | null } }> = [];
  for (const c of convs) {
    const source = (await call(srv, 'GET', `/v1/conversations/${c.id}/source`, { key })).body.data;
    const msgs = (await call(srv, 'GET', `/v1/conversations/${c.id}/messages?limit=100`, { key })).body.data as Array<{
      direction: string;
      content: { text?: string };
      createdAt: string;
    }>;
    for (const m of msgs) out.push({ direction: m.direction, text: m.content.text ?? '', source });
  }
  return out;
}

describe('the client address', () => {
  it('is the connection’s: forged X-Forwarded-For values share one client’s 10 a minute, and another client is not affected', async () => {
    const c = await campaign({ welcomeMessage: null, confirmedOptIn: false });
    const attacker = client();
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push(
        (await enroll(c.id, { phone: phone() }, attacker, { 'x-forwarded-for': `198.51.100.${i + 1}, 203.0.113.${i + 1}` })).status,
      );
    }
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429, 429, 429, 429]);
    const rows = await srv.context.db.selectFrom('acquisition_enrollments').select('ip').where('campaign_id', '=', c.id).execute();
    expect(rows.map((r) => r.ip)).toEqual(Array<string>(10).fill(attacker));
    // Without the header, another caller has a bucket of its own (not one `unknown` for everybody).
    expect((await enroll(c.id, { phone: phone() })).status).toBe(200);
  });

  it('through /mcp too: the MCP request’s connection is the client, not one bucket shared by every MCP caller', async () => {
    const c = await campaign({ welcomeMessage: null, confirmedOptIn: false });
    const viaMcp = (from: string) =>
      postFrom(
        from,
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'enrollPublicAcquisitionContact', arguments: { campaignId: c.id, body: { phone: phone(), consent: true } } },
        },
        { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream' },
      );
    const first = client();
    const outcomes: boolean[] = [];
    for (let i = 0; i < 11; i++) outcomes.push((await viaMcp(first)).body.result.isError === true);
    expect(outcomes).toEqual([...Array<boolean>(10).fill(false), true]);
    const other = await viaMcp(client());
    expect(other.body.result.isError, JSON.stringify(other.body)).not.toBe(true);
  });

  it('TRUST_PROXY is read as express reads `trust proxy`, and a bad value stops the start', () => {
    const of = (v: string | undefined) => loadConfig({ NODE_ENV: 'test', ...(v === undefined ? {} : { TRUST_PROXY: v }) }).trustProxy;
    expect(of(undefined)).toBe(false);
    expect(of('false')).toBe(false);
    expect(of('true')).toBe(true);
    expect(of('2')).toBe(2);
    expect(of('10.0.0.0/8, loopback')).toBe('10.0.0.0/8, loopback');
    expect(() => of('10.0.0.0/33')).toThrow(/TRUST_PROXY/);
    expect(() => of('proxy.example')).toThrow(/TRUST_PROXY/);
  });
});

describe('limits and destinations', () => {
  it('takes 3 sign-ups of one phone a day across the organization’s campaigns, and maxSignupsPerHour per campaign', async () => {
    const a = await campaign({ welcomeMessage: null, confirmedOptIn: false });
    const b = await campaign({ welcomeMessage: null, confirmedOptIn: false });
    const victim = phone();
    expect((await enroll(a.id, { phone: victim })).status).toBe(200);
    expect((await enroll(b.id, { phone: victim })).status).toBe(200);
    expect((await enroll(a.id, { phone: victim })).status).toBe(200); // already enrolled: still a sign-up of this phone
    const fourth = await enroll(b.id, { phone: victim });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('phone number') });
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(3600);

    const small = await campaign({ welcomeMessage: null, confirmedOptIn: false, maxSignupsPerHour: 2 });
    expect(small.maxSignupsPerHour).toBe(2);
    expect((await enroll(small.id, { phone: phone() })).status).toBe(200);
    expect((await enroll(small.id, { phone: phone() })).status).toBe(200);
    const third = await enroll(small.id, { phone: phone() });
    expect(third.status).toBe(429);
    expect(third.body.message).toContain('campaign');
    // Refused attempts count too (3 so far): a higher limit takes more at once.
    expect(
      (await call(srv, 'PUT', `/acquisition-campaigns/${small.id}`, { key, body: { maxSignupsPerHour: 5 } })).body.maxSignupsPerHour,
    ).toBe(5);
    expect((await enroll(small.id, { phone: phone() })).status).toBe(200);
  });

  it('takes numbers of the sender’s country only, unless allowedCountries says otherwise', async () => {
    const c = await campaign({ welcomeMessage: 'Welcome!' });
    expect(c.allowedCountries).toBeNull();
    for (const foreign of ['+6797012345', '+2348021234567', '+37251234567']) {
      const res = await enroll(c.id, { phone: foreign });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_PHONE', details: [expect.objectContaining({ field: 'body.phone' })] });
      expect(await contactOf(foreign)).toBeUndefined(); // nothing stored, nothing sent
    }
    expect((await enroll(c.id, { phone: phone() })).status).toBe(200);

    const fiji = await campaign({ allowedCountries: ['FJ'], confirmedOptIn: false, welcomeMessage: null });
    expect(fiji.allowedCountries).toEqual(['FJ']);
    expect((await enroll(fiji.id, { phone: '+6797012345' })).status).toBe(200);
    expect((await enroll(fiji.id, { phone: phone() })).status).toBe(400);

    const bad = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'x', type: 'LINK', listId, allowedCountries: ['US', 'ZZ'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([expect.objectContaining({ field: 'body.allowedCountries.1' })]);
  });
});

describe('confirmed opt-in', () => {
  it('records consent only after the handset replies YES, then tags and welcomes it', async () => {
    const c = await campaign({ name: 'Spring club', welcomeMessage: 'Welcome, {{name}}! Reply STOP to opt out.' });
    expect(c.confirmedOptIn).toBe(true);
    const num = phone();
    const visitor = client();
    const res = await enroll(c.id, { phone: num, name: 'Dana', attributes: { store: 'SF' } }, visitor, { 'user-agent': 'Browser/1.0' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ status: 'received', message: PUBLIC_CONFIRM_MESSAGE, redirectUrl: null });

    // Only a bare contact to send the request to: no name, attributes, tag or consent yet.
    const waiting = await contactOf(num);
    expect(waiting).toMatchObject({ name: null, attributes: {}, tags: [], tcpa: { consentType: 'NONE' } });
    expect(await consentOf(waiting.id)).toEqual([]);
    expect(await statsOf(c.id)).toMatchObject({ enrolledCount: 0, pendingCount: 1 });
    const asked = await textsOf(waiting.id);
    expect(asked).toEqual([
      {
        direction: 'outbound',
        text: expect.stringMatching(/^Spring club: reply YES to confirm/),
        source: expect.objectContaining({ type: 'acquisition', campaignId: c.id }),
      },
    ]);

    // Another sign-up while it waits sends nothing more; another text is not a confirmation.
    expect((await enroll(c.id, { phone: num, name: 'Dana' })).status).toBe(200);
    await reply(num, 'hello');
    expect((await textsOf(waiting.id)).filter((m) => m.direction === 'outbound')).toHaveLength(1);
    expect(await consentOf(waiting.id)).toEqual([]);

    await reply(num, ' Yes! ');
    const enrolled = await contactOf(num);
    expect(enrolled).toMatchObject({ name: 'Dana', attributes: { store: 'SF' }, tags: [listId], tcpa: { consentType: 'MARKETING' } });
    const history = await consentOf(enrolled.id);
    expect(history).toEqual([expect.objectContaining({ source: 'ACQUISITION', consentType: 'MARKETING' })]); // no OPT_IN of the YES keyword
    expect(JSON.stringify(history[0])).toContain(visitor);
    expect(await statsOf(c.id)).toMatchObject({ enrolledCount: 1, newContactCount: 1, pendingCount: 0 });
    const row = await srv.context.db
      .selectFrom('acquisition_enrollments')
      .selectAll()
      .where('campaign_id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ via: 'public', ip: visitor, user_agent: 'Browser/1.0', welcome_message_id: expect.any(String) });
    expect((await textsOf(enrolled.id)).filter((m) => m.direction === 'outbound').map((m) => m.text)).toContain(
      'Welcome, Dana! Reply STOP to opt out.',
    );

    // A YES with nothing waiting, from a contact who is not opted out, is an ordinary reply (issue 33 item 3).
    await reply(num, 'YES');
    expect((await consentOf(enrolled.id)).map((e) => e.action)).not.toContain('OPT_IN');
  });

  it('a public sign-up of an existing customer changes nothing of theirs, even with confirmation off; the YES then only adds consent and the tag', async () => {
    const c = await campaign({ confirmedOptIn: false, welcomeMessage: 'Welcome, {{name}}!' });
    const num = phone();
    const made = await call(srv, 'POST', '/v1/contacts', {
      key,
      body: { phone: num, name: 'Kim', attributes: { email: 'kim@shop.example', tier: 'gold' }, consentType: 'TRANSACTIONAL' },
    });
    expect(made.status, made.text).toBe(201);
    const before = await contactOf(num);
    const history = await consentOf(before.id);

    const res = await enroll(c.id, {
      phone: num,
      name: 'Mallory',
      email: 'mallory@evil.example',
      attributes: { tier: 'none', note: 'x' },
      consentText: 'I agree to everything.',
    });
    expect(res.status).toBe(200);
    expect(await contactOf(num)).toEqual(before);
    expect(await consentOf(before.id)).toEqual(history);
    expect(await statsOf(c.id)).toMatchObject({ enrolledCount: 0, pendingCount: 1 });

    await reply(num, 'yes');
    const after = await contactOf(num);
    expect(after).toMatchObject({
      name: 'Kim',
      attributes: { email: 'kim@shop.example', tier: 'gold' },
      tags: [listId],
      tcpa: { consentType: 'MARKETING' },
    });
    expect((await consentOf(before.id))[0]).toMatchObject({ source: 'ACQUISITION', consentType: 'MARKETING' });
    expect((await textsOf(after.id)).map((m) => m.text)).toContain('Welcome, Kim!');
  });

  it('an unconfirmed sign-up expires after 24 hours: a late YES is the opt-in keyword, and the hourly job removes it', async () => {
    const c = await campaign({ welcomeMessage: null });
    const num = phone();
    expect((await enroll(c.id, { phone: num })).status).toBe(200);
    await srv.context.db
      .updateTable('acquisition_pending_enrollments')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('campaign_id', '=', c.id)
      .execute();
    expect(await statsOf(c.id)).toMatchObject({ pendingCount: 0 });
    await reply(num, 'YES');
    expect(await statsOf(c.id)).toMatchObject({ enrolledCount: 0 });
    expect(await purgeExpiredSignUps(srv.context.db)).toBeGreaterThanOrEqual(1);
    expect(
      await srv.context.db.selectFrom('acquisition_pending_enrollments').select('id').where('campaign_id', '=', c.id).execute(),
    ).toEqual([]);
  });

  it('a STOP before the YES drops the sign-up; an opted-out phone is sent nothing', async () => {
    const c = await campaign({ welcomeMessage: 'Welcome!' });
    const num = phone();
    expect((await enroll(c.id, { phone: num })).status).toBe(200);
    await reply(num, 'STOP');
    await reply(num, 'YES'); // the opt-in keyword again, not a confirmation
    expect(await statsOf(c.id)).toMatchObject({ enrolledCount: 0, pendingCount: 0 });

    const out = phone();
    await reply(out, 'STOP');
    const contact = await contactOf(out);
    const texts = await textsOf(contact.id); // the STOP and its confirmation
    expect((await enroll(c.id, { phone: out })).status).toBe(200);
    expect(await textsOf(contact.id)).toEqual(texts);
    expect(await statsOf(c.id)).toMatchObject({ pendingCount: 0 });
  });
});

describe('visitor-supplied names in texts', () => {
  it('renders a plain name only: no URL, no other words, no control characters', async () => {
    const c = await campaign({ confirmedOptIn: false, welcomeMessage: 'Welcome, {{name}}! Reply STOP to opt out.' });
    const welcome = async (name: string) => {
      const num = phone();
      expect((await enroll(c.id, { phone: num, name })).status).toBe(200);
      const contact = await contactOf(num);
      return { contact, texts: (await textsOf(contact.id)).map((m) => m.text) };
    };
    const phishing = await welcome('Bank alert: your card is locked, verify at https://evil.example/x');
    expect(phishing.texts).toEqual(['Welcome! Reply STOP to opt out.']);
    expect((await welcome('evil.example')).texts).toEqual(['Welcome! Reply STOP to opt out.']);
    expect((await welcome("Mary-Jane O'Neil")).texts).toEqual(["Welcome, Mary-Jane O'Neil! Reply STOP to opt out."]);
    const hidden = await welcome('Da\u200bna\u0007');
    expect(hidden.contact.name).toBe('Dana');
    expect(hidden.texts).toEqual(['Welcome, Dana! Reply STOP to opt out.']);
  });
});
