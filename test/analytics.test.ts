// Analytics figures through HTTP: getAnalyticsProtocols, listAnalyticsSenderIds, getAnalyticsSenderId. Every
// answer is checked against a direct aggregate of the messages table and against the message report's rows (cost
// to the cent); the rollup (migration 0022, a trigger on messages) is checked equal to the direct aggregate after
// inserts, status updates and deletes, and after messages sent for real through the carrier simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Insertable } from 'kysely';
import type { MessagesTable } from '../src/db/tables/messaging.ts';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { toMoney } from '../src/domain/messaging/pricing.ts';
import { compactRollup } from '../src/db/queries/analytics/rollups.ts';
import { runDueReports } from '../src/jobs/analytics.ts';
import { readAll, storeFor } from '../src/lib/storage/index.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;
type Fixture = Partial<Insertable<MessagesTable>> & Pick<Insertable<MessagesTable>, 'direction' | 'status'>;

const DAY = 86_400_000;
const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const dayAt = (daysAgo: number, hour = 10) => new Date(today.getTime() - daysAgo * DAY + hour * 3_600_000);
const iso = (d: Date) => d.toISOString().slice(0, 10);

let srv: TestServer;
let orgA: Org;
let orgB: Org;
let senderA2: string;

/** Seeded contacts' phones: sequential, so two seeds of one organization never collide (random ones did). */
let seeded = 0;

const HANDED = new Set(['sent', 'delivered', 'read', 'undeliverable']);

async function seed(org: Org, senderId: string, list: Fixture[]): Promise<string[]> {
  const contact = await srv.context.db
    .insertInto('contacts')
    .values({ organization_id: org.organizationId, phone: `+1415555${String(1000 + seeded++)}`, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const conversation = await srv.context.db
    .insertInto('conversations')
    .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: senderId, source_type: 'api' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const rows = await srv.context.db
    .insertInto('messages')
    .values(
      list.map((f) => ({
        organization_id: org.organizationId,
        conversation_id: conversation.id,
        contact_id: contact.id,
        contact_phone: '+14155550100',
        sender_id: senderId,
        content: JSON.stringify({ type: 'text', text: 'hi' }),
        origin: f.direction === 'inbound' ? 'inbound' : 'api',
        segments: 1,
        // A carrier took it (the `sent` of AnalyticsMessageMetrics) when its status says a carrier answered for it.
        sent_at: f.direction === 'outbound' && HANDED.has(f.status) ? (f.created_at as Date) : null,
        ...f,
      })),
    )
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

// A spread of outcomes over the last days: delivered/read RCS, SMS fallbacks, failures, revoked, inbound, queued.
const fixtures = (): Fixture[] => [
  {
    direction: 'outbound',
    requested_channel: 'RCS',
    channel: 'RCS',
    message_type: 'MARKETING',
    status: 'read',
    cost_units: 150,
    created_at: dayAt(1),
  },
  {
    direction: 'outbound',
    requested_channel: 'RCS',
    channel: 'RCS',
    message_type: 'TRANSACTIONAL',
    status: 'delivered',
    cost_units: 39,
    created_at: dayAt(1, 11),
  },
  {
    direction: 'outbound',
    requested_channel: 'RCS',
    channel: 'SMS',
    fallback_used: true,
    fallback_reason: 'RCS_NOT_SUPPORTED',
    message_type: 'TRANSACTIONAL',
    status: 'delivered',
    segments: 3,
    cost_units: 117,
    created_at: dayAt(2),
  },
  {
    direction: 'outbound',
    requested_channel: 'RCS',
    channel: 'MMS',
    fallback_used: true,
    fallback_reason: 'RCS_DELIVERY_FAILED',
    message_type: 'MARKETING',
    status: 'undeliverable',
    cost_units: 150,
    created_at: dayAt(2, 23),
  },
  {
    direction: 'outbound',
    requested_channel: 'SMS',
    channel: 'SMS',
    message_type: 'SERVICE',
    status: 'failed',
    cost_units: null,
    created_at: dayAt(3),
  },
  {
    direction: 'outbound',
    requested_channel: 'SMS',
    channel: 'SMS',
    message_type: 'MARKETING',
    status: 'revoked',
    cost_units: null,
    created_at: dayAt(3, 1),
  },
  {
    direction: 'outbound',
    requested_channel: 'RCS',
    channel: null,
    message_type: 'MARKETING',
    status: 'queued',
    cost_units: null,
    created_at: dayAt(0, 0),
  },
  {
    direction: 'outbound',
    requested_channel: 'CHATAPP',
    channel: 'CHATAPP',
    message_type: 'SERVICE',
    status: 'read',
    cost_units: 150,
    created_at: dayAt(4),
  },
  { direction: 'inbound', channel: 'SMS', status: 'received', created_at: dayAt(1, 12) },
  { direction: 'inbound', channel: 'RCS', status: 'received', created_at: dayAt(2, 5) },
  // Outside the default range (the 30 days ending today).
  {
    direction: 'outbound',
    requested_channel: 'SMS',
    channel: 'SMS',
    message_type: 'MARKETING',
    status: 'delivered',
    cost_units: 39,
    created_at: dayAt(40),
  },
];

type Sums = { sent: number; delivered: number; read: number; failed: number; received: number; fallback: number; cost: string };

/** The same figures computed directly from the messages table (the reference the rollup must equal). */
async function direct(orgId: string, from: Date, to: Date, where = sql`true`): Promise<Sums> {
  const r = await sql<Record<string, string>>`
    select
      count(*) filter (where direction = 'outbound' and status <> 'revoked' and sent_at is not null) as sent,
      count(*) filter (where direction = 'outbound' and status in ('delivered', 'read')) as delivered,
      count(*) filter (where direction = 'outbound' and status = 'read') as read,
      count(*) filter (where direction = 'outbound' and status in ('failed', 'undeliverable')) as failed,
      count(*) filter (where direction = 'inbound') as received,
      count(*) filter (where direction = 'outbound' and status <> 'revoked' and sent_at is not null and requested_channel = 'RCS' and channel in ('SMS', 'MMS')) as fallback,
      coalesce(sum(cost_units) filter (where direction = 'outbound' and status <> 'revoked'), 0) as cost
    from messages where organization_id = ${orgId} and created_at >= ${from} and created_at < ${to} and ${where}`.execute(srv.context.db);
  const row = r.rows[0]!;
  return {
    sent: +row.sent!,
    delivered: +row.delivered!,
    read: +row.read!,
    failed: +row.failed!,
    received: +row.received!,
    fallback: +row.fallback!,
    cost: toMoney(Number(row.cost)).amount,
  };
}

/** The rollup plus its pending deltas (or, after a compaction, the rollup alone) must equal the messages table. */
async function rollupEqualsMessages(orgId: string, source: 'rollup+deltas' | 'rollup' = 'rollup+deltas') {
  const rows =
    source === 'rollup'
      ? sql`select * from analytics_message_rollups where organization_id = ${orgId}`
      : sql`select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages from analytics_message_rollups where organization_id = ${orgId}
          union all
          select organization_id, bucket_hour, sender_id, direction, requested_channel, channel, status, message_type, is_fallback, messages, segments, cost_units, text_segments, rich_messages from analytics_message_deltas where organization_id = ${orgId}`;
  const fromRollup = await sql<Record<string, string>>`
    select sender_id, direction, requested_channel, channel, status, message_type, is_fallback, sum(messages)::int8 as n, sum(segments)::int8 as seg, sum(cost_units)::int8 as cost, sum(text_segments)::int8 as text, sum(rich_messages)::int8 as rich
    from (${rows}) r group by 1, 2, 3, 4, 5, 6, 7 having sum(messages) <> 0 order by 1, 2, 3, 4, 5, 6, 7`.execute(srv.context.db);
  const fromMessages = await sql<Record<string, string>>`
    select sender_id, direction, coalesce(requested_channel, '') as requested_channel, coalesce(channel, '') as channel, status, coalesce(message_type, '') as message_type,
      coalesce(requested_channel = 'RCS' and channel in ('SMS', 'MMS'), false) as is_fallback, count(*)::int8 as n, sum(segments)::int8 as seg, coalesce(sum(cost_units), 0)::int8 as cost,
      coalesce(sum(segments) filter (where cost_units = segments * 39), 0)::int8 as text, count(*) filter (where cost_units = 150)::int8 as rich
    from messages where organization_id = ${orgId} group by 1, 2, 3, 4, 5, 6, 7 order by 1, 2, 3, 4, 5, 6, 7`.execute(srv.context.db);
  expect(fromMessages.rows.length).toBeGreaterThan(0);
  expect(fromRollup.rows).toEqual(fromMessages.rows);
}

/** Cost of the sent messages by the message report (its rows' cost, summed in integer units). */
async function reportCost(key: string, start: string, end: string, senderId?: string): Promise<string> {
  const res = await call(
    srv,
    'GET',
    `/v1/reports/messages?kind=mdr&limit=1000&start=${start}&end=${end}${senderId ? `&senderId=${senderId}` : ''}`,
    { key },
  );
  expect(res.status, res.text).toBe(200);
  expect(res.body.hasMore).toBe(false);
  const units = res.body.data
    .filter((r: { status: string }) => r.status !== 'revoked')
    .reduce((n: number, r: { cost: { amount: string } | null }) => n + (r.cost ? Math.round(Number(r.cost.amount) * 10_000) : 0), 0);
  return toMoney(units).amount;
}

const metricsOf = (m: Sums & { cost: { amount: string } }) => ({ ...m, cost: m.cost.amount });
const pick = (m: Record<string, unknown>) => metricsOf(m as Sums & { cost: { amount: string } });
const strip = ({ deliveryRate: _d, readRate: _r, ...m }: Record<string, unknown>) => pick(m);

beforeAll(async () => {
  srv = await startTestServer();
  [orgA, orgB] = await Promise.all([srv.newOrg('Analytics org A'), srv.newOrg('Analytics org B')]);
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
  await seed(orgA, orgA.senderId, fixtures());
  await seed(orgA, senderA2, fixtures().slice(0, 4));
  await seed(orgB, orgB.senderId, fixtures());
});
afterAll(() => srv.close());

const get = (path: string, key = orgA.apiKey.secret) => call(srv, 'GET', path, { key });
const defaultRange = () => ({ from: new Date(today.getTime() - 29 * DAY), to: new Date(today.getTime() + DAY) });

describe('the rollup', () => {
  it('equals a direct aggregate of the messages table after inserts, updates and deletes', async () => {
    await rollupEqualsMessages(orgA.organizationId);
    // Receipts move a message through statuses and channels; the trigger follows in the same transaction.
    const [id] = await seed(orgA, orgA.senderId, [
      { direction: 'outbound', requested_channel: 'RCS', channel: null, status: 'queued', created_at: dayAt(5) },
    ]);
    await srv.context.db.updateTable('messages').set({ status: 'sent', channel: 'SMS', cost_units: 39 }).where('id', '=', id!).execute();
    await srv.context.db.updateTable('messages').set({ status: 'delivered', delivered_at: new Date() }).where('id', '=', id!).execute();
    await rollupEqualsMessages(orgA.organizationId);
    await srv.context.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('messages').set({ status: 'read' }).where('id', '=', id!).execute();
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await rollupEqualsMessages(orgA.organizationId);
    await srv.context.db.deleteFrom('messages').where('id', '=', id!).execute();
    await rollupEqualsMessages(orgA.organizationId);
    await rollupEqualsMessages(orgB.organizationId);
  });

  /** Deltas not yet folded, of this file's two organizations (other test files write their own at the same time). */
  const pending = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from analytics_message_deltas
          where organization_id in (${orgA.organizationId}, ${orgB.organizationId})`.execute(srv.context.db)
      ).rows[0]!.n,
    );

  it('compaction folds every delta into the rollup exactly, and a second run folds nothing', async () => {
    const before = await pending();
    expect(before).toBeGreaterThan(0);
    // Two compactions at once: the second waits for the first and finds nothing of ours left (no delta counted
    // twice: the rollup alone equals the messages). Other test files write deltas of their own meanwhile, so the
    // counts are of these organizations' deltas, not the table's.
    const [a, b] = await Promise.all([compactRollup(srv.context.db), compactRollup(srv.context.db)]);
    expect(a + b).toBeGreaterThanOrEqual(before);
    expect(await pending()).toBe(0);
    await rollupEqualsMessages(orgA.organizationId, 'rollup');
    await rollupEqualsMessages(orgB.organizationId, 'rollup');
    await compactRollup(srv.context.db);
    await rollupEqualsMessages(orgA.organizationId, 'rollup');
    // Later changes are deltas again until the next run; answers add them (every test below mixes both).
    const [id] = await seed(orgA, orgA.senderId, [
      { direction: 'outbound', requested_channel: 'SMS', channel: 'SMS', status: 'sent', cost_units: 39, created_at: dayAt(6) },
    ]);
    await srv.context.db.deleteFrom('messages').where('id', '=', id!).execute();
    expect(await pending()).toBe(2);
    await rollupEqualsMessages(orgA.organizationId);
  });

  it('appends one delta per rollup key and statement, not one per message (a blast batch writes thousands at once)', async () => {
    await compactRollup(srv.context.db);
    const same = {
      direction: 'outbound' as const,
      requested_channel: 'SMS' as const,
      channel: 'SMS' as const,
      status: 'queued' as const,
      cost_units: 39,
      created_at: dayAt(7),
    };
    const ids = await seed(
      orgA,
      orgA.senderId,
      Array.from({ length: 50 }, () => same),
    );
    expect(await pending()).toBe(1);
    // One statement moves 30 of them to sent: −30 queued, +30 sent; an update changing no rollup column adds nothing.
    await srv.context.db.updateTable('messages').set({ status: 'sent' }).where('id', 'in', ids.slice(0, 30)).execute();
    expect(await pending()).toBe(3);
    await srv.context.db.updateTable('messages').set({ attempts: 1 }).where('id', 'in', ids).execute();
    expect(await pending()).toBe(3);
    await rollupEqualsMessages(orgA.organizationId);
    await srv.context.db.deleteFrom('messages').where('id', 'in', ids).execute();
    expect(await pending()).toBe(5);
    await rollupEqualsMessages(orgA.organizationId);
  });
});

describe('getAnalyticsProtocols', () => {
  it('answers the four channels from the rollup, equal to the messages table and the message report', async () => {
    const res = await get('/v1/analytics/protocols');
    expect(res.status, res.text).toBe(200);
    const { from, to } = defaultRange();
    expect(res.body.data.period).toEqual({ startDate: iso(from), endDate: iso(today) });
    expect(res.body.data.protocols.map((p: { channel: string }) => p.channel)).toEqual(['RCS', 'SMS', 'MMS', 'CHATAPP']);
    const channelOf = (c: string) => sql`coalesce(channel, requested_channel) = ${c}`;
    let units = 0;
    for (const p of res.body.data.protocols) {
      expect(strip(p.metrics)).toEqual(await direct(orgA.organizationId, from, to, channelOf(p.channel)));
      units += Math.round(Number(p.metrics.cost.amount) * 10_000);
    }
    const all = await direct(orgA.organizationId, from, to);
    expect(toMoney(units).amount).toBe(all.cost);
    expect(all.cost).toBe(await reportCost(orgA.apiKey.secret, iso(from), iso(today)));
    // Known figures: 9 of org A's messages in the range were handed to a carrier (5 + 4 on the second sender; the
    // failed one no carrier took, the queued and the revoked ones are not sent), fallbacks by SMS/MMS.
    expect(all).toMatchObject({ sent: 9, received: 2, fallback: 4 });
    const rcs = res.body.data.protocols[0];
    expect(rcs.metrics).toMatchObject({ sent: 4, delivered: 4, read: 2, deliveryRate: 1, readRate: 0.5 });
    expect(rcs.share).toBe(Math.round((4 / 9) * 10_000) / 10_000);
  });

  it('honours the date range and the brand filter', async () => {
    const start = iso(dayAt(2));
    const end = iso(dayAt(1));
    const res = await get(`/v1/analytics/protocols?startDate=${start}&endDate=${end}`);
    expect(res.status).toBe(200);
    const sms = res.body.data.protocols[1];
    expect(strip(sms.metrics)).toEqual(
      await direct(
        orgA.organizationId,
        new Date(`${start}T00:00:00Z`),
        new Date(`${iso(today)}T00:00:00Z`),
        sql`coalesce(channel, requested_channel) = 'SMS'`,
      ),
    );
    const total = res.body.data.protocols.reduce(
      (n: number, p: { metrics: { cost: { amount: string } } }) => n + Math.round(Number(p.metrics.cost.amount) * 10_000),
      0,
    );
    expect(toMoney(total).amount).toBe(await reportCost(orgA.apiKey.secret, start, end));
    const branded = await get('/v1/analytics/protocols?brandId=B123');
    expect(branded.body.data.brandId).toBe('B123');
    expect(branded.body.data.protocols.every((p: { metrics: { sent: number } }) => p.metrics.sent === 0)).toBe(true);
  });

  it('refuses a start after the end and a date that is not a date', async () => {
    const bad = await get(`/v1/analytics/protocols?startDate=${iso(today)}&endDate=${iso(dayAt(3))}`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect((await get('/v1/analytics/protocols?startDate=2026-02-30')).status).toBe(400);
    expect((await get('/v1/analytics/protocols?endDate=yesterday')).status).toBe(400);
  });

  it('needs analytics:read (403) and never shows another organization’s figures', async () => {
    const weak = await srv.newKey(orgA.organizationId, ['contacts:read']);
    const denied = await get('/v1/analytics/protocols', weak.secret);
    expect(denied.status).toBe(403);
    const reader = await srv.newKey(orgB.organizationId, ['analytics:read']);
    const b = await get('/v1/analytics/protocols', reader.secret);
    expect(b.status).toBe(200);
    const { from, to } = defaultRange();
    expect(b.body.data.protocols.reduce((n: number, p: { metrics: { sent: number } }) => n + p.metrics.sent, 0)).toBe(
      (await direct(orgB.organizationId, from, to)).sent,
    );
  });
});

describe('getAnalyticsUsage', () => {
  it('lines and timeline equal the messages table; the total equals the message report to the cent', async () => {
    const contact = await srv.context.db
      .selectFrom('contacts')
      .select(['id', 'phone'])
      .where('organization_id', '=', orgA.organizationId)
      .executeTakeFirstOrThrow();
    await srv.context.db
      .insertInto('contact_rcs_lookups')
      .values(
        [1, 2].map((d) => ({
          organization_id: orgA.organizationId,
          contact_id: contact.id,
          phone: contact.phone,
          provider: 'PROVIDER_A',
          rcs_capable: true,
          price: '0.0050',
          currency: 'USD',
          actor: null,
          created_at: dayAt(d),
        })),
      )
      .execute();
    const start = iso(dayAt(4));
    const end = iso(today);
    const res = await get(`/v1/analytics/usage?startDate=${start}&endDate=${end}`);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    const from = new Date(`${start}T00:00:00Z`);
    const to = new Date(today.getTime() + DAY);
    const ref = (
      await sql<Record<string, string>>`
      select coalesce(sum(segments) filter (where cost_units = segments * 39), 0) as text, count(*) filter (where cost_units = 150) as rich, coalesce(sum(cost_units), 0) as cost
      from messages where organization_id = ${orgA.organizationId} and created_at >= ${from} and created_at < ${to}`.execute(srv.context.db)
    ).rows[0]!;
    expect(d.lines.map((l: { item: string; quantity: number }) => [l.item, l.quantity])).toEqual([
      ['text_segment', Number(ref.text)],
      ['rich_message', Number(ref.rich)],
      ['capability_check', 2],
      ['pass_through_fee', 0],
      ['campaign_fee', 0],
      ['number_fee', 0],
      ['vetting_fee', 0],
      ['brand_fee', 0],
      ['campaign_vetting_fee', 0],
    ]);
    expect(d.lines[2]).toMatchObject({ unitPrice: { amount: '0.0000' }, cost: { amount: '0.0000' } });
    expect(d.total.amount).toBe(toMoney(Number(ref.cost)).amount);
    const all = await call(srv, 'GET', `/v1/reports/messages?limit=1000&start=${start}&end=${end}`, { key: orgA.apiKey.secret });
    const reportUnits = all.body.data.reduce(
      (n: number, r: { cost: { amount: string } | null }) => n + (r.cost ? Math.round(Number(r.cost.amount) * 10_000) : 0),
      0,
    );
    expect(d.total.amount).toBe(toMoney(reportUnits).amount);
    expect(d.timeline).toHaveLength(5);
    const timelineUnits = d.timeline.reduce(
      (n: number, p: { cost: { amount: string } }) => n + Math.round(Number(p.cost.amount) * 10_000),
      0,
    );
    expect(toMoney(timelineUnits).amount).toBe(d.total.amount);
    expect(d.timeline.reduce((n: number, p: { capabilityChecks: number }) => n + p.capabilityChecks, 0)).toBe(2);

    const monthly = await get('/v1/analytics/usage?startDate=2026-01-15&endDate=2026-03-01&granularity=month');
    expect(monthly.body.data.timeline.map((p: { date: string }) => p.date)).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
    const branded = await get('/v1/analytics/usage?campaignId=C1');
    expect(branded.body.data.lines[0].quantity).toBe(0);
    expect(branded.body.data.lines[2].quantity).toBe(2);
  });
});

describe('getAnalyticsTrends', () => {
  it('compares the 30 days ending today with the 30 before, every figure equal to the tables', async () => {
    await srv.context.db
      .insertInto('consent_events')
      .values({ organization_id: orgA.organizationId, phone: '+14155550199', action: 'OPT_OUT', source: 'API' })
      .execute();
    const res = await get('/v1/analytics/trends');
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    const cur = defaultRange();
    const prev = { from: new Date(cur.from.getTime() - 30 * DAY), to: cur.from };
    expect(d.current).toEqual({ startDate: iso(cur.from), endDate: iso(today) });
    expect(d.previous).toEqual({ startDate: iso(prev.from), endDate: iso(new Date(cur.from.getTime() - DAY)) });
    const count = async (table: string, from: Date, to: Date, extra = sql`true`) =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from ${sql.table(table)} where organization_id = ${orgA.organizationId} and created_at >= ${from} and created_at < ${to} and ${extra}`.execute(
            srv.context.db,
          )
        ).rows[0]!.n,
      );
    const expected = async (r: { from: Date; to: Date }) => {
      const m = await direct(orgA.organizationId, r.from, r.to);
      return {
        sent: m.sent,
        delivered: m.delivered,
        read: m.read,
        failed: m.failed,
        received: m.received,
        fallback: m.fallback,
        deliveryRate: m.sent ? Math.round((m.delivered / m.sent) * 10_000) / 10_000 : 0,
        readRate: m.delivered ? Math.round((m.read / m.delivered) * 10_000) / 10_000 : 0,
        conversations: await count('conversations', r.from, r.to),
        sessions: 2, // the two inbound messages of the fixtures are 31 hours apart
        newContacts: await count('contacts', r.from, r.to),
        optOuts: await count('consent_events', r.from, r.to, sql`action = 'OPT_OUT'`),
        cost: m.cost,
      };
    };
    const c = await expected(cur);
    const p = await expected(prev);
    p.sessions = 0;
    expect(d.metrics.map((m: { metric: string }) => m.metric)).toEqual([
      'sent',
      'delivered',
      'read',
      'failed',
      'received',
      'fallback',
      'deliveryRate',
      'readRate',
      'conversations',
      'sessions',
      'newContacts',
      'optOuts',
    ]);
    for (const m of d.metrics) {
      expect([m.metric, m.current, m.previous]).toEqual([m.metric, c[m.metric as keyof typeof c], p[m.metric as keyof typeof p]]);
    }
    expect(d.metrics[0]).toMatchObject({
      previous: 1,
      change: c.sent - 1,
      changePercent: Math.round((c.sent - 1) * 1000) / 10,
      direction: 'up',
    });
    expect(d.metrics.find((m: { metric: string }) => m.metric === 'optOuts')).toMatchObject({
      current: 1,
      previous: 0,
      changePercent: null,
      direction: 'up',
    });
    expect(d.cost).toMatchObject({ current: { amount: c.cost }, previous: { amount: '0.0039' } });
    expect(c.cost).toBe(await reportCost(orgA.apiKey.secret, iso(cur.from), iso(today)));
    const week = await get('/v1/analytics/trends?period=7d');
    expect(week.body.data.current.startDate).toBe(iso(new Date(today.getTime() - 6 * DAY)));
    expect((await get('/v1/analytics/trends?period=1y')).status).toBe(400);
  });
});

describe('getAnalyticsOverview', () => {
  it('messages and timeline equal the messages table and the report; organization-wide counts equal their tables', async () => {
    const res = await get('/v1/analytics/overview');
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    const { from, to } = defaultRange();
    const all = await direct(orgA.organizationId, from, to);
    expect(strip(d.messages)).toEqual(all);
    expect(d.messages.cost.amount).toBe(await reportCost(orgA.apiKey.secret, iso(from), iso(today)));
    expect(d.timeline).toHaveLength(30);
    let units = 0;
    for (const p of d.timeline) {
      const b = new Date(p.bucketStart);
      const { bucketStart: _b, ...sums } = p;
      expect(pick(sums)).toEqual(await direct(orgA.organizationId, b, new Date(b.getTime() + DAY)));
      units += Math.round(Number(p.cost.amount) * 10_000);
    }
    expect(toMoney(units).amount).toBe(all.cost);
    const n = async (q: ReturnType<typeof sql>) => Number((await sql<{ n: string }>`${q}`.execute(srv.context.db)).rows[0]!.n);
    const org = orgA.organizationId;
    expect(d.conversations.started).toBe(
      await n(sql`select count(*) as n from conversations where organization_id = ${org} and created_at >= ${from} and created_at < ${to}`),
    );
    expect(d.conversations.sessions).toBe(2);
    expect(d.contacts).toEqual({
      total: await n(sql`select count(*) as n from contacts where organization_id = ${org} and created_at < ${to}`),
      new: await n(sql`select count(*) as n from contacts where organization_id = ${org} and created_at >= ${from} and created_at < ${to}`),
      optedOut: await n(
        sql`select count(*) as n from consent_events where organization_id = ${org} and action = 'OPT_OUT' and created_at >= ${from} and created_at < ${to}`,
      ),
    });
    expect(d.bots).toEqual({
      published: await n(
        sql`select count(*) as n from bots where organization_id = ${org} and published_flow is not null and published_at < ${to}`,
      ),
      sessions: await n(
        sql`select count(*) as n from bot_sessions where organization_id = ${org} and created_at >= ${from} and created_at < ${to}`,
      ),
    });

    // A brand filter restricts the message figures only.
    const branded = await get('/v1/analytics/overview?brandId=B1&campaignId=C1');
    expect(branded.body.data).toMatchObject({
      brandId: 'B1',
      campaignId: 'C1',
      messages: { sent: 0 },
      contacts: d.contacts,
      conversations: d.conversations,
    });
    // Granularity limits: hourly up to 7 days, daily up to 365 days.
    const hourly = await get(`/v1/analytics/overview?granularity=hour&startDate=${iso(dayAt(6))}&endDate=${iso(today)}`);
    expect(hourly.status).toBe(200);
    expect(hourly.body.data.timeline).toHaveLength(7 * 24);
    expect((await get(`/v1/analytics/overview?granularity=hour&startDate=${iso(dayAt(7))}&endDate=${iso(today)}`)).status).toBe(400);
    expect((await get('/v1/analytics/overview?startDate=2024-01-01&endDate=2025-01-01')).status).toBe(400);
    expect((await get('/v1/analytics/overview?startDate=2024-01-01&endDate=2025-01-01&granularity=week')).status).toBe(200);
    expect((await get('/v1/analytics/overview?granularity=minute')).status).toBe(400);
  });
});

describe('listAnalyticsSenderIds and getAnalyticsSenderId', () => {
  it('lists each sender with its figures, most sent first, equal to the messages table and the report', async () => {
    const res = await get('/v1/analytics/sender-ids');
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((s: { senderId: string }) => s.senderId)).toEqual([orgA.senderId, senderA2]);
    const { from, to } = defaultRange();
    for (const s of res.body.data) {
      expect(strip(s.metrics)).toEqual(await direct(orgA.organizationId, from, to, sql`sender_id = ${s.senderId}`));
      expect(s.metrics.cost.amount).toBe(await reportCost(orgA.apiKey.secret, iso(from), iso(today), s.senderId));
    }
    expect(res.body.data[1]).toMatchObject({ name: 'Second sender', type: 'RCS_AGENT' });
    expect(res.text).not.toContain(orgB.senderId);
  });

  it('gives one sender’s totals, channels and a zero-filled timeline; hourly only up to 7 days', async () => {
    const start = iso(dayAt(3));
    const end = iso(today);
    const res = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=${start}&endDate=${end}`);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d.timeline).toHaveLength(4);
    expect(d.timeline[0].bucketStart).toBe(`${start}T00:00:00Z`);
    const from = new Date(`${start}T00:00:00Z`);
    const to = new Date(today.getTime() + DAY);
    expect(strip(d.metrics)).toEqual(await direct(orgA.organizationId, from, to, sql`sender_id = ${orgA.senderId}`));
    for (const p of d.timeline) {
      const b = new Date(p.bucketStart);
      const { bucketStart: _b, ...sums } = p;
      expect(pick(sums)).toEqual(await direct(orgA.organizationId, b, new Date(b.getTime() + DAY), sql`sender_id = ${orgA.senderId}`));
    }
    // Most sent first, ties by channel: SMS and MMS each carried one message a carrier took.
    expect(d.byChannel.map((c: { channel: string }) => c.channel)).toEqual(['RCS', 'MMS', 'SMS']);

    const hourly = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=${start}&endDate=${end}&granularity=hour`);
    expect(hourly.status).toBe(200);
    expect(hourly.body.data.timeline).toHaveLength(4 * 24);
    const tooLong = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=${iso(dayAt(7))}&endDate=${end}&granularity=hour`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.details[0].field).toBe('query.granularity');
    const monthly = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=2025-01-15&endDate=2026-03-02&granularity=month`);
    expect(monthly.status).toBe(200);
    expect(monthly.body.data.timeline.map((p: { bucketStart: string }) => p.bucketStart.slice(0, 10))[0]).toBe('2025-01-01');
    expect(monthly.body.data.timeline).toHaveLength(15);
    const weekly = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=2026-11-18&endDate=2026-11-24&granularity=week`);
    expect(weekly.body.data.timeline.map((p: { bucketStart: string }) => p.bucketStart)).toEqual([
      '2026-11-16T00:00:00Z',
      '2026-11-23T00:00:00Z',
    ]);
    const daily = await get(`/v1/analytics/sender-ids/${orgA.senderId}?startDate=2024-01-01&endDate=2025-12-31`);
    expect(daily.status).toBe(400);
  });

  it('404 for another organization’s sender or an unknown one', async () => {
    expect((await get(`/v1/analytics/sender-ids/${orgB.senderId}`)).status).toBe(404);
    expect((await get('/v1/analytics/sender-ids/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});

describe('getAnalyticsSessions', () => {
  it('counts sessions by start day and by source, extended by each inbound message, with their messages', async () => {
    const org = await srv.newOrg('Analytics sessions org');
    const at = (daysAgo: number, hour: number, minute = 0) =>
      new Date(today.getTime() - daysAgo * DAY + hour * 3_600_000 + minute * 60_000);
    const convo = async (phone: string, source: 'api' | 'blast' | 'bot' | 'inbound' | 'event' | 'acquisition') => {
      const c = await srv.context.db
        .insertInto('contacts')
        .values({ organization_id: org.organizationId, phone, attributes: '{}' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const v = await srv.context.db
        .insertInto('conversations')
        .values({ organization_id: org.organizationId, contact_id: c.id, sender_id: org.senderId, source_type: source })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { contactId: c.id, conversationId: v.id };
    };
    const put = (k: { contactId: string; conversationId: string }, direction: 'inbound' | 'outbound', created_at: Date) =>
      srv.context.db
        .insertInto('messages')
        .values({
          organization_id: org.organizationId,
          conversation_id: k.conversationId,
          contact_id: k.contactId,
          contact_phone: '+14155550100',
          sender_id: org.senderId,
          direction,
          status: direction === 'inbound' ? 'received' : 'delivered',
          channel: 'SMS',
          requested_channel: direction === 'inbound' ? null : 'SMS',
          content: JSON.stringify({ type: 'text', text: 'x' }),
          origin: direction === 'inbound' ? 'inbound' : 'api',
          segments: 1,
          created_at,
        })
        .execute();
    const a = await convo('+14155550301', 'api');
    const b = await convo('+14155550302', 'bot');
    await put(a, 'inbound', at(40, 9)); // outside the range
    await put(a, 'inbound', at(2, 10)); // session 1 opens
    await put(a, 'outbound', at(2, 10, 5));
    await put(a, 'inbound', at(2, 20)); // extends session 1 to D-1 20:00
    await put(a, 'outbound', at(1, 19)); // still session 1
    await put(a, 'inbound', at(1, 22)); // 26 hours later: session 2
    await put(a, 'outbound', at(1, 22, 30));
    await put(b, 'inbound', at(1, 8)); // session 3
    const key = (await srv.newKey(org.organizationId, ['analytics:read'])).secret;

    const res = await get(`/v1/analytics/sessions?startDate=${iso(at(3, 0))}&endDate=${iso(today)}`, key);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d.groupBy).toBe('day');
    expect(d.totals).toEqual({
      sessions: 3,
      uniqueContacts: 2,
      inboundMessages: 4,
      outboundMessages: 3,
      averageDurationSeconds: (33 * 3600 + 1800) / 3,
    });
    expect(d.timeline.map((p: { date: string; sessions: number }) => [p.date, p.sessions])).toEqual([
      [iso(at(3, 0)), 0],
      [iso(at(2, 0)), 1],
      [iso(at(1, 0)), 2],
      [iso(today), 0],
    ]);
    expect(d.timeline[1]).toMatchObject({ inboundMessages: 2, outboundMessages: 2, averageDurationSeconds: 33 * 3600 });

    const bySource = await get(`/v1/analytics/sessions?startDate=${iso(at(3, 0))}&groupBy=source`, key);
    expect(bySource.status, bySource.text).toBe(200);
    expect(bySource.body.data.groupBy).toBe('source');
    expect(bySource.body.data.timeline.map((p: { source: string; sessions: number }) => [p.source, p.sessions])).toEqual([
      ['blast', 0],
      ['bot', 1],
      ['inbound', 0],
      ['api', 2],
      ['event', 0],
      ['acquisition', 0],
    ]);
    // Only sessions started in the range: the one starting D-1 alone.
    const oneDay = await get(`/v1/analytics/sessions?startDate=${iso(at(1, 0))}&endDate=${iso(at(1, 0))}`, key);
    expect(oneDay.body.data.totals.sessions).toBe(2);
    // Another organization sees none of them.
    expect((await get('/v1/analytics/sessions')).body.data.totals.sessions).toBe(2); // org A's own two sessions
  });
});

describe('scheduled reports', () => {
  const weekly = { name: 'Weekly summary', frequency: 'weekly', dayOfWeek: 1, recipients: ['ops@example.com'] };
  const req = (method: string, path: string, body?: unknown, key = orgA.apiKey.secret) => call(srv, method, path, { key, body });

  it('creates (defaults, nextRunAt), lists oldest first, updates, refuses a sixth and bad days, deletes 204 then 404', async () => {
    const created = await req('POST', '/v1/analytics/reports', weekly);
    expect(created.status, created.text).toBe(201);
    const r = created.body.data;
    expect(r).toMatchObject({ hour: 8, datasets: ['overview'], active: true, dayOfMonth: null, lastSentAt: null });
    const next = new Date(r.nextRunAt);
    expect(next.getUTCDay()).toBe(1);
    expect(next.getUTCHours()).toBe(8);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * DAY);

    expect((await req('POST', '/v1/analytics/reports', { ...weekly, dayOfWeek: 7 })).status).toBe(400);
    expect((await req('POST', '/v1/analytics/reports', { ...weekly, dayOfMonth: 3 })).status).toBe(400);
    expect((await req('POST', '/v1/analytics/reports', { name: 'm', frequency: 'monthly', recipients: ['a@example.com'] })).status).toBe(
      400,
    );
    expect(
      (await req('POST', '/v1/analytics/reports', { name: 'm', frequency: 'monthly', dayOfMonth: 29, recipients: ['a@example.com'] }))
        .status,
    ).toBe(400);

    // Switching to monthly needs dayOfMonth and clears dayOfWeek.
    expect((await req('PATCH', `/v1/analytics/reports/${r.id}`, { frequency: 'monthly' })).status).toBe(400);
    expect((await req('PATCH', `/v1/analytics/reports/${r.id}`, { dayOfMonth: 3 })).status).toBe(400);
    const monthly = await req('PATCH', `/v1/analytics/reports/${r.id}`, { frequency: 'monthly', dayOfMonth: 1, hour: 6 });
    expect(monthly.status, monthly.text).toBe(200);
    expect(monthly.body.data).toMatchObject({ frequency: 'monthly', dayOfMonth: 1, dayOfWeek: null, hour: 6 });
    expect(monthly.body.data.nextRunAt).toMatch(/^\d{4}-\d{2}-01T06:00:00/);
    const paused = await req('PATCH', `/v1/analytics/reports/${r.id}`, { active: false });
    expect(paused.body.data).toMatchObject({ active: false, nextRunAt: null });

    for (let i = 2; i <= 5; i++) expect((await req('POST', '/v1/analytics/reports', { ...weekly, name: `r${i}` })).status).toBe(201);
    const sixth = await req('POST', '/v1/analytics/reports', { ...weekly, name: 'sixth' });
    expect(sixth.status).toBe(422);
    expect(sixth.body.code).toBe('UNPROCESSABLE');
    const list = await req('GET', '/v1/analytics/reports');
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(['Weekly summary', 'r2', 'r3', 'r4', 'r5']);

    // Tenancy: another organization sees none of them and cannot change or delete them.
    const readerB = await srv.newKey(orgB.organizationId, ['analytics:read', 'analytics:update', 'analytics:delete']);
    expect((await req('GET', '/v1/analytics/reports', undefined, readerB.secret)).body.data).toEqual([]);
    expect((await req('PATCH', `/v1/analytics/reports/${r.id}`, { name: 'x' }, readerB.secret)).status).toBe(404);
    expect((await req('DELETE', `/v1/analytics/reports/${r.id}`, undefined, readerB.secret)).status).toBe(404);

    for (const x of list.body.data) expect((await req('DELETE', `/v1/analytics/reports/${x.id}`)).status).toBe(204);
    expect((await req('DELETE', `/v1/analytics/reports/${r.id}`)).status).toBe(404);
    expect((await req('PATCH', `/v1/analytics/reports/${r.id}`, { name: 'x' })).status).toBe(404);
  });

  it('the scheduler run writes the report files to the object store, mails them (.eml without SMTP_URL) and moves nextRunAt', async () => {
    const created = await req('POST', '/v1/analytics/reports', { ...weekly, datasets: ['overview', 'protocols', 'intents'] });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id;
    const runAt = new Date(today.getTime() + 8 * 3_600_000); // today 08:00: covers the 7 days before today
    await srv.context.db
      .updateTable('analytics_reports')
      .set({ next_run_at: runAt < new Date() ? runAt : new Date(Date.now() - 60_000) })
      .where('id', '=', id)
      .execute();
    const keys = await runDueReports(srv.context);
    const prefix = `analytics-reports/${orgA.organizationId}/${id}/`;
    expect(keys.filter((k) => k.startsWith(prefix)).map((k) => k.split('/').pop())).toEqual([
      'overview.csv',
      'protocols.csv',
      'intents.csv',
    ]);
    const store = storeFor(srv.context.config);
    const overview = (await readAll((await store.get(keys.find((k) => k.endsWith('overview.csv'))!))!)).toString('utf8');
    const lines = overview.trim().split(/\r?\n/);
    expect(lines[0]).toBe('date,sent,delivered,read,failed,received,fallback,cost,currency');
    expect(lines).toHaveLength(8);
    const stored = await srv.context.db.selectFrom('analytics_reports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const runDay = new Date(`${iso(stored.last_run_at!)}T00:00:00Z`);
    const sentUnits = lines.slice(1).reduce((n, l) => n + Math.round(Number(l.split(',')[7]) * 10_000), 0);
    const from = new Date(runDay.getTime() - 7 * DAY);
    expect(toMoney(sentUnits).amount).toBe((await direct(orgA.organizationId, from, runDay)).cost);
    expect(stored.next_run_at!.getTime()).toBeGreaterThan(Date.now());
    expect(stored.last_sent_at).not.toBeNull();
    const again = await runDueReports(srv.context);
    expect(again.filter((k) => k.startsWith(prefix))).toEqual([]);
    const view = (await req('GET', '/v1/analytics/reports')).body.data.find((x: { id: string }) => x.id === id);
    expect(view.lastSentAt).toBe(stored.last_sent_at!.toISOString());
  });
});

describe('figures of messages sent for real', () => {
  let live: TestServer;
  let org: Org;
  let seq = 0;
  beforeAll(async () => {
    dispatchTuning.backoffBaseSeconds = 0.2;
    live = await startTestServer({ workers: true });
    org = await live.newOrg('Analytics live org');
  });
  afterAll(() => live.close());

  async function send(suffix: string, rcsCapable: boolean | null, settled: string[]) {
    const phone = `+1415${String(++seq).padStart(7 - suffix.length, '0')}${suffix}`;
    const c = await live.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone,
        attributes: '{}',
        rcs_capable: rcsCapable,
        consent_type: 'MARKETING',
        time_zone: 'UTC',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await call(live, 'POST', '/v1/messages/send', {
      key: org.apiKey.secret,
      body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped.' } },
    });
    expect(res.status, res.text).toBe(200);
    const id: string = res.body.data.messageId;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const row = await live.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      if (settled.includes(row.status)) return;
      if (Date.now() > deadline) throw new Error(`message ${id} is ${row.status} ${phone} ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('delivered, read, fallen-back and failed sends: the figures equal the table and the report', async () => {
    await Promise.all([
      send('1', true, ['read']),
      send('8', null, ['delivered']),
      send('0333', true, ['delivered']),
      send('0777', true, ['failed']),
    ]);
    const res = await call(live, 'GET', '/v1/analytics/protocols', { key: org.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const sums = res.body.data.protocols.map((p: { channel: string; metrics: Sums }) => [p.channel, p.metrics.sent, p.metrics.fallback]);
    // The message the carrier refused at send (0777) was never taken by a carrier: failed, not sent.
    expect(sums).toEqual([
      ['RCS', 1, 0],
      ['SMS', 2, 2],
      ['MMS', 0, 0],
      ['CHATAPP', 0, 0],
    ]);
    const rows = await live.context.db
      .selectFrom('messages')
      .select(['cost_units', 'status'])
      .where('organization_id', '=', org.organizationId)
      .execute();
    const units = rows.reduce((n, r) => n + (r.cost_units ?? 0), 0);
    const total = res.body.data.protocols.reduce(
      (n: number, p: { metrics: { cost: { amount: string } } }) => n + Math.round(Number(p.metrics.cost.amount) * 10_000),
      0,
    );
    expect(total).toBe(units);
    const report = await call(live, 'GET', '/v1/reports/messages?kind=mdr&limit=1000', { key: org.apiKey.secret });
    const reportUnits = report.body.data.reduce(
      (n: number, r: { cost: { amount: string } | null }) => n + (r.cost ? Math.round(Number(r.cost.amount) * 10_000) : 0),
      0,
    );
    expect(total).toBe(reportUnits);
    const [rollup] = (
      await sql<{
        n: string;
      }>`select sum(messages)::int8 as n from (select messages from analytics_message_rollups where organization_id = ${org.organizationId}
      union all select messages from analytics_message_deltas where organization_id = ${org.organizationId}) r`.execute(live.context.db)
    ).rows;
    expect(Number(rollup!.n)).toBe(rows.length);
  });
});
