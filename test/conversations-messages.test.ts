// A message's life through HTTP, the real database, pg-boss workers and the carrier simulator's signed
// callbacks: sendMessage (channel choice and fallback, compliance refusals, idempotency), dispatch and
// receipts, previewMessage, revokeMessage, inbound keywords.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dispatchBatch, dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Messaging org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

/** A contact whose number ends in `suffix` (the simulator picks outcomes by it). */
async function contact(
  suffix: string,
  fields: { rcs_capable?: boolean | null; consent_type?: string; time_zone?: string } = {},
  orgId = org.organizationId,
) {
  const phone = `+1415${String(++seq).padStart(7 - suffix.length, '0')}${suffix}`;
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: orgId,
      phone,
      attributes: '{}',
      rcs_capable: fields.rcs_capable ?? null,
      consent_type: fields.consent_type ?? 'MARKETING',
      time_zone: fields.time_zone ?? 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
  return row;
}

const text = (t = 'Your order has shipped.') => ({ type: 'text' as const, text: t });

async function send(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(srv, 'POST', '/v1/messages/send', { key, body: { messageType: 'TRANSACTIONAL', ...body }, headers });
}

async function messageRow(id: string) {
  return srv.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Waits until the message reaches one of `statuses` (receipts arrive asynchronously). */
async function until(id: string, statuses: string[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await messageRow(id);
    if (statuses.includes(row.status)) return row;
    if (Date.now() > deadline) throw new Error(`message ${id} is ${row.status}, expected ${statuses.join('/')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('sendMessage: channel choice', () => {
  it('sends RCS to a capable handset; the receipt confirms RCS, then a read receipt', async () => {
    const c = await contact('1', { rcs_capable: true });
    const res = await send({ contactId: c.id, content: text() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'queued',
      requestedChannel: 'RCS',
      plannedChannel: 'RCS',
      fallbackUsed: false,
      fallbackReason: null,
      segments: 1,
      encoding: 'GSM7',
      estimatedCost: { amount: '0.0039', currency: 'USD' },
    });
    const read = await until(res.body.data.messageId, ['read']);
    expect(read).toMatchObject({ channel: 'RCS', fallback_used: false, cost_units: 39 });
    expect(read.delivered_at).not.toBeNull();
  });

  it('plans SMS for a handset known not to take RCS, when fallback is allowed', async () => {
    const c = await contact('6', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: text() });
    expect(res.body.data).toMatchObject({ plannedChannel: 'SMS', fallbackUsed: true, fallbackReason: 'RCS_NOT_SUPPORTED' });
    expect(await until(res.body.data.messageId, ['delivered'])).toMatchObject({ channel: 'SMS' });
  });

  it('answers 422 NO_CHANNEL_AVAILABLE when the handset cannot take RCS and fallback is off', async () => {
    const c = await contact('7', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: text(), fallbackToSms: false });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('NO_CHANNEL_AVAILABLE');
  });

  it('checks an unknown capability at dispatch; the receipt says SMS carried it', async () => {
    const c = await contact('8', { rcs_capable: null });
    const res = await send({ contactId: c.id, content: text() });
    expect(res.body.data).toMatchObject({ plannedChannel: 'RCS', fallbackUsed: false });
    expect(await until(res.body.data.messageId, ['delivered'])).toMatchObject({
      channel: 'SMS',
      fallback_used: true,
      fallback_reason: 'RCS_NOT_SUPPORTED',
    });
    const updated = await srv.context.db.selectFrom('contacts').select('rcs_capable').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(updated.rcs_capable).toBe(false);
  });

  it('falls back to SMS when RCS is not delivered', async () => {
    const c = await contact('0333', { rcs_capable: true });
    const res = await send({ contactId: c.id, content: text() });
    expect(await until(res.body.data.messageId, ['delivered'])).toMatchObject({
      channel: 'SMS',
      fallback_used: true,
      fallback_reason: 'RCS_DELIVERY_FAILED',
    });
    const handset = await srv.context.db
      .selectFrom('simulator_messages')
      .select(['channel', 'dedupe_key'])
      .where('to_phone', '=', c.phone)
      .orderBy('accepted_at')
      .execute();
    expect(handset.map((h) => h.channel)).toEqual(['RCS', 'SMS']);
  });

  it('sends media as MMS when falling back', async () => {
    const c = await contact('9', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: { type: 'media', mediaUrl: 'https://cdn.example.com/a.jpg', text: 'Look' } });
    expect(res.body.data).toMatchObject({
      plannedChannel: 'MMS',
      segments: 1,
      encoding: null,
      estimatedCost: { amount: '0.0150', currency: 'USD' },
    });
  });
});

describe('sendMessage: compliance', () => {
  it('refuses a DNC-listed phone with 422 DNC_LISTED and stores nothing', async () => {
    const c = await contact('2', { rcs_capable: true });
    await srv.context.db
      .insertInto('dnc_entries' as never)
      .values({ organization_id: org.organizationId, phone: c.phone, source: 'API' } as never)
      .execute();
    const res = await send({ contactId: c.id, content: text() });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('DNC_LISTED');
    const rows = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(rows).toEqual([]);
  });

  it('refuses content that a blocking content rule matches (422 CONTENT_BLOCKED); other text goes through', async () => {
    const rule = await call(srv, 'POST', '/v1/content-rules', {
      key,
      body: { name: 'No lottery', pattern: 'lottery', patternType: 'keyword', action: 'block' },
    });
    expect(rule.status).toBe(201);
    const c = await contact('2', { rcs_capable: true });
    const blocked = await send({ contactId: c.id, content: text('You won the LOTTERY, claim now') });
    expect(blocked.status).toBe(422);
    expect(blocked.body.code).toBe('CONTENT_BLOCKED');
    expect((await send({ contactId: c.id, content: text('Your parcel is on its way') })).status).toBe(200);
    await call(srv, 'DELETE', `/v1/content-rules/${rule.body.data.id}`, { key });
  });

  it('refuses MARKETING without marketing consent (422 NO_CONSENT)', async () => {
    const c = await contact('3', { rcs_capable: true, consent_type: 'NONE' });
    const res = await send({ contactId: c.id, content: text(), messageType: 'MARKETING' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('NO_CONSENT');
  });

  it('holds MARKETING during the recipient’s quiet hours', async () => {
    // A fixed-offset zone where it is 03:00 now: inside the default 21:00–08:00 quiet period.
    const offset = ((((3 - new Date().getUTCHours()) % 24) + 24 + 12) % 24) - 12;
    const zone = offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
    const c = await contact('4', { rcs_capable: true });
    await srv.context.db
      .updateTable('contacts')
      .set({ time_zone: zone, quiet_hours_start: null, quiet_hours_end: null })
      .where('id', '=', c.id)
      .execute();
    const res = await send({ contactId: c.id, content: text(), messageType: 'MARKETING' });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('held');
    expect(new Date(res.body.data.heldUntil).getTime()).toBeGreaterThan(Date.now());
  });

  it('refuses an opted-out contact after an inbound STOP, which is confirmed and recorded', async () => {
    const c = await contact('0', { rcs_capable: false });
    const sim = srv.providers.simulator;
    await sim.injectInbound({ from: c.phone, to: await senderNumber(), text: 'Stop.' });
    // The opt-out commits first, the confirmation reply right after it: wait for both.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const out = await srv.context.db.selectFrom('opt_outs').select('phone').where('phone', '=', c.phone).executeTakeFirst();
      const reply = await srv.context.db
        .selectFrom('messages')
        .select('id')
        .where('contact_id', '=', c.id)
        .where('origin', '=', 'keyword_reply')
        .executeTakeFirst();
      if (out && reply) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const res = await send({ contactId: c.id, content: text() });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('OPTED_OUT');
    const messages = await srv.context.db
      .selectFrom('messages')
      .select(['direction', 'origin', 'status'])
      .where('contact_id', '=', c.id)
      .orderBy('created_at')
      .execute();
    expect(messages.map((m) => `${m.direction}:${m.origin}`)).toEqual(['inbound:inbound', 'outbound:keyword_reply']);
    const consent = await srv.context.db
      .selectFrom('consent_events')
      .select(['action', 'source', 'keyword'])
      .where('contact_id', '=', c.id)
      .execute();
    expect(consent).toEqual([{ action: 'OPT_OUT', source: 'KEYWORD', keyword: 'STOP' }]);
  });
});

async function senderNumber(): Promise<string> {
  const s = await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow();
  return s.phone_number!;
}

describe('sendMessage: idempotency', () => {
  it('replays the original answer for a retry and sends once', async () => {
    const c = await contact('1', { rcs_capable: true });
    const body = { contactId: c.id, content: text('Idempotent hello') };
    const first = await send(body, { 'Idempotency-Key': `k-${c.id}` });
    const second = await send(body, { 'Idempotency-Key': `k-${c.id}` });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const rows = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(rows).toHaveLength(1);
  });

  it('reads the header whatever its case (Node lower-cases names; typed access to the mixed-case name used to turn idempotency off)', async () => {
    const c = await contact('1', { rcs_capable: true });
    const body = { contactId: c.id, content: text('any case') };
    const first = await send(body, { 'IDEMPOTENCY-KEY': `case-${c.id}` });
    const second = await send(body, { 'idempotency-key': `case-${c.id}` });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it('answers 409 for the same key with a different body', async () => {
    const c = await contact('1', { rcs_capable: true });
    await send({ contactId: c.id, content: text('one') }, { 'Idempotency-Key': `d-${c.id}` });
    const res = await send({ contactId: c.id, content: text('two') }, { 'Idempotency-Key': `d-${c.id}` });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('sends once for parallel retries: a retry while the first is running answers 409 IDEMPOTENCY_IN_PROGRESS, later ones replay', async () => {
    const c = await contact('1', { rcs_capable: true });
    const body = { contactId: c.id, content: text('parallel') };
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(body, { 'Idempotency-Key': `p-${c.id}` })));
    for (const a of answers) {
      if (a.status === 409) expect(a.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      else expect(a.status).toBe(200);
    }
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.body.data.messageId)).size).toBe(1);
    const replay = await send(body, { 'Idempotency-Key': `p-${c.id}` });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.messageId).toBe(ok[0]!.body.data.messageId);
    const rows = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(rows).toHaveLength(1);
  });

  it('sends again without the header', async () => {
    const c = await contact('1', { rcs_capable: true });
    const body = { contactId: c.id, content: text('twice') };
    await send(body);
    await send(body);
    const rows = await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute();
    expect(rows).toHaveLength(2);
  });
});

describe('dispatch outcomes', () => {
  it('retries transient provider errors and sends once', async () => {
    const c = await contact('0503', { rcs_capable: true });
    const res = await send({ contactId: c.id, content: text() });
    const row = await until(res.body.data.messageId, ['delivered', 'read']);
    // Two 503s (an outage) then a success: an outage costs no attempt (dispatch.ts), so the one that counted is the last.
    expect(row.attempts).toBe(1);
    const handset = await srv.context.db.selectFrom('simulator_messages').select('send_calls').where('dedupe_key', '=', row.id).execute();
    expect(handset).toEqual([{ send_calls: 1 }]);
  });

  it('absorbs a repeated send of a message the worker did not record: one handset delivery', async () => {
    const c = await contact('1', { rcs_capable: true });
    const res = await send({ contactId: c.id, content: text() });
    const sent = await until(res.body.data.messageId, ['sent', 'delivered', 'read']);
    // As if the worker had died after the provider accepted it: its claim's lease ran out, the job runs again.
    await srv.context.db
      .updateTable('messages')
      .set({ status: 'sending', provider_message_id: null, dispatch_at: new Date() })
      .where('id', '=', sent.id)
      .execute();
    await dispatchBatch(srv.context, [{ data: { messageId: sent.id } }]);
    const handset = await srv.context.db
      .selectFrom('simulator_messages')
      .select(['provider_message_id', 'send_calls'])
      .where('dedupe_key', '=', sent.id)
      .execute();
    expect(handset).toEqual([{ provider_message_id: sent.provider_message_id, send_calls: 2 }]);
    expect((await messageRow(sent.id)).provider_message_id).toBe(sent.provider_message_id);
  });

  it("honours a sender's throughput limit by queueing, never dropping", async () => {
    const slow = await srv.context.db
      .insertInto('sender_ids')
      .values({
        organization_id: org.organizationId,
        name: 'Slow sender',
        type: 'LONG_CODE',
        status: 'ACTIVE',
        provider: 'PROVIDER_A',
        phone_number: `+1500${String(Date.now()).slice(-7)}`,
        is_sandbox: true,
        throughput_per_second: 4,
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const c = await contact('6', { rcs_capable: false });
      const res = await send({ contactId: c.id, senderId: slow.id, content: text(`throttled ${i}`) });
      expect(res.status).toBe(200);
      ids.push(res.body.data.messageId);
    }
    const sent = await Promise.all(ids.map((id) => until(id, ['sent', 'delivered'], 30_000)));
    const handset = await srv.context.db.selectFrom('simulator_messages').select('dedupe_key').where('dedupe_key', 'in', ids).execute();
    expect(handset).toHaveLength(12); // all of them, none dropped
    // 12 messages at 4 per one-second window need at least three windows: the last starts ≥ 2 s after the first.
    const times = sent.map((m) => m.sent_at!.getTime()).sort((a, b) => a - b);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(1500);
  });

  it('records a carrier refusal as failed with its reason', async () => {
    const c = await contact('0777', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: text() });
    expect(await until(res.body.data.messageId, ['failed'])).toMatchObject({ error_code: 'CARRIER_REJECTED' });
  });

  it('records an unreachable handset as undeliverable', async () => {
    const c = await contact('0666', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: text() });
    expect(await until(res.body.data.messageId, ['undeliverable'])).toMatchObject({ error_code: 'UNREACHABLE', channel: 'SMS' });
  });
});

describe('previewMessage', () => {
  it('renders the card for RCS and its MMS fallback with costs and warnings', async () => {
    const res = await call(srv, 'POST', '/v1/messages/preview', {
      key,
      body: {
        content: {
          type: 'card',
          title: 'Sale',
          text: 'All 20% off',
          mediaUrl: 'https://cdn.example.com/s.jpg',
          actions: [{ text: 'Shop', url: 'https://shop.example.com' }],
        },
      },
    });
    expect(res.status).toBe(200);
    const [primary, fallback] = res.body.data.renderings;
    expect(primary).toMatchObject({ channel: 'RCS', role: 'primary', cost: { amount: '0.0150', currency: 'USD' } });
    expect(fallback).toMatchObject({ channel: 'MMS', role: 'fallback', body: 'Sale\nAll 20% off\nShop: https://shop.example.com' });
  });

  it('reports compliance findings for a contact as warnings', async () => {
    const c = await contact('5', { rcs_capable: null, consent_type: 'NONE' });
    const res = await call(srv, 'POST', '/v1/messages/preview', {
      key,
      body: { contactId: c.id, messageType: 'MARKETING', content: text() },
    });
    const codes = res.body.data.warnings.map((w: { code: string }) => w.code);
    expect(codes).toEqual(expect.arrayContaining(['CAPABILITY_UNKNOWN', 'NO_CONSENT']));
  });
});

describe('revokeMessage', () => {
  it('revokes a held message, once; a second revoke answers the same', async () => {
    const c = await contact('1', { rcs_capable: true });
    const created = await srv.context.db
      .insertInto('messages')
      .values({
        organization_id: org.organizationId,
        conversation_id: sql`(select id from conversations where organization_id = ${org.organizationId} limit 1)` as never,
        contact_id: c.id,
        contact_phone: c.phone,
        sender_id: org.senderId,
        direction: 'outbound',
        planned_channel: 'RCS',
        requested_channel: 'RCS',
        status: 'held',
        content: JSON.stringify(text()),
        segments: 1,
        origin: 'api',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await call(srv, 'POST', `/v1/messages/${created.id}/revoke`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ messageId: created.id, status: 'revoked' });
    const again = await call(srv, 'POST', `/v1/messages/${created.id}/revoke`, { key });
    expect(again.body).toEqual(res.body);
  });

  it('answers 409 once delivered, and for SMS in flight', async () => {
    const c = await contact('6', { rcs_capable: false });
    const res = await send({ contactId: c.id, content: text() });
    await until(res.body.data.messageId, ['delivered']);
    const late = await call(srv, 'POST', `/v1/messages/${res.body.data.messageId}/revoke`, { key });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('INVALID_STATE');
  });
});

describe('revokeMessage at the carrier simulator', () => {
  it('answers 409 once the carrier has delivered an RCS message whose receipt has not reached the service yet', async () => {
    const c = await contact('1', { rcs_capable: true });
    // The simulator's receipts cannot reach the service: it has delivered, the service still says sent.
    const endpoint = srv.providers.endpoint;
    const own = endpoint.baseUrl;
    endpoint.baseUrl = 'http://127.0.0.1:9';
    let id: string;
    try {
      const res = await send({ contactId: c.id, content: text() });
      id = res.body.data.messageId;
      const reported = async () =>
        srv.context.db.selectFrom('simulator_messages').select(['reported_at', 'revoked']).where('dedupe_key', '=', id).executeTakeFirst();
      // Reported by the simulator, and recorded sent by the dispatcher (the two race: the report may come first).
      for (let i = 0; !(await reported())?.reported_at || (await messageRow(id)).status !== 'sent'; i++) {
        if (i > 300) throw new Error(`message ${id} was not both reported by the simulator and sent: ${(await messageRow(id)).status}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const late = await call(srv, 'POST', `/v1/messages/${id}/revoke`, { key });
      expect(late.status, late.text).toBe(409);
      expect(late.body).toMatchObject({ code: 'INVALID_STATE', message: 'The carrier has already delivered this message.' });
      expect((await reported())?.revoked).toBe(false);
      expect((await messageRow(id)).status).toBe('sent');
    } finally {
      endpoint.baseUrl = own;
    }
    // The receipt was kept: its retry reaches the service.
    await until(id, ['delivered', 'read'], 30_000);
  });
});

describe('tenant isolation', () => {
  it("cannot send to, preview for or revoke another organization's contact or message", async () => {
    const other = await srv.newOrg('Other messaging org');
    const theirs = await contact('1', { rcs_capable: true }, other.organizationId);
    expect((await send({ contactId: theirs.id, content: text() })).status).toBe(404);
    expect((await call(srv, 'POST', '/v1/messages/preview', { key, body: { contactId: theirs.id, content: text() } })).status).toBe(404);
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key: other.apiKey.secret,
      body: { contactId: theirs.id, messageType: 'TRANSACTIONAL', content: text() },
    });
    expect(sent.status).toBe(200);
    expect((await call(srv, 'POST', `/v1/messages/${sent.body.data.messageId}/revoke`, { key })).status).toBe(404);
  });
});
