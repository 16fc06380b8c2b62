// Acquisition campaigns through HTTP: CRUD and states, immutable fields, server-side and public enrollment
// (consent, list tag, welcome message through the one send path, idempotency per phone, opted-out and DNC
// phones), the public endpoint's rate limit (shared by every API process), and tenancy.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { enrollByKeyword } from '../src/domain/acquisition/keyword.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { startServing } from './support/processes.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let listId: string;

beforeAll(async () => {
  srv = await startTestServer({ config: { trustProxy: 'loopback' } }); // the tests' X-Forwarded-For comes through a trusted proxy
  org = await srv.newOrg('Acquisition org');
  other = await srv.newOrg('Other acquisition org');
  key = org.apiKey.secret;
  listId = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'VIP list' } })).body.data.id;
});
afterAll(() => srv.close());

const phone = (n: number) => `+1415555${String(n).padStart(4, '0')}`;
/** A client address of its own per test, so rate-limit buckets never mix. */
const ip = () => `203.0.113.${randomInt(1, 254)}, 10.${randomInt(0, 255)}.${randomInt(0, 255)}.${randomInt(1, 254)}`;

async function campaign(body: Record<string, unknown> = {}) {
  const res = await call(srv, 'POST', '/acquisition-campaigns', {
    key,
    body: {
      name: 'Holiday VIP',
      type: 'QR_CODE',
      listId,
      status: 'ACTIVE',
      welcomeMessage: 'Welcome, {{name}}! Reply STOP to opt out.',
      ...body,
    },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; status: string; enrollmentUrl: string };
}

describe('campaign CRUD and states', () => {
  it('creates, reads, lists, updates and deletes', async () => {
    const res = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'Signage', type: 'KEYWORD', listId, keyword: 'vip', shortcode: '55123' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'DRAFT',
      keyword: 'VIP',
      shortcode: '55123',
      senderId: null,
      consentText: expect.stringContaining('STOP'),
    });
    expect(res.body.enrollmentUrl).toContain(`/public/acquisition/${res.body.id}/enroll`);
    const id = res.body.id;

    const got = await call(srv, 'GET', `/acquisition-campaigns/${id}`, { key });
    expect(got.body).toMatchObject({ id, stats: { enrolledCount: 0, newContactCount: 0, lastEnrolledAt: null }, qrCodeGeneratedAt: null });

    const list = await call(srv, 'GET', '/acquisition-campaigns?status=DRAFT&type=KEYWORD', { key });
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(id);
    expect(
      (await call(srv, 'GET', '/acquisition-campaigns?status=ACTIVE&type=KEYWORD', { key })).body.data.map((c: { id: string }) => c.id),
    ).not.toContain(id);

    // The whole object can be PUT back (immutable fields equal, keyword compared case-insensitively).
    const { id: _i, enrollmentUrl: _e, createdAt: _c, updatedAt: _u, ...whole } = res.body;
    const put = await call(srv, 'PUT', `/acquisition-campaigns/${id}`, { key, body: { ...whole, keyword: 'Vip', name: 'Renamed' } });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('Renamed');

    const dup = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'Again', type: 'KEYWORD', listId, keyword: 'VIP', shortcode: '55123' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');

    expect((await call(srv, 'DELETE', `/acquisition-campaigns/${id}`, { key })).status).toBe(204);
    expect((await call(srv, 'GET', `/acquisition-campaigns/${id}`, { key })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/acquisition-campaigns/${id}`, { key })).status).toBe(404);
    // The keyword is released.
    expect(
      (
        await call(srv, 'POST', '/acquisition-campaigns', {
          key,
          body: { name: 'Again', type: 'KEYWORD', listId, keyword: 'VIP', shortcode: '55123' },
        })
      ).status,
    ).toBe(201);
  });

  it('refuses changes to immutable fields, naming each', async () => {
    const c = await campaign({ status: 'DRAFT' });
    const res = await call(srv, 'PUT', `/acquisition-campaigns/${c.id}`, {
      key,
      body: { type: 'LINK', listId: '00000000-0000-4000-8000-000000000000', name: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      expect.objectContaining({ field: 'body.type', code: 'immutable' }),
      expect.objectContaining({ field: 'body.listId', code: 'immutable' }),
    ]);
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.name).toBe('Holiday VIP');
  });

  it('moves through the states and refuses illegal moves with 409 INVALID_STATE', async () => {
    const c = await campaign({ status: 'DRAFT' });
    const move = (status: string) => call(srv, 'PUT', `/acquisition-campaigns/${c.id}`, { key, body: { status } });
    expect((await move('PAUSED')).status).toBe(409);
    expect((await move('ACTIVE')).body.status).toBe('ACTIVE');
    expect((await move('PAUSED')).body.status).toBe('PAUSED');
    expect((await move('ACTIVE')).body.status).toBe('ACTIVE');
    expect((await move('DRAFT')).body.code).toBe('INVALID_STATE');
    expect((await move('ENDED')).body.status).toBe('ENDED');
    const back = await move('ACTIVE');
    expect(back.status).toBe(409);
    expect(back.body.code).toBe('INVALID_STATE');
  });

  it('is ENDED once endsAt has passed, and no longer enrolls', async () => {
    const c = await campaign({ startsAt: '2020-01-01T00:00:00Z', endsAt: '2020-01-02T00:00:00Z' });
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.status).toBe('ENDED');
    const res = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: phone(3050), consent: true } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('INVALID_STATE');
    const bad = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'x', type: 'LINK', listId, startsAt: '2027-01-02T00:00:00Z', endsAt: '2027-01-01T00:00:00Z' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([expect.objectContaining({ field: 'body.endsAt' })]);
  });

  it('refuses another organization’s tag or sender with 404 naming the field', async () => {
    const theirTag = (await call(srv, 'POST', '/v1/tags', { key: other.apiKey.secret, body: { name: 'Theirs' } })).body.data.id;
    const res = await call(srv, 'POST', '/acquisition-campaigns', { key, body: { name: 'x', type: 'LINK', listId: theirTag } });
    expect(res.status).toBe(404);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.listId' })]);
    const sender = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'x', type: 'LINK', listId, senderId: other.senderId },
    });
    expect(sender.status).toBe(404);
    expect(sender.body.details).toEqual([expect.objectContaining({ field: 'body.senderId' })]);
  });

  it('keeps campaigns apart between organizations (tenancy) and answers 403 without the scope', async () => {
    const c = await campaign();
    for (const [method, path] of [
      ['GET', `/acquisition-campaigns/${c.id}`],
      ['DELETE', `/acquisition-campaigns/${c.id}`],
    ] as const) {
      expect((await call(srv, method, path, { key: other.apiKey.secret })).status).toBe(404);
    }
    expect((await call(srv, 'PUT', `/acquisition-campaigns/${c.id}`, { key: other.apiKey.secret, body: { name: 'x' } })).status).toBe(404);
    expect(
      (await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key: other.apiKey.secret, body: { phone: phone(3000), consent: true } }))
        .status,
    ).toBe(404);
    expect(
      (await call(srv, 'GET', '/acquisition-campaigns', { key: other.apiKey.secret })).body.data.map((x: { id: string }) => x.id),
    ).not.toContain(c.id);
    const readOnly = await srv.newKey(org.organizationId, ['acquisition:read']);
    expect(
      (await call(srv, 'POST', '/acquisition-campaigns', { key: readOnly.secret, body: { name: 'x', type: 'LINK', listId } })).status,
    ).toBe(403);
  });
});

describe('enrollAcquisitionContact', () => {
  it('creates the contact, tags it, records consent and sends the welcome message into its conversation', async () => {
    const c = await campaign();
    const res = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, {
      key,
      body: { phone: phone(3101), name: 'Dana', consent: true, attributes: { store: 'SF' } },
    });
    expect(res.status).toBe(200);
    const e = res.body.data;
    expect(e).toMatchObject({
      campaignId: c.id,
      phone: phone(3101),
      status: 'enrolled',
      contactCreated: true,
      welcomeMessageId: expect.any(String),
    });

    const contact = (await call(srv, 'GET', `/v1/contacts/${e.contactId}`, { key })).body;
    expect(contact).toMatchObject({ name: 'Dana', tags: [listId], attributes: { store: 'SF' } });
    const history = await call(srv, 'GET', `/v1/contacts/${e.contactId}/consent`, { key });
    expect(history.body.data[0]).toMatchObject({ source: 'ACQUISITION', consentType: 'MARKETING' });

    const convs = await call(srv, 'GET', `/v1/conversations?contactId=${e.contactId}`, { key });
    expect(convs.body.data[0].source).toBe('acquisition');
    expect((await call(srv, 'GET', `/v1/conversations/${convs.body.data[0].id}/source`, { key })).body.data).toMatchObject({
      type: 'acquisition',
      campaignId: c.id,
    });
    const msgs = await call(srv, 'GET', `/v1/conversations/${convs.body.data[0].id}/messages`, { key });
    const welcome = msgs.body.data.find((m: { id: string }) => m.id === e.welcomeMessageId);
    expect(JSON.stringify(welcome)).toContain('Welcome, Dana!');

    const again = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: phone(3101), consent: true } });
    expect(again.body.data).toMatchObject({
      enrollmentId: e.enrollmentId,
      status: 'already_enrolled',
      contactCreated: false,
      welcomeMessageId: null,
    });

    const stats = (await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats;
    expect(stats).toMatchObject({ enrolledCount: 1, newContactCount: 1, lastEnrolledAt: expect.any(String) });
  });

  it('reuses an existing contact and keeps its name', async () => {
    const c = await campaign();
    const existing = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(3102), name: 'Kept' } });
    const res = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, {
      key,
      body: { phone: phone(3102), name: 'Other', consent: true },
    });
    expect(res.body.data).toMatchObject({ contactId: existing.body.id, contactCreated: false, status: 'enrolled' });
    expect((await call(srv, 'GET', `/v1/contacts/${existing.body.id}`, { key })).body.name).toBe('Kept');
  });

  it('merges attributes within the 100 a contact holds: beyond, 400 naming body.attributes and nothing stored', async () => {
    const c = await campaign({ welcomeMessage: null });
    const ninety = Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`k${i}`, i]));
    const made = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(3110), attributes: ninety } });
    expect(made.status, made.text).toBe(201);
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`n${i}`, 'x'.repeat(1000)]));
    const over = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, {
      key,
      body: { phone: phone(3110), consent: true, attributes: twenty },
    });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'body.attributes' })] });
    expect(Object.keys((await call(srv, 'GET', `/v1/contacts/${made.body.id}`, { key })).body.attributes)).toHaveLength(90);
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats.enrolledCount).toBe(0);

    const ten = Object.fromEntries(Object.entries(twenty).slice(0, 10));
    expect(
      (await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: phone(3110), consent: true, attributes: ten } }))
        .status,
    ).toBe(200);
    const full = await call(srv, 'GET', `/v1/contacts/${made.body.id}`, { key }); // the response is validated: 100 keys fit
    expect(full.status, full.text).toBe(200);
    expect(Object.keys(full.body.attributes)).toHaveLength(100);
    expect((await call(srv, 'GET', '/v1/contacts?limit=100', { key })).status).toBe(200);
  });

  it('records an opted-out contact but sends it nothing and keeps it opted out', async () => {
    const c = await campaign();
    const existing = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(3103) } });
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: phone(3103), source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const res = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: phone(3103), consent: true } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'enrolled', welcomeMessageId: null });
    expect((await call(srv, 'GET', `/v1/contacts/${existing.body.id}`, { key })).body.optedOut).toBe(true);
    expect((await call(srv, 'GET', `/v1/conversations?contactId=${existing.body.id}`, { key })).body.data).toEqual([]);
    const history = await call(srv, 'GET', `/v1/contacts/${existing.body.id}/consent`, { key });
    expect(history.body.data[0]).toMatchObject({ source: 'ACQUISITION' });
  });

  it('answers 422 DNC_LISTED and stores nothing for a DNC-listed phone; 400 for a bad phone; 409 when not ACTIVE', async () => {
    const c = await campaign();
    await call(srv, 'POST', '/v1/compliance/dnc', { key, body: { phone: phone(3104) } });
    const dnc = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: phone(3104), consent: true } });
    expect(dnc.status).toBe(422);
    expect(dnc.body.code).toBe('DNC_LISTED');
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats.enrolledCount).toBe(0);

    const bad = await call(srv, 'POST', `/v1/acquisition/${c.id}/enroll`, { key, body: { phone: '+10000000000', consent: true } });
    expect(bad.status).toBe(400);

    const draft = await campaign({ status: 'DRAFT' });
    const closed = await call(srv, 'POST', `/v1/acquisition/${draft.id}/enroll`, { key, body: { phone: phone(3105), consent: true } });
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('INVALID_STATE');
    const future = await campaign({ startsAt: new Date(Date.now() + 86_400_000).toISOString() });
    expect(
      (await call(srv, 'POST', `/v1/acquisition/${future.id}/enroll`, { key, body: { phone: phone(3105), consent: true } })).status,
    ).toBe(409);
  });
});

describe('enrollPublicAcquisitionContact', () => {
  it('enrolls without a key, with the same answer for new, enrolled and DNC-listed numbers', async () => {
    const c = await campaign({ redirectUrl: 'https://shop.example.com/thanks', confirmedOptIn: false });
    const headers = { 'x-forwarded-for': ip(), 'user-agent': 'test-browser/1.0' };
    const res = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, {
      headers,
      body: { phone: phone(3201), consent: true, name: 'Pat' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.body).toEqual({ data: { status: 'received', message: expect.any(String), redirectUrl: 'https://shop.example.com/thanks' } });

    const row = await srv.context.db
      .selectFrom('acquisition_enrollments')
      .selectAll()
      .where('campaign_id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ via: 'public', user_agent: 'test-browser/1.0', phone: phone(3201) });
    expect(row.ip).toMatch(/^10\./);
    expect(row.welcome_message_id).not.toBeNull();

    const again = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, { headers, body: { phone: phone(3201), consent: true } });
    expect(again.body).toEqual(res.body);
    await call(srv, 'POST', '/v1/compliance/dnc', { key, body: { phone: phone(3202) } });
    const dnc = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, { headers, body: { phone: phone(3202), consent: true } });
    expect(dnc.body).toEqual(res.body);
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats.enrolledCount).toBe(1);
  });

  it('answers 404 for unknown and DRAFT campaigns, 409 for PAUSED, 400 without consent', async () => {
    const headers = { 'x-forwarded-for': ip() };
    const body = { phone: phone(3203), consent: true };
    expect((await call(srv, 'POST', '/public/acquisition/00000000-0000-4000-8000-000000000000/enroll', { headers, body })).status).toBe(
      404,
    );
    const draft = await campaign({ status: 'DRAFT' });
    expect((await call(srv, 'POST', `/public/acquisition/${draft.id}/enroll`, { headers, body })).status).toBe(404);
    const paused = await campaign();
    await call(srv, 'PUT', `/acquisition-campaigns/${paused.id}`, { key, body: { status: 'PAUSED' } });
    expect((await call(srv, 'POST', `/public/acquisition/${paused.id}/enroll`, { headers, body })).status).toBe(409);
    expect(
      (await call(srv, 'POST', `/public/acquisition/${paused.id}/enroll`, { headers, body: { phone: phone(3203), consent: false } }))
        .status,
    ).toBe(400);
  });

  it('rate limits to 10 requests per minute per client IP with Retry-After', async () => {
    const c = await campaign({ welcomeMessage: null });
    const headers = { 'x-forwarded-for': ip() };
    for (let i = 0; i < 10; i++) {
      const ok = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, {
        headers,
        body: { phone: phone(3300 + i), consent: true },
      });
      expect(ok.status).toBe(200);
    }
    const limited = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, { headers, body: { phone: phone(3311), consent: true } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another client is not affected.
    const other = await call(srv, 'POST', `/public/acquisition/${c.id}/enroll`, {
      headers: { 'x-forwarded-for': ip() },
      body: { phone: phone(3312), consent: true },
    });
    expect(other.status).toBe(200);
  });

  it('counts one client across API processes: the 11th request, on either process, answers 429', async () => {
    const c = await campaign({ welcomeMessage: null });
    const env = {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      RUN_WORKERS: '0',
      PORT: '0',
      TRUST_PROXY: 'loopback',
    };
    const apis = await Promise.all([
      startServing(process.execPath, ['src/main.js'], env),
      startServing(process.execPath, ['src/main.js'], env),
    ]);
    try {
      const headers = { 'content-type': 'application/json', 'x-forwarded-for': ip() };
      const enroll = (port: number, n: number) =>
        fetch(`http://127.0.0.1:${port}/public/acquisition/${c.id}/enroll`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ phone: phone(3700 + n), consent: true }),
        }); // numbers no other test uses
      // Ten requests alternating between the two processes: each process alone saw only five.
      for (let i = 0; i < 10; i++) expect((await enroll(apis[i % 2]!.port, i)).status).toBe(200);
      for (const api of apis) {
        const limited = await enroll(api.port, api === apis[0] ? 20 : 21);
        expect(limited.status).toBe(429);
        expect(((await limited.json()) as { code: string }).code).toBe('RATE_LIMITED');
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all(
        apis.map(({ child }) => new Promise((r) => (child.exitCode !== null ? r(null) : (child.once('exit', r), child.kill('SIGTERM'))))),
      );
    }
  }, 90_000);
});

describe('KEYWORD campaigns', () => {
  it('a handset texting the keyword to the campaign’s number through the carrier is enrolled and welcomed', async () => {
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .select(['phone_number'])
      .where('id', '=', org.senderId)
      .executeTakeFirstOrThrow();
    const c = await campaign({ type: 'KEYWORD', keyword: 'deals', shortcode: sender.phone_number });
    const { signCallback, simulatorSecret } = await import('../src/providers/simulator.ts');
    const payload = JSON.stringify({
      type: 'inbound',
      providerMessageId: `SIMIN${Date.now()}`,
      from: phone(3501),
      to: sender.phone_number,
      channel: 'SMS',
      text: 'Deals',
      at: new Date().toISOString(),
    });
    const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), payload) },
      body: payload,
    });
    expect(res.status).toBeLessThan(300);
    const deadline = Date.now() + 10_000;
    let stats = (await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats;
    while (stats.enrolledCount === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      stats = (await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats;
    }
    expect(stats).toMatchObject({ enrolledCount: 1 });
  });

  it('enrolls a handset texting the keyword to the campaign’s number, once', async () => {
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .select(['phone_number', 'address'])
      .where('id', '=', org.senderId)
      .executeTakeFirstOrThrow();
    const c = await campaign({ type: 'KEYWORD', keyword: 'join', shortcode: sender.phone_number });
    const tenant = await tenantFor(srv.context, org.organizationId);
    const { db: _db, pool: _pool, ...services } = srv.context;
    expect(await enrollByKeyword(tenant, services, { phone: phone(3401), text: 'hello', sender })).toBeNull();
    const first = await enrollByKeyword(tenant, services, { phone: phone(3401), text: ' Join ', sender });
    expect(first).toMatchObject({ status: 'enrolled', welcomeMessageId: expect.any(String) });
    expect(await enrollByKeyword(tenant, services, { phone: phone(3401), text: 'JOIN', sender })).toMatchObject({
      status: 'already_enrolled',
      welcomeMessageId: null,
    });
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.stats).toMatchObject({
      enrolledCount: 1,
      newContactCount: 1,
    });
  });
});

describe('generateAcquisitionCampaignQr', () => {
  it('encodes the enrollment URL (or an sms: URI for KEYWORD), as PNG at the asked size or SVG, and records the time', async () => {
    const c = await campaign({ name: 'Printed QR' });
    const png = await call(srv, 'POST', `/acquisition-campaigns/${c.id}/generate-qr?size=256`, { key });
    expect(png.status).toBe(200);
    expect(png.body.data).toMatchObject({
      campaignId: c.id,
      format: 'png',
      size: 256,
      encodedValue: c.enrollmentUrl,
      enrollmentUrl: c.enrollmentUrl,
    });
    const bytes = Buffer.from(png.body.data.dataUrl.replace('data:image/png;base64,', ''), 'base64');
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    expect(bytes.readUInt32BE(16)).toBe(256); // IHDR width
    const svg = await call(srv, 'POST', `/acquisition-campaigns/${c.id}/generate-qr?format=svg`, { key });
    expect(Buffer.from(svg.body.data.dataUrl.split(',')[1], 'base64').toString()).toContain('<svg');
    expect(svg.body.data.encodedValue).toBe(png.body.data.encodedValue); // the code depends only on the campaign
    expect((await call(srv, 'GET', `/acquisition-campaigns/${c.id}`, { key })).body.qrCodeGeneratedAt).not.toBeNull();

    const kw = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'Keyword QR', type: 'KEYWORD', listId, keyword: 'qrjoin', shortcode: '55999' },
    });
    const kwQr = await call(srv, 'POST', `/acquisition-campaigns/${kw.body.id}/generate-qr`, { key });
    expect(kwQr.body.data.encodedValue).toBe('sms:55999?body=QRJOIN');

    await srv.context.db.updateTable('acquisition_campaigns').set({ status: 'ENDED' }).where('id', '=', c.id).execute();
    const ended = await call(srv, 'POST', `/acquisition-campaigns/${c.id}/generate-qr`, { key });
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe('INVALID_STATE');
    const foreign = await call(srv, 'POST', `/acquisition-campaigns/${c.id}/generate-qr`, { key: other.apiKey.secret });
    expect(foreign.status).toBe(404);
  });
});

describe('public enrollment from another origin', () => {
  it('answers the CORS preflight', async () => {
    const c = await campaign({ name: 'CORS campaign' });
    const res = await fetch(`${srv.baseUrl}/public/acquisition/${c.id}/enroll`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
  });
});
