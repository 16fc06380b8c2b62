// The Telnyx adapter end to end, on the official SDK against a Telnyx fake written from Telnyx's public reference
// (test/support/telnyx-fake.ts: it checks each request's method, path, API key and required fields, and signs
// webhooks with Ed25519 exactly as Telnyx does): a send through the API, its delivery report, an inbound reply and a
// STOP through the callback route; forged, replayed and malformed webhooks refused; number search goes to Telnyx.
import { generateKeyPairSync, randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dispatchBatch, dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { assembleProviders } from '../src/providers/assemble.ts';
import { guardTuning } from '../src/providers/guard.ts';
import { TelnyxProvider } from '../src/providers/telnyx/adapter.ts';
import { startTelnyxFake, type TelnyxFake } from './support/telnyx-fake.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let fake: TelnyxFake;
let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  fake = await startTelnyxFake();
  srv = await startTestServer({
    workers: true,
    providers: ({ db, queue }) => {
      const endpoint = { baseUrl: undefined };
      const telnyx = new TelnyxProvider({
        name: 'PROVIDER_B',
        endpoint,
        settings: { apiKey: fake.apiKey, publicKey: fake.publicKey, apiBaseUrl: fake.baseUrl, timeoutMs: 5000, registryStepMs: 100 },
      });
      // PROVIDER_A: the same account with a revoked API key (Telnyx answers 401).
      const revoked = new TelnyxProvider({
        name: 'PROVIDER_A',
        endpoint,
        settings: { apiKey: `KEY${randomUUID().replace(/-/g, '')}`, publicKey: fake.publicKey, apiBaseUrl: fake.baseUrl, timeoutMs: 5000 },
      });
      return assembleProviders({ db, queue, endpoint, real: { PROVIDER_A: revoked, PROVIDER_B: telnyx } });
    },
  });
  org = await srv.newOrg('Telnyx org');
  key = org.apiKey.secret;
});
afterAll(async () => {
  await srv?.close();
  await fake?.close();
});

/**
 * A sender on Telnyx's slot: toll-free by default (Telnyx reviews 10DLC here, so a LONG_CODE sends only under a
 * registered campaign; toll-free verification is Telnyx's own), or a 10DLC LONG_CODE for the registry tests.
 */
async function sender(
  provider: 'PROVIDER_A' | 'PROVIDER_B' = 'PROVIDER_B',
  type: 'TOLL_FREE' | 'LONG_CODE' = 'TOLL_FREE',
): Promise<{ id: string; phone: string }> {
  const phone = `${type === 'TOLL_FREE' ? '+1833' : '+1510'}${randomInt(2_000_000, 9_999_999)}`;
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: org.organizationId,
      name: `Telnyx ${type}`,
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

async function contact(): Promise<{ id: string; phone: string }> {
  const phone = `+1312${randomInt(2_000_000, 9_999_999)}`;
  const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, phone };
}

const messageRow = (id: string) =>
  srv.context.db
    .selectFrom('messages')
    .select(['status', 'channel', 'provider', 'provider_message_id', 'error_code', 'error_message', 'attempts', 'cost_units'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** Posts a Telnyx event to our route, signed as Telnyx signs it (or with `headers` instead). */
async function webhook(pathAndQuery: string, event: unknown, headers?: Record<string, string>): Promise<Response> {
  const body = JSON.stringify(event);
  return fetch(`${srv.baseUrl}${pathAndQuery}`, { method: 'POST', headers: headers ?? fake.signedHeaders(body), body });
}

const finalized = (id: string, to: string, from: string, status: string, errors: unknown[] = []) => ({
  data: {
    event_type: 'message.finalized',
    id: randomUUID(),
    occurred_at: new Date().toISOString(),
    record_type: 'event',
    payload: { id, type: 'SMS', direction: 'outbound', from: { phone_number: from }, to: [{ phone_number: to, status }], errors },
  },
  meta: { attempt: 1, delivered_to: 'x' },
});

const received = (from: string, to: string, text: string) => ({
  data: {
    event_type: 'message.received',
    id: randomUUID(),
    occurred_at: new Date().toISOString(),
    record_type: 'event',
    payload: {
      id: randomUUID(),
      type: 'SMS',
      direction: 'inbound',
      from: { phone_number: from },
      to: [{ phone_number: to, status: 'webhook_delivered' }],
      text,
      media: [],
    },
  },
});

describe('Telnyx', () => {
  it('sends through POST /v2/messages and applies its signed delivery reports', async () => {
    const s = await sender();
    const c = await contact();
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c.id,
        senderId: s.id,
        channelType: 'SMS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'Your order shipped' },
      },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.data.messageId as string;
    const sent = await until(
      () => messageRow(id),
      (m) => m.status === 'sent' || m.status === 'failed',
      'the Telnyx send',
    );
    expect(sent, fake.violations.join('\n')).toMatchObject({ status: 'sent', provider: 'PROVIDER_B' });
    const request = fake.requests.find((r) => r.path === '/v2/messages' && r.body?.to === c.phone)!;
    expect(request.body).toMatchObject({ from: s.phone, text: 'Your order shipped', type: 'SMS', use_profile_webhooks: false });
    expect(request.body.webhook_url).toBe(`${srv.baseUrl}/provider-callbacks/PROVIDER_B?ref=${id}`);

    const ok = await webhook(
      `/provider-callbacks/PROVIDER_B?ref=${id}`,
      finalized(sent.provider_message_id!, c.phone, s.phone, 'delivered'),
    );
    expect(ok.status, await ok.text()).toBe(204);
    expect(await messageRow(id)).toMatchObject({ status: 'delivered', channel: 'SMS' });

    const res2 = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c.id,
        senderId: s.id,
        channelType: 'SMS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'Second' },
      },
    });
    const id2 = res2.body.data.messageId as string;
    const sent2 = await until(
      () => messageRow(id2),
      (m) => m.status === 'sent',
      'the second send',
    );
    const failed = await webhook(
      `/provider-callbacks/PROVIDER_B?ref=${id2}`,
      finalized(sent2.provider_message_id!, c.phone, s.phone, 'delivery_failed', [{ code: '40008', title: 'Undeliverable' }]),
    );
    expect(failed.status).toBe(204);
    expect(await messageRow(id2)).toMatchObject({ status: 'undeliverable', error_code: 'TELNYX_40008' });
    expect(fake.violations).toEqual([]);
  });

  it('takes an inbound reply and a STOP (message.received) through the shared inbound path', async () => {
    const s = await sender();
    const c = await contact();
    expect((await webhook('/provider-callbacks/PROVIDER_B', received(c.phone, s.phone, 'Thanks!'))).status).toBe(204);
    const inbound = await srv.context.db
      .selectFrom('messages')
      .select(['channel', 'content'])
      .where('contact_id', '=', c.id)
      .where('direction', '=', 'inbound')
      .execute();
    expect(inbound).toEqual([expect.objectContaining({ channel: 'SMS', content: expect.objectContaining({ text: 'Thanks!' }) })]);
    expect((await webhook('/provider-callbacks/PROVIDER_B', received(c.phone, s.phone, 'STOP'))).status).toBe(204);
    const optOut = await srv.context.db
      .selectFrom('opt_outs')
      .select('phone')
      .where('organization_id', '=', org.organizationId)
      .where('phone', '=', c.phone)
      .executeTakeFirst();
    expect(optOut).toEqual({ phone: c.phone });
    // The confirmation goes out through Telnyx.
    await until(
      async () => fake.requests.filter((r) => r.path === '/v2/messages' && r.body?.to === c.phone).length,
      (n) => n === 1,
      'the STOP confirmation through Telnyx',
    );
  });

  it('refuses forged webhooks with 403: another key, a replayed (old) timestamp, a changed body, no signature', async () => {
    const s = await sender();
    const c = await contact();
    const event = received(c.phone, s.phone, 'forged');
    const body = JSON.stringify(event);
    const other = generateKeyPairSync('ed25519').privateKey;
    const old = Math.floor(Date.now() / 1000) - 600;
    for (const headers of [
      fake.signedHeaders(body, undefined, other),
      fake.signedHeaders(body, old),
      fake.signedHeaders(JSON.stringify(received(c.phone, s.phone, 'original'))),
      { 'content-type': 'application/json' },
    ]) {
      expect((await webhook('/provider-callbacks/PROVIDER_B', event, headers)).status).toBe(403);
    }
    expect(await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute()).toEqual([]);
  });

  it('refuses a signed webhook it cannot use with 400 (a text that is no string)', async () => {
    const s = await sender();
    const c = await contact();
    const bad = received(c.phone, s.phone, 'x') as any;
    bad.data.payload.text = { nested: true };
    expect((await webhook('/provider-callbacks/PROVIDER_B', bad)).status).toBe(400);
  });

  it('searches Telnyx’s inventory for PROVIDER_B', async () => {
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key,
      body: { provider: 'PROVIDER_B', inventoryType: 'Local', leadingNumber: '415', capabilities: ['SMS'] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ provider: 'PROVIDER_B', number: '+14155550123', region: 'CA' })]);
    expect(fake.requests.at(-1)!.path).toContain('filter%5Bphone_number_type%5D=local');
    expect(fake.violations).toEqual([]);
  });
});

describe('Telnyx failures', () => {
  const sendOne = async (s: { id: string }, c: { id: string }, text: string) => {
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c.id, senderId: s.id, channelType: 'SMS', messageType: 'TRANSACTIONAL', content: { type: 'text', text } },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.messageId as string;
  };
  /** PROVIDER_B's sample of a metric in GET /metrics (`labels`: more labels after the provider). */
  const metric = async (name: string, labels = '') => {
    const res = await fetch(`${srv.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain(`# TYPE ${name} `);
    const line = text.split('\n').find((l) => l.startsWith(`${name}{provider="PROVIDER_B"${labels}} `));
    expect(line, text).toBeDefined();
    return Number(line!.split(' ')[1]);
  };
  const health = async () =>
    ((await call(srv, 'GET', '/health')).body.providers as Array<Record<string, any>>).find((p) => p.name === 'PROVIDER_B')!;

  it('a 429 with Retry-After slows PROVIDER_B down without failing the message, which is sent after it', async () => {
    const s = await sender();
    const c = await contact();
    const before = (await health()).rateLimited;
    fake.failNext(429, 1, { 'retry-after': '1' });
    const id = await sendOne(s, c, 'Rate limited once');
    await until(health, (h) => h.rateLimited === before + 1, 'the 429 on /health');
    expect((await messageRow(id)).status).not.toBe('failed');
    expect(
      await until(
        () => messageRow(id),
        (m) => m.status === 'sent' || m.status === 'failed',
        'the send after Retry-After',
        20_000,
      ),
    ).toMatchObject({
      status: 'sent',
    });
  });

  it('an outage opens PROVIDER_B’s circuit (on /health): the message waits, then goes once a trial succeeds', async () => {
    const saved = { ...guardTuning };
    Object.assign(guardTuning, { failureThreshold: 1, openSeconds: 1 });
    try {
      const s = await sender();
      const c = await contact();
      fake.failNext(503, 1);
      const id = await sendOne(s, c, 'Outage once');
      const openings = await metric('msa_provider_circuit_openings_total');
      const halfOpens = await metric('msa_provider_circuit_half_opens_total');
      const open = await until(health, (h) => h.circuitOpenings >= 1, 'the open circuit on /health');
      expect(open.consecutiveFailures).toBeGreaterThanOrEqual(1);
      // The same state in the metrics a scraper reads (GET /metrics, Prometheus text format).
      if (open.circuit === 'open') expect(await metric('msa_provider_circuit_state', ',state="open"')).toBe(1);
      expect(await metric('msa_provider_circuit_openings_total')).toBe(openings + 1);
      expect((await messageRow(id)).status).not.toBe('failed');
      expect(
        await until(
          () => messageRow(id),
          (m) => m.status === 'sent' || m.status === 'failed',
          'the send after the outage',
          20_000,
        ),
      ).toMatchObject({
        status: 'sent',
      });
      expect(await health()).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
      expect(await metric('msa_provider_circuit_state', ',state="closed"')).toBe(1);
      expect(await metric('msa_provider_circuit_state', ',state="open"')).toBe(0);
      expect(await metric('msa_provider_circuit_half_opens_total')).toBe(halfOpens + 1);
      expect(await metric('msa_provider_consecutive_failures')).toBe(0);
    } finally {
      Object.assign(guardTuning, saved);
    }
  });

  /** Outages with the circuit kept closed (a threshold no test reaches) and short backoffs. */
  const closedCircuit = async (run: () => Promise<void>) => {
    const saved = { guard: { ...guardTuning }, dispatch: { ...dispatchTuning } };
    Object.assign(guardTuning, { failureThreshold: 1000 });
    Object.assign(dispatchTuning, { backoffBaseSeconds: 0.05 });
    try {
      await run();
    } finally {
      fake.failNext(503, 0);
      Object.assign(guardTuning, saved.guard);
      Object.assign(dispatchTuning, saved.dispatch);
    }
  };
  const sendsTo = (phone: string) => fake.requests.filter((r) => r.path === '/v2/messages' && r.body?.to === phone).length;

  it('an outage longer than the attempt budget (8 answers 503, circuit closed) costs no attempt: the message is sent after it', async () => {
    await closedCircuit(async () => {
      const s = await sender();
      const c = await contact();
      fake.failNext(503, 8);
      const id = await sendOne(s, c, 'Outage outlasting six attempts');
      const done = await until(
        () => messageRow(id),
        (m) => m.status === 'sent' || m.status === 'failed',
        'the send after eight outages',
        30_000,
      );
      expect(done).toMatchObject({ status: 'sent', attempts: 1 });
      expect(sendsTo(c.phone)).toBe(9);
    });
  });

  it('a permanent refusal (400) fails the message at once with Telnyx’s reason, after one call', async () => {
    await closedCircuit(async () => {
      const s = await sender();
      const c = await contact();
      fake.failNext(400, 1);
      const id = await sendOne(s, c, 'Refused');
      const done = await until(
        () => messageRow(id),
        (m) => m.status === 'sent' || m.status === 'failed',
        'the refusal',
      );
      expect(done).toMatchObject({ status: 'failed', error_code: 'TELNYX_400', error_message: 'injected' });
      expect(sendsTo(c.phone)).toBe(1);
    });
  });

  it('an outage that outlasts the validity period fails the message PROVIDER_UNAVAILABLE with the provider’s reason', async () => {
    await closedCircuit(async () => {
      const s = await sender();
      const protocol = await call(srv, 'POST', `/v1/sender-ids/${s.id}/protocols`, {
        key,
        body: { type: 'SMS', config: { validityPeriodSeconds: 60 } },
      });
      expect(protocol.status, protocol.text).toBe(200);
      const c = await contact();
      fake.failNext(503, 100_000);
      const id = await sendOne(s, c, 'Outage until it expires');
      await until(
        async () => sendsTo(c.phone),
        (n) => n >= 1,
        'the first failed call',
      );
      // It waited 59 of its 60 seconds already (the clock is what counts): the outage lasts beyond them.
      await sql`update messages set created_at = now() - interval '59 seconds' where id = ${id}::uuid`.execute(srv.context.db);
      const done = await until(
        () => messageRow(id),
        (m) => m.status === 'failed',
        'the failure at the end of the validity period',
        30_000,
      );
      expect(done.error_code).toBe('PROVIDER_UNAVAILABLE');
      expect(done.error_message).toBe('The provider could not take the message within its validity period (60 s): Telnyx answered 503.');
      expect(done.attempts).toBeLessThanOrEqual(1);
    });
  });
  it('refused credentials (401) are no outage: the message fails PROVIDER_AUTH_FAILED at once, /health and /metrics say so', async () => {
    const s = await sender('PROVIDER_A');
    const c = await contact();
    const before = { requests: fake.requests.length };
    const id = await sendOne(s, c, 'With a revoked key');
    const done = await until(
      () => messageRow(id),
      (m) => m.status === 'failed' || m.status === 'sent',
      'the refused send',
    );
    expect(done).toMatchObject({ status: 'failed', error_code: 'PROVIDER_AUTH_FAILED', cost_units: null, attempts: 1 });
    expect(done.error_message).toBe(
      "Telnyx refused this service's credentials (HTTP 401, TELNYX_10009: Authentication failed); check TELNYX_API_KEY.",
    );
    // One call, not retried; the key itself is nowhere in the reason.
    expect(fake.requests.slice(before.requests).filter((r) => r.path === '/v2/messages')).toHaveLength(1);
    const a = ((await call(srv, 'GET', '/health')).body.providers as Array<Record<string, any>>).find((p) => p.name === 'PROVIDER_A')!;
    expect(a).toMatchObject({ credentialsRefused: true, circuit: 'closed', consecutiveFailures: 0, circuitOpenings: 0 });
    const metrics = await (await fetch(`${srv.baseUrl}/metrics`)).text();
    expect(metrics).toContain('msa_provider_credentials_refused{provider="PROVIDER_A"} 1');
    expect(metrics).toContain('msa_provider_credentials_refused{provider="PROVIDER_B"} 0');
    expect(fake.violations).toEqual([]);
  });

  /**
   * Five messages of one sender accepted while PROVIDER_B holds its dispatch (a 429's wait), then claimed together
   * by one dispatch, as a blast batch is: one provider batch of five calls at once.
   */
  const oneBatch = async (s: { id: string }, text: string): Promise<string[]> => {
    const telnyx = srv.context.providers.slot('PROVIDER_B');
    srv.context.providers.guard.record(telnyx, { retryAfterSeconds: 3 });
    const blockedUntil = Date.now() + 3000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendOne(s, await contact(), `${text} ${i}`));
    const rows = () =>
      srv.context.db.selectFrom('messages').select(['status', 'attempts', 'created_at', 'dispatch_at']).where('id', 'in', ids).execute();
    // Each was claimed and put back to wait out the Retry-After (no attempt counted).
    await until(
      rows,
      (r) => r.every((m) => m.status === 'queued' && m.attempts === 0 && m.dispatch_at!.getTime() - m.created_at.getTime() > 1500),
      'the five waiting for Telnyx',
    );
    await sql`update messages set dispatch_at = now() + interval '1 hour' where id = any(${ids}::uuid[])`.execute(srv.context.db);
    await new Promise((r) => setTimeout(r, Math.max(0, blockedUntil - Date.now()) + 500));
    await sql`update messages set dispatch_at = now() where id = any(${ids}::uuid[])`.execute(srv.context.db);
    await dispatchBatch(srv.context, [{ data: { messageIds: ids } }]);
    return ids;
  };
  const statuses = async (ids: string[]) =>
    (await srv.context.db.selectFrom('messages').select('status').where('id', 'in', ids).execute()).map((m) => m.status).sort();

  it('a batch where one call fails 503 and the rest are accepted is no outage: the circuit stays closed', async () => {
    const saved = { ...guardTuning };
    Object.assign(guardTuning, { failureThreshold: 1, openSeconds: 1 });
    try {
      const s = await sender();
      const before = await health();
      fake.failNext(503, 1);
      const ids = await oneBatch(s, 'Mostly fine');
      expect(await statuses(ids)).toEqual(['queued', 'sent', 'sent', 'sent', 'sent']);
      expect(await health()).toMatchObject({ circuit: 'closed', consecutiveFailures: 0, circuitOpenings: before.circuitOpenings });
      // The one that timed out waits alone, then goes.
      await until(
        () => statuses(ids),
        (st) => st.every((x) => x === 'sent'),
        'the fifth send',
        20_000,
      );
    } finally {
      Object.assign(guardTuning, saved);
    }
  });

  it('a batch whose every call fails 503 is an outage: the circuit opens', async () => {
    const saved = { ...guardTuning };
    Object.assign(guardTuning, { failureThreshold: 1, openSeconds: 1 });
    try {
      const s = await sender();
      const before = await health();
      fake.failNext(503, 5);
      const ids = await oneBatch(s, 'All down');
      expect(await statuses(ids)).toEqual(['queued', 'queued', 'queued', 'queued', 'queued']);
      expect((await health()).circuitOpenings).toBe(before.circuitOpenings + 1);
      await until(
        () => statuses(ids),
        (st) => st.every((x) => x === 'sent'),
        'the sends after the outage',
        20_000,
      );
    } finally {
      fake.failNext(503, 0);
      Object.assign(guardTuning, saved);
    }
  });
});

describe('Telnyx 10DLC registry', () => {
  const BRAND = {
    entityType: 'PRIVATE_PROFIT',
    displayName: 'Acme Dental',
    companyName: 'Acme Dental Group LLC',
    taxId: '12-3456789',
    email: 'compliance@acmedental.example',
    phone: '+14155550100',
    street: '500 Market Street',
    city: 'San Francisco',
    state: 'CA',
    postalCode: '94105',
    country: 'US',
    vertical: 'HEALTHCARE',
    website: 'https://www.acmedental.example',
  };
  const CAMPAIGN = {
    useCase: 'ACCOUNT_NOTIFICATION',
    description: 'Appointment reminders, confirmations and rescheduling notices for patients of Acme Dental clinics.',
    messageFlow: 'Patients opt in by ticking the SMS consent box on the online booking form at acmedental.example/book.',
    sampleMessages: ['Acme Dental: your appointment is tomorrow at 10:00. Reply C to confirm. STOP to opt out.'],
    helpMessage: 'Acme Dental: for help call +1 415 555 0100. Msg & data rates may apply. STOP to opt out.',
    embeddedPhone: true,
  };
  const brandOf = (id: string) => call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key });
  const campaignOf = (id: string) => call(srv, 'GET', `/v1/sender-ids/${id}/campaign/status`, { key });
  const decided = (r: { body: any }) => ['REGISTERED', 'REJECTED'].includes(r.body.data?.status);
  const registerBrand = async (id: string, body: Record<string, unknown>) => {
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body });
    expect(res.status, res.text).toBe(200);
    return (await until(() => brandOf(id), decided, 'the brand decided at Telnyx')).body.data;
  };
  const registerCampaign = async (id: string, body: Record<string, unknown>) => {
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, { key, body });
    expect(res.status, res.text).toBe(200);
    return (await until(() => campaignOf(id), decided, 'the campaign decided at Telnyx')).body.data;
  };
  const stored = (table: 'brand_registrations' | 'campaign_registrations', senderId: string) =>
    srv.context.db.selectFrom(table).select(['status', 'registry_reference']).where('sender_id', '=', senderId).execute();

  it('registers a brand and a campaign with Telnyx: both REGISTERED, Telnyx’s ids kept, the sender’s number attached', async () => {
    const s = await sender('PROVIDER_B', 'LONG_CODE');
    const brand = await registerBrand(s.id, BRAND);
    expect(brand).toMatchObject({ status: 'REGISTERED', identityStatus: 'VERIFIED', rejectionReasons: [] });
    const created = fake.requests.find((r) => r.method === 'POST' && r.path === '/v2/10dlc/brand' && r.body.displayName === 'Acme Dental')!;
    expect(created.body).toMatchObject({ entityType: 'PRIVATE_PROFIT', ein: '12-3456789', email: BRAND.email, vertical: 'HEALTHCARE' });
    const [brandRow] = await stored('brand_registrations', s.id);
    // The reference is Telnyx's brandId (what the campaign names); the registry id shown is TCR's.
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === `/v2/10dlc/brand/${brandRow!.registry_reference}`)).toBe(true);
    expect(brand.registryBrandId).toMatch(/^B[0-9A-F]{6}$/);

    const campaign = await registerCampaign(s.id, CAMPAIGN);
    expect(campaign).toMatchObject({ status: 'REGISTERED', rejectionReasons: [] });
    const submitted = fake.requests.find(
      (r) => r.method === 'POST' && r.path === '/v2/10dlc/campaignBuilder' && r.body.brandId === brandRow!.registry_reference,
    )!;
    expect(submitted.body).toMatchObject({
      usecase: 'ACCOUNT_NOTIFICATION',
      description: CAMPAIGN.description,
      messageFlow: CAMPAIGN.messageFlow,
      sample1: CAMPAIGN.sampleMessages[0],
      helpMessage: CAMPAIGN.helpMessage,
      embeddedPhone: true,
    });
    const [campaignRow] = await stored('campaign_registrations', s.id);
    expect(fake.assignments).toContainEqual(expect.objectContaining({ phoneNumber: s.phone, campaignId: campaignRow!.registry_reference }));
    expect(fake.violations).toEqual([]);
  });

  it('requestVetting on Telnyx’s slot is not sent to Telnyx and charges no vetting fee (vetting is bought in its portal)', async () => {
    const s = await sender('PROVIDER_B', 'LONG_CODE');
    const brand = await registerBrand(s.id, { ...BRAND, displayName: 'Acme Vetted', requestVetting: true });
    expect(brand).toMatchObject({ status: 'REGISTERED', vettingScore: null });
    const created = fake.requests.find((r) => r.method === 'POST' && r.path === '/v2/10dlc/brand' && r.body.displayName === 'Acme Vetted')!;
    expect(created.body).not.toHaveProperty('requestVetting');
    const charges = await srv.context.db
      .selectFrom('pass_through_charges')
      .select('kind')
      .where('organization_id', '=', org.organizationId)
      .where('kind', '=', 'vetting')
      .execute();
    expect(charges).toEqual([]);
  });

  it('a brand Telnyx fails, and a campaign the carriers reject, end REJECTED with Telnyx’s reasons', async () => {
    const refused = await registerBrand((await sender('PROVIDER_B', 'LONG_CODE')).id, { ...BRAND, displayName: 'REJECT Dental' });
    expect(refused).toMatchObject({ status: 'REJECTED', rejectionReasons: ['The EIN and company name do not match the IRS records.'] });

    const s = await sender('PROVIDER_B', 'LONG_CODE');
    expect((await registerBrand(s.id, BRAND)).status).toBe('REGISTERED');
    const campaign = await registerCampaign(s.id, {
      ...CAMPAIGN,
      description: 'REJECT: appointment reminders and confirmations for patients of Acme Dental clinics.',
    });
    expect(campaign).toMatchObject({ status: 'REJECTED', rejectionReasons: ['T-Mobile: the sample messages do not match the use case.'] });
    expect(fake.violations).toEqual([]);
  });

  it('a registration Telnyx’s reference refuses (a stock exchange it does not list) answers 502 with Telnyx’s reason, nothing stored', async () => {
    const s = await sender('PROVIDER_B', 'LONG_CODE');
    const res = await call(srv, 'POST', `/v1/sender-ids/${s.id}/brand/register`, {
      key,
      body: { ...BRAND, entityType: 'PUBLIC_PROFIT', stockSymbol: 'ACME', stockExchange: 'LSE' },
    });
    expect(res.status, res.text).toBe(502);
    expect(res.body.code).toBe('UPSTREAM_ERROR');
    expect(res.body.message).toContain('Telnyx refused the brand: POST /v2/10dlc/brand: stockExchange must be one of');
    expect(await stored('brand_registrations', s.id)).toEqual([]);
    expect(fake.violations.splice(0)).toEqual([expect.stringContaining('stockExchange must be one of')]);
  });
});
