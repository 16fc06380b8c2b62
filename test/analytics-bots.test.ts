// getAnalyticsBot through HTTP: a bot's lifetime summary checked against direct SQL on seeded bots, sessions and
// messages (and against hand-counted figures), 404 for another organization's bot, 403 without analytics:read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Channel } from '../src/db/tables/enums.ts';
import type { MessageOrigin } from '../src/db/tables/messaging.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;

let srv: TestServer;
let orgA: Org;
let orgB: Org;
let botA: string;
let botIdle: string;

const flow = {
  nodes: [
    { id: 'start', type: 'START', data: {} },
    { id: 'ask', type: 'QUESTION', data: {} },
    { id: 'done', type: 'END', data: {} },
    { id: 'agent', type: 'HANDOFF', data: {} },
  ],
  edges: [],
};
const at = (minutes: number) => new Date(Date.UTC(2026, 9, 1, 10, 0) + minutes * 60_000);

async function contactAndConversation(org: Org, phone: string, botId: string) {
  const db = srv.context.db;
  const contact = await db
    .insertInto('contacts')
    .values({ organization_id: org.organizationId, phone, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const conversation = await db
    .insertInto('conversations')
    .values({
      organization_id: org.organizationId,
      contact_id: contact.id,
      sender_id: org.senderId,
      source_type: 'bot',
      source_bot_id: botId,
      bot_id: botId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { contactId: contact.id, conversationId: conversation.id };
}

async function session(
  org: Org,
  botId: string,
  c: { contactId: string; conversationId: string },
  nodeId: string | null,
  status: string,
  from: Date,
  to: Date,
) {
  await srv.context.db
    .insertInto('bot_sessions')
    .values({
      organization_id: org.organizationId,
      bot_id: botId,
      conversation_id: c.conversationId,
      contact_id: c.contactId,
      flow: JSON.stringify(flow),
      node_id: nodeId,
      variables: '{}',
      status,
      created_at: from,
      updated_at: to,
    })
    .execute();
}

async function message(
  org: Org,
  c: { contactId: string; conversationId: string },
  direction: 'inbound' | 'outbound',
  createdAt: Date,
  content: Record<string, unknown> = { type: 'text', text: 'hi' },
  origin: MessageOrigin = direction === 'inbound' ? 'inbound' : 'bot',
  channel: Channel = 'RCS',
) {
  await srv.context.db
    .insertInto('messages')
    .values({
      organization_id: org.organizationId,
      conversation_id: c.conversationId,
      contact_id: c.contactId,
      contact_phone: '+14155550100',
      sender_id: org.senderId,
      direction,
      status: direction === 'inbound' ? 'received' : 'delivered',
      channel,
      content: JSON.stringify(content),
      origin,
      segments: 1,
      created_at: createdAt,
      // Handed to a carrier: `sent` as AnalyticsMessageMetrics defines it.
      sent_at: direction === 'outbound' ? createdAt : null,
    })
    .execute();
}

async function bot(org: Org, name: string) {
  return (
    await srv.context.db
      .insertInto('bots')
      .values({
        organization_id: org.organizationId,
        name,
        channel: 'RCS',
        draft_flow: JSON.stringify(flow),
        published_flow: JSON.stringify(flow),
        published_version: 1,
        published_at: at(0),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

beforeAll(async () => {
  srv = await startTestServer();
  [orgA, orgB] = await Promise.all([srv.newOrg('Bot analytics A'), srv.newOrg('Bot analytics B')]);
  botA = await bot(orgA, 'Order assistant');
  botIdle = await bot(orgA, 'Idle bot');
  const otherBot = await bot(orgA, 'Other bot');
  const c1 = await contactAndConversation(orgA, '+14155550301', botA);
  const c2 = await contactAndConversation(orgA, '+14155550302', botA);
  // c1: a completed session (END), then a later one handed to a human; c2: an active session.
  await session(orgA, botA, c1, 'done', 'ENDED', at(0), at(10));
  await session(orgA, botA, c1, 'agent', 'HANDED_OFF', at(60), at(65));
  await session(orgA, botA, c2, 'ask', 'ACTIVE', at(120), at(150));
  // A session that ended without reaching an End node (no completion).
  await session(orgA, botA, c2, 'ask', 'ENDED', at(200), at(201));
  await message(orgA, c1, 'outbound', at(1));
  await message(orgA, c1, 'inbound', at(2), { type: 'reply', text: 'Yes', postback: ' Confirm_Order ' });
  await message(orgA, c1, 'outbound', at(3));
  await message(orgA, c1, 'inbound', at(61), { type: 'reply', text: 'Agent', postback: 'talk_to_agent' });
  await message(orgA, c1, 'outbound', at(62), { type: 'text', text: 'agent here' }, 'conversation'); // not the bot's
  await message(orgA, c2, 'inbound', at(121), { type: 'reply', text: 'Yes', postback: 'confirm_order' });
  await message(orgA, c2, 'outbound', at(122));
  await message(orgA, c2, 'inbound', at(500), { type: 'reply', text: 'late', postback: 'late' }); // outside every session
  // Another bot's session in the same organization and a busy bot in organization B must not count.
  const c3 = await contactAndConversation(orgA, '+14155550303', otherBot);
  await session(orgA, otherBot, c3, 'done', 'ENDED', at(0), at(5));
  await message(orgA, c3, 'inbound', at(1), { type: 'reply', text: 'x', postback: 'other' });
  // An SMS answering a suggested reply by its text counts as a tap of that reply; one that matches none does not.
  await message(orgA, c3, 'outbound', at(2), {
    type: 'text',
    text: 'Confirm?',
    replies: [
      { text: 'Yes', postback: 'confirm_order' },
      { text: 'No', postback: 'cancel' },
    ],
  });
  await message(orgA, c3, 'inbound', at(3), { type: 'text', text: ' YES ' }, 'inbound', 'SMS');
  await message(orgA, c3, 'inbound', at(4), { type: 'text', text: 'maybe' }, 'inbound', 'SMS');
  // A label typed on RCS and a reply's number sent by SMS are taps too (the bot follows both as the intent).
  const c4 = await contactAndConversation(orgA, '+14155550305', otherBot);
  await session(orgA, otherBot, c4, 'done', 'ENDED', at(0), at(9));
  const confirm = {
    type: 'text',
    text: 'Confirm?',
    replies: [
      { text: 'Yes', postback: 'confirm_order' },
      { text: 'No', postback: 'cancel' },
    ],
  };
  await message(orgA, c4, 'outbound', at(5), confirm);
  await message(orgA, c4, 'inbound', at(6), { type: 'text', text: 'no' }, 'inbound', 'RCS');
  await message(orgA, c4, 'outbound', at(7), confirm);
  await message(orgA, c4, 'inbound', at(8), { type: 'text', text: ' 1 ' }, 'inbound', 'SMS');
  await srv.context.db
    .insertInto('intents')
    .values({
      organization_id: orgA.organizationId,
      value: 'confirm_order',
      label: 'Confirm order',
      description: null,
      category_id: null,
      active: true,
    })
    .execute();
  const botB = await bot(orgB, 'B bot');
  const cB = await contactAndConversation(orgB, '+14155550304', botB);
  await session(orgB, botB, cB, 'done', 'ENDED', at(0), at(5));
  await message(orgB, cB, 'inbound', at(1), { type: 'reply', text: 'Yes', postback: 'confirm_order' });
});
afterAll(() => srv.close());

describe('GET /v1/analytics/bots/{id}', () => {
  it('sums the bot’s sessions, messages, completions, handoffs and taps (equal to direct SQL)', async () => {
    const res = await call(srv, 'GET', `/v1/analytics/bots/${botA}`, { key: orgA.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const org = orgA.organizationId;
    const ref = (
      await sql<Record<string, string>>`
      select count(*) as sessions, count(distinct contact_id) as contacts,
        count(*) filter (where status = 'HANDED_OFF') as handoffs,
        avg(extract(epoch from updated_at - created_at)) as avg, max(updated_at) as last
      from bot_sessions where organization_id = ${org} and bot_id = ${botA}`.execute(srv.context.db)
    ).rows[0]!;
    const msgs = (
      await sql<Record<string, string>>`
      select count(*) filter (where m.direction = 'outbound' and m.origin in ('bot', 'event') and m.sent_at is not null and m.status <> 'revoked') as sent,
        count(*) filter (where m.direction = 'inbound') as received
      from messages m where m.organization_id = ${org} and exists (select 1 from bot_sessions s where s.organization_id = ${org} and s.bot_id = ${botA}
        and s.conversation_id = m.conversation_id and m.created_at between s.created_at and s.updated_at)`.execute(srv.context.db)
    ).rows[0]!;
    expect(res.body.data).toEqual({
      botId: botA,
      name: 'Order assistant',
      sessions: Number(ref.sessions),
      uniqueContacts: Number(ref.contacts),
      messagesSent: Number(msgs.sent),
      messagesReceived: Number(msgs.received),
      completions: 1,
      completionRate: 0.25,
      handoffsToHuman: Number(ref.handoffs),
      averageSessionDurationSeconds: Math.round(Number(ref.avg) * 10) / 10,
      lastActivityAt: new Date(ref.last!).toISOString(),
      topIntents: [
        { value: 'confirm_order', taps: 2 },
        { value: 'talk_to_agent', taps: 1 },
      ],
    });
    // The hand count of the seed: 4 sessions of 2 contacts, 3 bot messages sent, 3 received, 1 handoff.
    expect(res.body.data).toMatchObject({
      sessions: 4,
      uniqueContacts: 2,
      messagesSent: 3,
      messagesReceived: 3,
      handoffsToHuman: 1,
      averageSessionDurationSeconds: 690,
    });
  });

  it('answers zeros for a bot without sessions', async () => {
    const res = await call(srv, 'GET', `/v1/analytics/bots/${botIdle}`, { key: orgA.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      botId: botIdle,
      name: 'Idle bot',
      sessions: 0,
      uniqueContacts: 0,
      messagesSent: 0,
      messagesReceived: 0,
      completions: 0,
      completionRate: 0,
      handoffsToHuman: 0,
      averageSessionDurationSeconds: 0,
      lastActivityAt: null,
      topIntents: [],
    });
  });

  it('answers 404 for another organization’s bot or an unknown id, 403 without analytics:read', async () => {
    const other = await call(srv, 'GET', `/v1/analytics/bots/${botA}`, { key: orgB.apiKey.secret });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('NOT_FOUND');
    expect((await call(srv, 'GET', '/v1/analytics/bots/00000000-0000-4000-8000-000000000000', { key: orgA.apiKey.secret })).status).toBe(
      404,
    );
    const key = await srv.newKey(orgA.organizationId, ['messages:read']);
    const denied = await call(srv, 'GET', `/v1/analytics/bots/${botA}`, { key: key.secret });
    expect(denied.status).toBe(403);
  });
});

describe('GET /v1/analytics/intents', () => {
  const day = '2026-10-01';
  it('counts taps per normalized value, texts matching a reply by its label or number included, most tapped first (ties by value)', async () => {
    const res = await call(srv, 'GET', `/v1/analytics/intents?startDate=${day}&endDate=${day}`, { key: orgA.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const org = orgA.organizationId;
    // Direct SQL: postback taps of the day, plus the texts matched to a reply (hand-counted: c3's SMS " YES " and
    // c4's SMS "1" → confirm_order, c4's RCS "no" → cancel).
    const direct = (
      await sql<{ value: string; taps: string; contacts: string }>`
      select lower(btrim(content->>'postback')) as value, count(*) as taps, count(distinct contact_id) as contacts
      from messages where organization_id = ${org} and direction = 'inbound' and content->>'type' = 'reply'
        and created_at >= ${new Date(`${day}T00:00:00Z`)} and created_at < ${new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000)}
      group by 1`.execute(srv.context.db)
    ).rows;
    const typed: Record<string, number> = { confirm_order: 2, cancel: 1 };
    const expected = [...direct, { value: 'cancel', taps: '0', contacts: '0' }]
      .map((r) => ({
        value: r.value,
        taps: Number(r.taps) + (typed[r.value] ?? 0),
        uniqueContacts: Number(r.contacts) + (typed[r.value] ?? 0),
      }))
      .sort((a, b) => b.taps - a.taps || (a.value < b.value ? -1 : 1));
    const intentId = (
      await sql<{ id: string }>`select id from intents where organization_id = ${org} and value = 'confirm_order'`.execute(srv.context.db)
    ).rows[0]!.id;
    expect(res.body.data).toEqual({
      period: { startDate: day, endDate: day },
      totalTaps: expected.reduce((n, e) => n + e.taps, 0),
      intents: expected.map((e) => ({
        ...e,
        intentId: e.value === 'confirm_order' ? intentId : null,
        label: e.value === 'confirm_order' ? 'Confirm order' : null,
      })),
    });
    expect(res.body.data.intents.map((i: { value: string; taps: number }) => [i.value, i.taps])).toEqual([
      ['confirm_order', 4],
      ['cancel', 1],
      ['late', 1],
      ['other', 1],
      ['talk_to_agent', 1],
    ]);
  });

  it('answers nothing outside the range, 400 for startDate after endDate, 403 without analytics:read', async () => {
    const empty = await call(srv, 'GET', '/v1/analytics/intents?startDate=2026-09-01&endDate=2026-09-30', { key: orgA.apiKey.secret });
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body.data).toEqual({ period: { startDate: '2026-09-01', endDate: '2026-09-30' }, totalTaps: 0, intents: [] });
    const bad = await call(srv, 'GET', '/v1/analytics/intents?startDate=2026-10-02&endDate=2026-10-01', { key: orgA.apiKey.secret });
    expect(bad.status).toBe(400);
    const b = await call(srv, 'GET', `/v1/analytics/intents?startDate=${day}&endDate=${day}`, { key: orgB.apiKey.secret });
    expect(b.body.data.intents).toEqual([{ value: 'confirm_order', intentId: null, label: null, taps: 1, uniqueContacts: 1 }]);
    const key = await srv.newKey(orgA.organizationId, ['messages:read']);
    expect((await call(srv, 'GET', '/v1/analytics/intents', { key: key.secret })).status).toBe(403);
  });
});

describe('GET /v1/analytics/top', () => {
  it('lists the leaders of the last 30 days (equal to direct SQL), at most 5 each, ties by id', async () => {
    const org = await srv.newOrg('Top org');
    const db = srv.context.db;
    const o = org.organizationId;
    const now = Date.now();
    const ago = (h: number) => new Date(now - h * 3_600_000);
    const blastIds: string[] = [];
    for (let b = 0; b < 7; b++) {
      blastIds.push(
        (
          await db
            .insertInto('blasts')
            .values({
              organization_id: o,
              name: `Blast ${b}`,
              status: 'SENT',
              message_type: 'MARKETING',
              sender_id: org.senderId,
              fallback_to_sms: true,
              content_source: 'content',
              contact_ids: JSON.stringify([]),
            } as never)
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
      );
    }
    // Blast b gets b+1 messages (blast 6 only 40 days ago: outside the range); the first of each is read and answered.
    for (let b = 0; b < 7; b++) {
      for (let k = 0; k <= b; k++) {
        const c = await contactAndConversation(org, `+1415556${b}${String(k).padStart(3, '0')}`, await bot(org, `b${b}${k}`));
        const when = b === 6 ? ago(40 * 24) : ago(5);
        const m = await db
          .insertInto('messages')
          .values({
            organization_id: o,
            conversation_id: c.conversationId,
            contact_id: c.contactId,
            contact_phone: '+14155550100',
            sender_id: org.senderId,
            direction: 'outbound',
            status: k === 0 ? 'read' : k === 1 ? 'failed' : 'delivered',
            channel: 'RCS',
            requested_channel: 'RCS',
            content: JSON.stringify({ type: 'text', text: 'sale' }),
            origin: 'blast',
            segments: 1,
            created_at: when,
            sent_at: when,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await db
          .insertInto('blast_recipients')
          .values({
            organization_id: o,
            blast_id: blastIds[b]!,
            contact_id: c.contactId,
            batch: 0,
            variant_key: null,
            status: 'accepted',
            skip_reason: null,
            message_id: m.id,
          } as never)
          .execute();
        if (k === 0)
          await message(org, c, 'inbound', new Date(when.getTime() + 60_000), { type: 'reply', text: 'Buy', postback: `buy_${b}` });
        if (k === 0 && b < 6) await session(org, await bot(org, `session bot ${b}`), c, 'done', 'ENDED', ago(4), ago(3));
      }
    }
    const res = await call(srv, 'GET', '/v1/analytics/top', { key: org.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    const today = new Date().toISOString().slice(0, 10);
    expect(d.period.endDate).toBe(today);
    const ref = (
      await sql<{ id: string; sent: string; delivered: string; read: string }>`
      select r.blast_id as id, count(*) filter (where m.sent_at is not null) as sent, count(*) filter (where m.status in ('delivered', 'read')) as delivered, count(*) filter (where m.status = 'read') as read
      from blast_recipients r join messages m on m.id = r.message_id where r.organization_id = ${o} and m.created_at >= ${new Date(Date.parse(`${d.period.startDate}T00:00:00Z`))}
      group by 1 order by count(*) desc, r.blast_id limit 5`.execute(db)
    ).rows;
    expect(d.blasts).toEqual(
      ref.map((r) => ({
        blastId: r.id,
        name: `Blast ${blastIds.indexOf(r.id)}`,
        sent: Number(r.sent),
        deliveryRate: Math.round((Number(r.delivered) / Number(r.sent)) * 10_000) / 10_000,
        readRate: Math.round((Number(r.read) / Number(r.delivered)) * 10_000) / 10_000,
        responseRate: Math.round((1 / Number(r.delivered)) * 10_000) / 10_000,
      })),
    );
    expect(d.blasts.map((b: { name: string }) => b.name)).toEqual(['Blast 5', 'Blast 4', 'Blast 3', 'Blast 2', 'Blast 1']);
    // Six bots with one completed session each: the 5 smallest ids, completion rate 1.
    const bots = (
      await sql<{ bot_id: string }>`select bot_id from bot_sessions where organization_id = ${o} order by bot_id limit 5`.execute(db)
    ).rows;
    expect(d.bots.map((b: { botId: string; sessions: number; completionRate: number }) => [b.botId, b.sessions, b.completionRate])).toEqual(
      bots.map((b) => [b.bot_id, 1, 1]),
    );
    // Taps: one per blast in range (buy_0 … buy_5): the 5 first by value.
    expect(d.intents).toEqual(['buy_0', 'buy_1', 'buy_2', 'buy_3', 'buy_4'].map((value) => ({ value, label: null, taps: 1 })));
    const sent = (
      await sql<{
        n: string;
      }>`select count(*) as n from messages where organization_id = ${o} and direction = 'outbound' and created_at >= ${new Date(Date.parse(`${d.period.startDate}T00:00:00Z`))}`.execute(
        db,
      )
    ).rows[0]!;
    expect(d.senders).toEqual([
      { senderId: org.senderId, name: expect.any(String), sent: Number(sent.n), deliveryRate: expect.any(Number) },
    ]);
    // Another organization sees none of it.
    const other = await call(srv, 'GET', '/v1/analytics/top', { key: orgB.apiKey.secret });
    expect(other.body.data.blasts).toEqual([]);
    const key = await srv.newKey(o, ['messages:read']);
    expect((await call(srv, 'GET', '/v1/analytics/top', { key: key.secret })).status).toBe(403);
  });
});

describe('GET /v1/analytics/blasts/{id}', () => {
  it('counts delivery, engagement, channels and the series of one blast (equal to direct SQL), truncated at 1,440 buckets', async () => {
    const org = await srv.newOrg('Blast figures org');
    const db = srv.context.db;
    const o = org.organizationId;
    const blastOfOrg = async (name: string, launched: boolean) =>
      (
        await db
          .insertInto('blasts')
          .values({
            organization_id: o,
            name,
            status: launched ? 'SENT' : 'DRAFT',
            message_type: 'MARKETING',
            sender_id: org.senderId,
            fallback_to_sms: true,
            content_source: 'content',
            contact_ids: JSON.stringify([]),
            launched_at: launched ? at(0) : null,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const blastId = await blastOfOrg('Spring sale', true);
    const draft = await blastOfOrg('Draft', false);
    const otherBot = await bot(org, 'unused');
    const sendTo = async (phone: string, m: Record<string, unknown>) => {
      const c = await contactAndConversation(org, phone, otherBot);
      const row = await db
        .insertInto('messages')
        .values({
          organization_id: o,
          conversation_id: c.conversationId,
          contact_id: c.contactId,
          contact_phone: phone,
          sender_id: org.senderId,
          direction: 'outbound',
          content: JSON.stringify({ type: 'text', text: 'Sale!', replies: [{ text: 'Buy', postback: 'buy' }] }),
          origin: 'blast',
          segments: 1,
          created_at: at(0),
          sent_at: at(0), // every one was handed to a carrier (the failure comes two days later)
          ...m,
        } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('blast_recipients')
        .values({
          organization_id: o,
          blast_id: blastId,
          contact_id: c.contactId,
          batch: 0,
          variant_key: null,
          status: 'accepted',
          skip_reason: null,
          message_id: row.id,
        } as never)
        .execute();
      return c;
    };
    const c1 = await sendTo('+14155557001', {
      status: 'read',
      channel: 'RCS',
      requested_channel: 'RCS',
      cost_units: 150,
      delivered_at: at(1),
      read_at: at(2),
    });
    const c2 = await sendTo('+14155557005', {
      status: 'delivered',
      channel: 'SMS',
      requested_channel: 'RCS',
      cost_units: 39,
      delivered_at: at(1),
    });
    await sendTo('+14155557006', {
      status: 'failed',
      channel: 'SMS',
      requested_channel: 'SMS',
      cost_units: null,
      failed_at: at(2 * 24 * 60),
    });
    const skipped = await contactAndConversation(org, '+14155557007', otherBot);
    await db
      .insertInto('blast_recipients')
      .values({
        organization_id: o,
        blast_id: blastId,
        contact_id: skipped.contactId,
        batch: 0,
        variant_key: null,
        status: 'skipped',
        skip_reason: 'OPTED_OUT',
        message_id: null,
      } as never)
      .execute();
    await message(org, c1, 'inbound', at(3), { type: 'reply', text: 'Buy', postback: 'buy' });
    await message(org, c1, 'inbound', at(26 * 60), { type: 'text', text: 'late' }); // more than 24 hours later: not a response
    await message(org, c2, 'inbound', at(4), { type: 'text', text: 'buy' }, 'inbound', 'SMS'); // an SMS matching the reply: a tap
    await message(org, c2, 'inbound', at(5), { type: 'text', text: 'thanks' }, 'inbound', 'SMS');
    await db
      .insertInto('consent_events')
      .values({
        organization_id: o,
        contact_id: c2.contactId,
        phone: '+14155557005',
        action: 'OPT_OUT',
        source: 'KEYWORD',
        created_at: at(10),
      } as never)
      .execute();

    const res = await call(srv, 'GET', `/v1/analytics/blasts/${blastId}?granularity=minute`, { key: org.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    const ref = (
      await sql<Record<string, string>>`
      select count(*) filter (where m.sent_at is not null) as sent, count(*) filter (where m.status in ('delivered', 'read')) as delivered, count(*) filter (where m.status = 'read') as read,
        count(*) filter (where m.status in ('failed', 'undeliverable')) as failed, coalesce(sum(m.cost_units), 0) as cost,
        count(*) filter (where m.sent_at is not null and m.requested_channel = 'RCS' and m.channel in ('SMS', 'MMS')) as fallback
      from blast_recipients r join messages m on m.id = r.message_id where r.organization_id = ${o} and r.blast_id = ${blastId}`.execute(db)
    ).rows[0]!;
    expect(d.recipients).toBe(3);
    expect(d.metrics).toEqual({
      sent: Number(ref.sent),
      delivered: Number(ref.delivered),
      read: Number(ref.read),
      failed: Number(ref.failed),
      received: 3,
      fallback: Number(ref.fallback),
      deliveryRate: 0.6667,
      readRate: 0.5,
      cost: { amount: (Number(ref.cost) / 10_000).toFixed(4), currency: 'USD' },
    });
    expect(d.engagement).toEqual({ taps: 2, replies: 1, uniqueResponders: 2, optOuts: 1, responseRate: 1 });
    expect(
      d.byChannel.map((c: { channel: string; share: number; metrics: { sent: number; received: number } }) => [
        c.channel,
        c.share,
        c.metrics.sent,
        c.metrics.received,
      ]),
    ).toEqual([
      ['SMS', 0.6667, 2, 2],
      ['RCS', 0.3333, 1, 1],
    ]);
    expect(d.truncated).toBe(true);
    expect(d.timeline).toHaveLength(1440);
    expect(d.timeline.slice(0, 6)).toEqual([
      { bucketStart: at(0).toISOString().replace('.000Z', 'Z'), sent: 3, delivered: 0, read: 0, failed: 0, taps: 0, replies: 0 },
      { bucketStart: at(1).toISOString().replace('.000Z', 'Z'), sent: 0, delivered: 2, read: 0, failed: 0, taps: 0, replies: 0 },
      { bucketStart: at(2).toISOString().replace('.000Z', 'Z'), sent: 0, delivered: 0, read: 1, failed: 0, taps: 0, replies: 0 },
      { bucketStart: at(3).toISOString().replace('.000Z', 'Z'), sent: 0, delivered: 0, read: 0, failed: 0, taps: 1, replies: 0 },
      { bucketStart: at(4).toISOString().replace('.000Z', 'Z'), sent: 0, delivered: 0, read: 0, failed: 0, taps: 1, replies: 0 },
      { bucketStart: at(5).toISOString().replace('.000Z', 'Z'), sent: 0, delivered: 0, read: 0, failed: 0, taps: 0, replies: 1 },
    ]);
    // By hour the failure two days later fits: 49 buckets, not truncated.
    const hourly = await call(srv, 'GET', `/v1/analytics/blasts/${blastId}`, { key: org.apiKey.secret });
    expect(hourly.body.data.granularity).toBe('hour');
    expect(hourly.body.data.truncated).toBe(false);
    expect(hourly.body.data.timeline).toHaveLength(49);
    expect(hourly.body.data.timeline[48]).toMatchObject({ failed: 1 });
    // Not launched: zeros and an empty series; another organization's blast 404; 403 without analytics:read.
    const none = await call(srv, 'GET', `/v1/analytics/blasts/${draft}`, { key: org.apiKey.secret });
    expect(none.status, none.text).toBe(200);
    expect(none.body.data).toMatchObject({
      recipients: 0,
      metrics: { sent: 0, delivered: 0 },
      engagement: { taps: 0, replies: 0, uniqueResponders: 0, optOuts: 0, responseRate: 0 },
      byChannel: [],
      timeline: [],
      truncated: false,
    });
    expect((await call(srv, 'GET', `/v1/analytics/blasts/${blastId}`, { key: orgB.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/analytics/blasts/${blastId}?granularity=day`, { key: org.apiKey.secret })).status).toBe(400);
    const key = await srv.newKey(o, ['messages:read']);
    expect((await call(srv, 'GET', `/v1/analytics/blasts/${blastId}`, { key: key.secret })).status).toBe(403);
  });
});
