// GET /v1/reports/messages through HTTP: every filter, every sort in both directions, limit + hasMore, kind,
// fallback, the date window, CSV, no provider fields, tenant isolation. Rows are inserted directly; the last
// block sends real messages through the carrier simulator to check that a row, the message and its events agree
// on the fallback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Insertable } from 'kysely';
import type { MessagesTable } from '../src/db/tables/messaging.ts';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let orgA: Awaited<ReturnType<TestServer['newOrg']>>;
let orgB: Awaited<ReturnType<TestServer['newOrg']>>;
let senderA2: string;
let contactA: string;
let conversationA: string;

const MIN = 60_000;
const base = new Date(Date.now() - 2 * 24 * 3600_000); // two days ago: inside the default 30-day window
const at = (minutes: number, seconds = 0) => new Date(base.getTime() + minutes * MIN + seconds * 1000);
const ERROR_CODE = 'CARRIER_REJECTED, "bad"\nline 2';

type Fixture = Omit<
  Insertable<MessagesTable>,
  'organization_id' | 'conversation_id' | 'contact_id' | 'contact_phone' | 'sender_id' | 'content' | 'origin'
> & {
  sender_id?: string;
};
// Named rows of organization A; `id` is filled in after the insert.
const rows: Record<string, Fixture & { id?: string }> = {
  rcs: {
    direction: 'outbound',
    requested_channel: 'RCS',
    planned_channel: 'RCS',
    channel: 'RCS',
    message_type: 'MARKETING',
    status: 'read',
    segments: 1,
    cost_units: 150,
    created_at: at(1),
    receipt_at: at(8),
  },
  fallback: {
    direction: 'outbound',
    requested_channel: 'RCS',
    planned_channel: 'SMS',
    channel: 'SMS',
    fallback_used: true,
    fallback_reason: 'RCS_NOT_SUPPORTED',
    message_type: 'TRANSACTIONAL',
    status: 'delivered',
    segments: 2,
    cost_units: 78,
    created_at: at(2),
    receipt_at: at(2, 3),
  },
  failed: {
    direction: 'outbound',
    requested_channel: 'MMS',
    planned_channel: 'MMS',
    channel: 'MMS',
    message_type: 'SERVICE',
    status: 'failed',
    segments: 1,
    cost_units: null,
    error_code: ERROR_CODE,
    error_message: 'Rejected, "really"',
    created_at: at(3),
    receipt_at: at(3, 1),
  },
  inbound: { direction: 'inbound', channel: 'SMS', status: 'received', segments: 1, created_at: at(4) },
  // Fallback planned but not carried yet: `primary` until SMS actually carries it.
  pending: {
    direction: 'outbound',
    requested_channel: 'RCS',
    planned_channel: 'SMS',
    channel: null,
    fallback_used: true,
    fallback_reason: 'RCS_DELIVERY_FAILED',
    message_type: 'MARKETING',
    status: 'queued',
    segments: 1,
    created_at: at(5),
  },
  otherSender: {
    direction: 'outbound',
    requested_channel: 'SMS',
    planned_channel: 'SMS',
    channel: 'SMS',
    message_type: 'MARKETING',
    status: 'sent',
    segments: 1,
    cost_units: 39,
    created_at: at(6),
  },
  chat: {
    direction: 'outbound',
    requested_channel: 'CHATAPP',
    planned_channel: 'CHATAPP',
    channel: 'CHATAPP',
    message_type: 'SERVICE',
    status: 'delivered',
    segments: 1,
    cost_units: 150,
    created_at: at(7),
    receipt_at: at(7, 1),
  },
};
const old = { id: '', createdAt: new Date(Date.now() - 40 * 24 * 3600_000) }; // outside the default window
const RECENT = ['rcs', 'fallback', 'failed', 'inbound', 'pending', 'otherSender', 'chat'];
let orgBMessage = '';

async function insertMessages(
  org: { organizationId: string },
  contactId: string,
  conversationId: string,
  senderId: string,
  list: Fixture[],
): Promise<string[]> {
  const inserted = await srv.context.db
    .insertInto('messages')
    .values(
      list.map((f, i) => ({
        organization_id: org.organizationId,
        conversation_id: conversationId,
        contact_id: contactId,
        contact_phone: '+14155550100',
        content: JSON.stringify({ type: 'text', text: 'Hello, "friend"\nbye' }),
        origin: f.direction === 'inbound' ? 'inbound' : 'api',
        provider: 'PROVIDER_A',
        provider_message_id: `pmid-secret-${org.organizationId}-${i}`,
        ...f,
        sender_id: f.sender_id ?? senderId,
      })),
    )
    .returning('id')
    .execute();
  return inserted.map((r) => r.id);
}

async function contactAndConversation(org: { organizationId: string; senderId: string }, phone: string) {
  const contact = await srv.context.db
    .insertInto('contacts')
    .values({ organization_id: org.organizationId, phone, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const conversation = await srv.context.db
    .insertInto('conversations')
    .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: org.senderId, source_type: 'api' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { contactId: contact.id, conversationId: conversation.id };
}

beforeAll(async () => {
  srv = await startTestServer();
  [orgA, orgB] = await Promise.all([srv.newOrg('Report org A'), srv.newOrg('Report org B')]);
  senderA2 = (
    await srv.context.db
      .insertInto('sender_ids')
      .values({
        organization_id: orgA.organizationId,
        name: 'Second sender',
        type: 'RCS_AGENT',
        status: 'ACTIVE',
        provider: 'PROVIDER_B',
        phone_number: null,
        is_sandbox: true,
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  rows.otherSender!.sender_id = senderA2;
  const a = await contactAndConversation(orgA, '+14155550100');
  contactA = a.contactId;
  conversationA = a.conversationId;
  const ids = await insertMessages(orgA, a.contactId, a.conversationId, orgA.senderId, [
    ...RECENT.map((k) => rows[k]!),
    { direction: 'outbound', requested_channel: 'SMS', channel: 'SMS', status: 'delivered', segments: 1, created_at: old.createdAt },
  ]);
  RECENT.forEach((k, i) => (rows[k]!.id = ids[i]));
  old.id = ids[RECENT.length]!;
  const b = await contactAndConversation(orgB, '+14155550100');
  [orgBMessage] = (await insertMessages(orgB, b.contactId, b.conversationId, orgB.senderId, [
    { direction: 'outbound', requested_channel: 'RCS', channel: 'RCS', status: 'delivered', segments: 1, created_at: at(1) },
  ])) as [string];
});
afterAll(() => srv.close());

const report = (query: string, key = orgA.apiKey.secret) => call(srv, 'GET', `/v1/reports/messages${query ? `?${query}` : ''}`, { key });
const idsOf = (res: { body: { data: Array<{ messageId: string }> } }) => res.body.data.map((r) => r.messageId);
const names = (res: { body: { data: Array<{ messageId: string }> } }) =>
  idsOf(res).map((id) => Object.keys(rows).find((k) => rows[k]!.id === id) ?? (id === old.id ? 'old' : id));

describe('getMessageReport', () => {
  it('lists the organization’s messages of the last 30 days, newest first, without provider fields', async () => {
    const res = await report('');
    expect(res.status).toBe(200);
    expect(names(res)).toEqual([...RECENT].reverse());
    expect(res.body.hasMore).toBe(false);
    expect(res.text).not.toContain('PROVIDER_');
    expect(res.text).not.toContain('pmid-secret');
    expect(res.text).not.toContain(orgBMessage);
    expect(res.body.data.find((r: { messageId: string }) => r.messageId === rows.fallback!.id)).toEqual({
      messageId: rows.fallback!.id,
      kind: 'mdr',
      direction: 'outbound',
      createdAt: at(2).toISOString(),
      receiptAt: at(2, 3).toISOString(),
      contactId: contactA,
      contactPhone: '+14155550100',
      senderId: orgA.senderId,
      programId: null,
      brand: null,
      campaign: null,
      carrier: null,
      channel: 'RCS',
      actualChannel: 'SMS',
      fallback: 'fallback',
      fallbackReason: 'RCS_NOT_SUPPORTED',
      messageType: 'TRANSACTIONAL',
      status: 'delivered',
      errorCode: null,
      segments: 2,
      cost: { amount: '0.0078', currency: 'USD' },
      blastId: null,
      conversationId: conversationA,
      botId: null,
      eventTriggerId: null,
      acquisitionCampaignId: null,
    });
    const inbound = res.body.data.find((r: { messageId: string }) => r.messageId === rows.inbound!.id);
    expect(inbound).toMatchObject({
      kind: 'mo',
      direction: 'inbound',
      channel: null,
      actualChannel: 'SMS',
      fallback: 'primary',
      receiptAt: at(4).toISOString(),
      cost: null,
      messageType: null,
    });
  });

  it('filters by kind', async () => {
    expect(names(await report('kind=mo'))).toEqual(['inbound']);
    expect(names(await report('kind=mdr'))).toEqual(['chat', 'otherSender', 'pending', 'failed', 'fallback', 'rcs']);
    expect(names(await report('kind=all'))).toHaveLength(RECENT.length);
  });

  it('filters by start and end on createdAt (a date-only end includes the whole day)', async () => {
    expect(names(await report(`start=${at(2).toISOString()}&end=${at(4).toISOString()}`))).toEqual(['inbound', 'failed', 'fallback']);
    const day = old.createdAt.toISOString().slice(0, 10);
    expect(names(await report(`start=${day}&end=${day}`))).toEqual(['old']);
    expect(names(await report(`start=${day}&sort=createdAt&dir=asc&limit=1`))).toEqual(['old']);
    const bad = await report(`start=${at(5).toISOString()}&end=${at(4).toISOString()}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'query.start' }] });
    expect((await report('start=yesterday')).status).toBe(400);
  });

  it('filters by status, sender, requested and actual channel', async () => {
    expect(names(await report('status=failed'))).toEqual(['failed']);
    expect(names(await report(`senderId=${senderA2}`))).toEqual(['otherSender']);
    expect(names(await report(`senderId=${orgA.senderId}&kind=mdr&channel=RCS`))).toEqual(['pending', 'fallback', 'rcs']);
    expect(names(await report('channel=MMS'))).toEqual(['failed']);
    expect(names(await report('actualChannel=SMS'))).toEqual(['otherSender', 'inbound', 'fallback']);
    expect(names(await report('actualChannel=CHATAPP&status=delivered'))).toEqual(['chat']);
    expect(names(await report('status=revoked'))).toEqual([]);
  });

  it('fallback=fallback keeps messages requested as RCS and carried by SMS/MMS; primary the others', async () => {
    expect(names(await report('fallback=fallback'))).toEqual(['fallback']);
    expect(names(await report('fallback=primary'))).toEqual(['chat', 'otherSender', 'pending', 'inbound', 'failed', 'rcs']);
  });

  it('carrier (no provider reports one) and unknown brand, campaign and programId values match no message', async () => {
    for (const q of ['carrier=T-Mobile%20USA', 'brand=BRX7Q2M', 'campaign=CMP4KD9', 'programId=PRG-10042']) {
      const res = await report(q);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], hasMore: false });
    }
  });

  // The documented order: by the key in `dir` order, nulls last descending and first ascending, then by id.
  const KEYS = {
    createdAt: (f: Fixture) => (f.created_at as Date).toISOString(),
    receiptAt: (f: Fixture) =>
      ((f.direction === 'inbound' ? f.created_at : f.receipt_at) as Date | null | undefined)?.toISOString() ?? null,
    direction: (f: Fixture) => f.direction,
    channel: (f: Fixture) => f.requested_channel ?? null,
    actualChannel: (f: Fixture) => f.channel ?? null,
    fallbackReason: (f: Fixture) => f.fallback_reason ?? null,
  };
  for (const [sort, key] of Object.entries(KEYS)) {
    for (const dir of ['asc', 'desc'] as const) {
      it(`sorts by ${sort} ${dir}`, async () => {
        const sign = dir === 'asc' ? 1 : -1;
        const cmp = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
        const expected = RECENT.map((k) => rows[k]!)
          .sort((a, b) => sign * (cmp(key(a), key(b)) || cmp(a.id!, b.id!)))
          .map((f) => f.id);
        const res = await report(`sort=${sort}&dir=${dir}`);
        expect(res.status).toBe(200);
        expect(idsOf(res)).toEqual(expected);
      });
    }
  }

  it('returns at most limit rows and says whether more matched', async () => {
    const two = await report('limit=2&sort=createdAt&dir=asc');
    expect(names(two)).toEqual(['rcs', 'fallback']);
    expect(two.body.hasMore).toBe(true);
    const exact = await report(`limit=${RECENT.length}`);
    expect(exact.body.data).toHaveLength(RECENT.length);
    expect(exact.body.hasMore).toBe(false);
    for (const bad of ['limit=0', 'limit=1001', 'sort=status', 'kind=x', 'format=xml']) {
      const res = await report(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('format=csv returns the same rows as text/csv with escaped fields', async () => {
    const res = await report('format=csv&sort=createdAt&dir=asc');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.text).not.toContain('PROVIDER_');
    expect(res.text).not.toContain('pmid-secret');
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(
      'messageId,kind,direction,createdAt,receiptAt,contactId,contactPhone,senderId,programId,brand,campaign,carrier,channel,actualChannel,fallback,fallbackReason,messageType,status,errorCode,segments,cost,currency,blastId,conversationId,botId,eventTriggerId,acquisitionCampaignId',
    );
    expect(lines[2]).toBe(
      [
        rows.fallback!.id,
        'mdr',
        'outbound',
        at(2).toISOString(),
        at(2, 3).toISOString(),
        contactA,
        '+14155550100',
        orgA.senderId,
        '',
        '',
        '',
        '',
        'RCS',
        'SMS',
        'fallback',
        'RCS_NOT_SUPPORTED',
        'TRANSACTIONAL',
        'delivered',
        '',
        '2',
        '0.0078',
        'USD',
        '',
        conversationA,
        '',
        '',
        '',
      ].join(','),
    );
    // The error code holds a comma, quotes and a newline: one quoted field, quotes doubled.
    expect(res.text).toContain(`,failed,"CARRIER_REJECTED, ""bad""\nline 2",1,,,,${conversationA},,,\r\n`);
    expect(res.text.endsWith('\r\n')).toBe(true);
    expect(res.text.split('\r\n').filter(Boolean)).toHaveLength(1 + RECENT.length);

    const limited = await report('format=csv&limit=1');
    expect(limited.text.split('\r\n').filter(Boolean)).toHaveLength(2);
  });

  it('never shows another organization’s messages', async () => {
    const b = await report('', orgB.apiKey.secret);
    expect(idsOf(b)).toEqual([orgBMessage]);
    expect(b.text).not.toContain('pmid-secret');
    expect(names(await report(`senderId=${orgB.senderId}`))).toEqual([]);
    expect(idsOf(await report(`senderId=${orgA.senderId}`, orgB.apiKey.secret))).toEqual([]);
  });

  it('needs analytics:read', async () => {
    const key = await srv.newKey(orgA.organizationId, ['contacts:read']);
    expect((await report('', key.secret)).status).toBe(403);
    const reader = await srv.newKey(orgA.organizationId, ['analytics:read']);
    expect((await report('', reader.secret)).status).toBe(200);
  });
});

// A message that never left has no fallback to report; one that really fell back keeps its reason. Sent through
// HTTP, the dispatch worker and the carrier simulator (numbers ending 0777: refused at send; 0333: RCS accepted
// but not delivered, then SMS), so the report, the stored message and the message events are the real ones.
describe('getMessageReport: fallbackReason of messages sent for real', () => {
  let live: TestServer;
  let org: Awaited<ReturnType<TestServer['newOrg']>>;
  let seq = 0;

  beforeAll(async () => {
    dispatchTuning.backoffBaseSeconds = 0.2;
    live = await startTestServer({ workers: true, config: { webhookAllowPrivate: true } });
    org = await live.newOrg('Report fallback org');
    // An endpoint that never answers: the events are stored (and their deliveries retried), so they can be read.
    const hook = await call(live, 'POST', '/v1/webhook-endpoints', {
      key: org.apiKey.secret,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['message.queued', 'message.sent', 'message.delivered', 'message.failed'] },
    });
    expect(hook.status, hook.text).toBe(201);
  });
  afterAll(() => live.close());

  async function contact(suffix: string, rcsCapable: boolean | null) {
    const phone = `+1415${String(++seq).padStart(7 - suffix.length, '0')}${suffix}`;
    return live.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone,
        attributes: '{}',
        rcs_capable: rcsCapable,
        consent_type: 'MARKETING',
        time_zone: 'UTC',
      })
      .returning(['id', 'phone'])
      .executeTakeFirstOrThrow();
  }

  async function sendAndWait(contactId: string, statuses: string[]) {
    const res = await call(live, 'POST', '/v1/messages/send', {
      key: org.apiKey.secret,
      body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped.' } },
    });
    expect(res.status, res.text).toBe(200);
    const id: string = res.body.data.messageId;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const row = await live.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      if (statuses.includes(row.status)) return { send: res.body.data, row };
      if (Date.now() > deadline) throw new Error(`message ${id} is ${row.status}, expected ${statuses.join('/')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const reportRow = async (id: string) => {
    const res = await call(live, 'GET', '/v1/reports/messages?kind=mdr&limit=1000', { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    return res.body.data.find((r: { messageId: string }) => r.messageId === id);
  };
  const eventData = async (id: string, type: string) => {
    const rows = await live.context.db
      .selectFrom('webhook_events')
      .select('body')
      .where('organization_id', '=', org.organizationId)
      .where('type', '=', type)
      .execute();
    return rows.map((r) => JSON.parse(r.body).data).filter((d: { messageId: string }) => d.messageId === id);
  };
  const conversationMessage = async (conversationId: string, id: string) => {
    const res = await call(live, 'GET', `/v1/conversations/${conversationId}/messages`, { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    return res.body.data.find((m: { id: string }) => m.id === id);
  };

  // Capability unknown at send (found out at dispatch, then SMS planned) and known at send (SMS planned at once).
  for (const rcsCapable of [null, false]) {
    it(`a message refused by the carrier at send has no fallbackReason (capability ${rcsCapable === null ? 'unknown' : 'known'} at send)`, async () => {
      const c = await contact('0777', rcsCapable);
      const { send, row } = await sendAndWait(c.id, ['failed']);
      // The send answer is the plan: SMS at once when the handset is known not to take RCS.
      expect(send.fallbackReason).toBe(rcsCapable === false ? 'RCS_NOT_SUPPORTED' : null);

      expect(row).toMatchObject({
        status: 'failed',
        channel: null,
        fallback_used: false,
        fallback_reason: null,
        error_code: 'CARRIER_REJECTED',
      });
      expect(await reportRow(row.id)).toMatchObject({
        channel: 'RCS',
        actualChannel: null,
        fallback: 'primary',
        fallbackReason: null,
        status: 'failed',
        errorCode: 'CARRIER_REJECTED',
        cost: null,
      });
      const failed = await eventData(row.id, 'message.failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({
        status: 'failed',
        channel: null,
        fallbackUsed: false,
        fallbackReason: null,
        error: { code: 'CARRIER_REJECTED' },
      });
      expect(await conversationMessage(row.conversation_id, row.id)).toMatchObject({
        status: 'failed',
        channel: null,
        fallbackUsed: false,
        fallbackReason: null,
        error: { code: 'CARRIER_REJECTED' },
      });
    });
  }

  it('a message RCS did not deliver and SMS did still reports RCS_DELIVERY_FAILED everywhere', async () => {
    const c = await contact('0333', true);
    const { row } = await sendAndWait(c.id, ['delivered']);
    expect(row).toMatchObject({ channel: 'SMS', fallback_used: true, fallback_reason: 'RCS_DELIVERY_FAILED' });
    expect(await reportRow(row.id)).toMatchObject({
      channel: 'RCS',
      actualChannel: 'SMS',
      fallback: 'fallback',
      fallbackReason: 'RCS_DELIVERY_FAILED',
      status: 'delivered',
      errorCode: null,
    });
    const delivered = await eventData(row.id, 'message.delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ channel: 'SMS', fallbackUsed: true, fallbackReason: 'RCS_DELIVERY_FAILED', error: null });
    expect(await eventData(row.id, 'message.failed')).toEqual([]);
    expect(await conversationMessage(row.conversation_id, row.id)).toMatchObject({
      channel: 'SMS',
      fallbackUsed: true,
      fallbackReason: 'RCS_DELIVERY_FAILED',
    });
  });

  it('a message the handset could not take by RCS, carried by SMS, reports RCS_NOT_SUPPORTED', async () => {
    const c = await contact('8', null);
    const { row } = await sendAndWait(c.id, ['delivered']);
    expect(await reportRow(row.id)).toMatchObject({ actualChannel: 'SMS', fallback: 'fallback', fallbackReason: 'RCS_NOT_SUPPORTED' });
    expect((await eventData(row.id, 'message.delivered'))[0]).toMatchObject({
      channel: 'SMS',
      fallbackUsed: true,
      fallbackReason: 'RCS_NOT_SUPPORTED',
    });
  });
});
