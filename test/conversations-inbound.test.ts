// Inbound messages as carriers deliver them: signed POSTs to /provider-callbacks/PROVIDER_A (what the carrier
// simulator's job sends). Ingestion is one transaction (message, keyword, consent, events, the reply's dispatch
// job), and the route answers with carrier semantics: 2xx once stored, retries idempotent, never an API
// ErrorResponse.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let senderNumber: string;
let seq = 0;

beforeAll(async () => {
  // No workers: webhook deliveries stay queued, so the stored events can be counted.
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Inbound org');
  const hook = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key: org.apiKey.secret,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['message.received', 'contact.opted_out'] },
  });
  expect(hook.status).toBe(201);
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
});
afterAll(() => srv.close());

const phone = () => `+1415555${String(9000 + ++seq).padStart(4, '0')}`;

const inbound = (from: string, text: string) => ({
  type: 'inbound',
  providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
  from,
  to: senderNumber,
  channel: 'SMS',
  text,
  at: new Date().toISOString(),
});

/** POSTs `payload` as the carrier does: the exact bytes, signed. */
async function deliver(payload: unknown): Promise<{ status: number; text: string }> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** A carrier's answer is never the public API's ErrorResponse ({code, message, requestId}). */
function expectCarrierAnswer(res: { text: string }) {
  if (!res.text) return;
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(body).not.toHaveProperty('code');
  expect(body).not.toHaveProperty('requestId');
}

const events = (type: string) =>
  srv.context.db
    .selectFrom('webhook_events')
    .select('body')
    .where('organization_id', '=', org.organizationId)
    .where('type', '=', type)
    .execute();

async function stateOf(from: string) {
  const db = srv.context.db;
  const messages = await db
    .selectFrom('messages')
    .select(['direction', 'origin', 'status'])
    .where('organization_id', '=', org.organizationId)
    .where('contact_phone', '=', from)
    .orderBy('created_at')
    .execute();
  const optedOut = await db
    .selectFrom('opt_outs')
    .select('phone')
    .where('organization_id', '=', org.organizationId)
    .where('phone', '=', from)
    .executeTakeFirst();
  const consent = await db
    .selectFrom('consent_events')
    .select(['action', 'keyword'])
    .where('organization_id', '=', org.organizationId)
    .where('phone', '=', from)
    .execute();
  const optedOutEvents = (await events('contact.opted_out')).filter((e) => e.body.includes(from));
  const receivedEvents = (await events('message.received')).filter((e) => e.body.includes(from));
  return {
    messages: messages.map((m) => `${m.direction}:${m.origin}:${m.status}`),
    optedOut: Boolean(optedOut),
    consent,
    optedOutEvents: optedOutEvents.length,
    receivedEvents: receivedEvents.length,
  };
}

describe('inbound STOP', () => {
  it('is stored with its opt-out, its events and the confirmation in one go', async () => {
    const from = phone();
    const res = await deliver(inbound(from, 'STOP'));
    expect(res.status).toBe(204);
    // No waiting: everything committed with the message, before the carrier got its answer.
    expect(await stateOf(from)).toEqual({
      messages: ['inbound:inbound:received', 'outbound:keyword_reply:queued'],
      optedOut: true,
      consent: [{ action: 'OPT_OUT', keyword: 'STOP' }],
      optedOutEvents: 1,
      receivedEvents: 1,
    });
  });

  it('while the sender is SUSPENDED: the carrier gets 2xx, contact.opted_out is emitted once, a retry is harmless', async () => {
    const from = phone();
    await srv.context.db.updateTable('sender_ids').set({ status: 'SUSPENDED' }).where('id', '=', org.senderId).execute();
    try {
      const payload = inbound(from, 'Stop.');
      const first = await deliver(payload);
      expect(first.status).toBeGreaterThanOrEqual(200);
      expect(first.status).toBeLessThan(300);
      expectCarrierAnswer(first);
      const expected = {
        messages: ['inbound:inbound:received'], // the confirmation cannot go from a suspended sender (logged)
        optedOut: true,
        consent: [{ action: 'OPT_OUT', keyword: 'STOP' }],
        optedOutEvents: 1,
        receivedEvents: 1,
      };
      expect(await stateOf(from)).toEqual(expected);

      const retry = await deliver(payload);
      expect(retry.status).toBeGreaterThanOrEqual(200);
      expect(retry.status).toBeLessThan(300);
      expect(await stateOf(from)).toEqual(expected);
    } finally {
      await srv.context.db.updateTable('sender_ids').set({ status: 'ACTIVE' }).where('id', '=', org.senderId).execute();
    }
  });

  it('stores nothing when ingestion fails half-way (the carrier is told to retry), and everything on the retry', async () => {
    const from = phone();
    // A failure inside the keyword's consent write, after the message itself was written.
    const fn = sql.raw(`test_fail_consent_${randomUUID().replaceAll('-', '')}`);
    await sql`create function ${fn}() returns trigger language plpgsql as $$
      begin if new.phone = ${sql.lit(from)} then raise exception 'simulated failure'; end if; return new; end $$`.execute(srv.context.db);
    await sql`create trigger ${fn} before insert on consent_events for each row execute function ${fn}()`.execute(srv.context.db);
    const payload = inbound(from, 'STOP');
    try {
      const failed = await deliver(payload);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expectCarrierAnswer(failed);
      expect(await stateOf(from)).toEqual({ messages: [], optedOut: false, consent: [], optedOutEvents: 0, receivedEvents: 0 });
    } finally {
      await sql`drop trigger ${fn} on consent_events`.execute(srv.context.db);
      await sql`drop function ${fn}()`.execute(srv.context.db);
    }
    const retried = await deliver(payload);
    expect(retried.status).toBe(204);
    expect(await stateOf(from)).toMatchObject({
      messages: ['inbound:inbound:received', 'outbound:keyword_reply:queued'],
      optedOut: true,
      optedOutEvents: 1,
      receivedEvents: 1,
    });
  });
});

describe('STOP after messages were accepted', () => {
  it('fails the ones not yet sent (OPTED_OUT), held or queued; the STOP confirmation still goes', async () => {
    const from = phone();
    const contact = await srv.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone: from,
        attributes: '{}',
        consent_type: 'MARKETING',
        time_zone: 'UTC',
        quiet_hours_start: '00:00',
        quiet_hours_end: '23:59',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const send = async (messageType: string) =>
      (
        await call(srv, 'POST', '/v1/messages/send', {
          key: org.apiKey.secret,
          body: { contactId: contact.id, messageType, content: { type: 'text', text: 'Sale' } },
        })
      ).body.data;
    // No workers here: the transactional message stays queued; the marketing one is held for quiet hours.
    expect([(await send('TRANSACTIONAL')).status, (await send('MARKETING')).status]).toEqual(['queued', 'held']);
    expect((await deliver(inbound(from, 'STOP'))).status).toBe(204);
    const outbound = await srv.context.db
      .selectFrom('messages')
      .select(['origin', 'status', 'error_code'])
      .where('organization_id', '=', org.organizationId)
      .where('contact_phone', '=', from)
      .where('direction', '=', 'outbound')
      .orderBy('created_at')
      .execute();
    expect(outbound).toEqual([
      { origin: 'api', status: 'failed', error_code: 'OPTED_OUT' },
      { origin: 'api', status: 'failed', error_code: 'OPTED_OUT' },
      { origin: 'keyword_reply', status: 'queued', error_code: null },
    ]);
  });
});

describe('carrier semantics', () => {
  it('answers a signed body that is not a callback with 400 in the carrier’s terms, never an ErrorResponse', async () => {
    for (const body of ['{not json', 'null', '{"type":"nope"}', '[{"type":"inbound"}, 7]']) {
      const res = await deliver(body);
      expect(res.status, body).toBe(400);
      expectCarrierAnswer(res);
    }
  });

  it('refuses a signed callback of the wrong shape with 400 (never 500, never stored): a text that is no string, a mediaUrl that is no URI', async () => {
    const from = phone();
    for (const [what, payload] of [
      ['text a number', { ...inbound(from, 'x'), text: 42 }],
      ['text an object', { ...inbound(from, 'x'), text: { a: 1 } }],
      ['mediaUrl no URI', { ...inbound(from, 'look'), mediaUrl: 'not a uri at all' }],
      ['mediaUrl javascript:', { ...inbound(from, 'look'), mediaUrl: 'javascript:alert(1)' }],
      [
        'receipt without dedupeKey',
        { type: 'receipt', providerMessageId: 'SIM1', status: 'delivered', channel: 'SMS', at: new Date().toISOString() },
      ],
      ['at no date', { ...inbound(from, 'x'), at: 'yesterday' }],
    ] as const) {
      const res = await deliver(payload);
      expect(res.status, what).toBe(400);
      expectCarrierAnswer(res);
    }
    // Nothing was stored for that phone: no contact, so no conversation whose reads could break.
    const stored = await srv.context.db.selectFrom('contacts').select('id').where('phone', '=', from).execute();
    expect(stored).toEqual([]);
    // A well-formed media message from the same phone is stored, and its conversation reads back.
    expect((await deliver({ ...inbound(from, 'look'), mediaUrl: 'https://media.example.com/a.jpg' })).status).toBe(204);
    const contact = await srv.context.db.selectFrom('contacts').select('id').where('phone', '=', from).executeTakeFirstOrThrow();
    const conversation = await srv.context.db
      .selectFrom('conversations')
      .select('id')
      .where('contact_id', '=', contact.id)
      .executeTakeFirstOrThrow();
    const read = await call(srv, 'GET', `/v1/conversations/${conversation.id}/messages`, { key: org.apiKey.secret });
    expect(read.status).toBe(200);
    expect(read.body.data[0].content.mediaUrl).toBe('https://media.example.com/a.jpg');
  });

  it('refuses a bad signature (403) and an unknown provider (404) in the carrier’s terms', async () => {
    const bad = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': '0'.repeat(64) },
      body: '{}',
    });
    expect(bad.status).toBe(403);
    expectCarrierAnswer({ text: await bad.text() });
    const unknown = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_Z`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unknown.status).toBe(404);
    expectCarrierAnswer({ text: await unknown.text() });
  });

  it('answers 2xx for a number no sender owns (nothing to retry)', async () => {
    const res = await deliver({ ...inbound(phone(), 'hello'), to: '+447700900999' });
    expect(res.status).toBe(204);
  });
});
