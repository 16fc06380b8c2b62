// Sessions as a recorded fact (migration 0028): each inbound message that opens a session is marked when stored,
// re-marked when an earlier one arrives late or one is deleted, and counted by the rollup; the overview and the
// trends read that count. Checked through HTTP against a known set of inbound messages of two conversations
// (a gap of exactly 24 hours continues a session, 24 hours and 1 ms opens one; a session crossing midnight counts
// on the day it opened), against the sessions operation (computed from the messages table), at both rollup levels,
// before and after compaction. The daily rollup level is checked equal to the hourly one summed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { compactRollup } from '../src/db/queries/analytics/rollups.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;
type Thread = { contactId: string; conversationId: string };

const DAY = 86_400_000;
const HOUR = 3_600_000;
const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const at = (daysAgo: number, hour: number, minute = 0) => new Date(today.getTime() - daysAgo * DAY + hour * HOUR + minute * 60_000);
const iso = (d: Date) => d.toISOString().slice(0, 10);

let srv: TestServer;
let org: Org;
let other: Org;

async function thread(o: Org, phone: string): Promise<Thread> {
  const c = await srv.context.db
    .insertInto('contacts')
    .values({ organization_id: o.organizationId, phone, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const v = await srv.context.db
    .insertInto('conversations')
    .values({ organization_id: o.organizationId, contact_id: c.id, sender_id: o.senderId, source_type: 'inbound' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { contactId: c.id, conversationId: v.id };
}

async function put(o: Org, t: Thread, direction: 'inbound' | 'outbound', created_at: Date): Promise<string> {
  const row = await srv.context.db
    .insertInto('messages')
    .values({
      organization_id: o.organizationId,
      conversation_id: t.conversationId,
      contact_id: t.contactId,
      contact_phone: '+14155550100',
      sender_id: o.senderId,
      direction,
      status: direction === 'inbound' ? 'received' : 'delivered',
      channel: 'SMS',
      requested_channel: direction === 'inbound' ? null : 'SMS',
      content: JSON.stringify({ type: 'text', text: 'x' }),
      origin: direction === 'inbound' ? 'inbound' : 'api',
      segments: 1,
      cost_units: direction === 'inbound' ? null : 39,
      created_at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const overview = async (o: Org, startDate: Date, endDate: Date, granularity: 'hour' | 'day' = 'day') => {
  const res = await call(
    srv,
    'GET',
    `/v1/analytics/overview?granularity=${granularity}&startDate=${iso(startDate)}&endDate=${iso(endDate)}`,
    { key: o.apiKey.secret },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.data as { conversations: { sessions: number }; messages: { received: number; sent: number } };
};
const sessionsOf = async (o: Org, startDate: Date, endDate: Date) => (await overview(o, startDate, endDate)).conversations.sessions;

/** The sessions operation (window over the messages table) per day of the range. */
const perDay = async (o: Org, startDate: Date, endDate: Date) => {
  const res = await call(srv, 'GET', `/v1/analytics/sessions?startDate=${iso(startDate)}&endDate=${iso(endDate)}`, {
    key: o.apiKey.secret,
  });
  expect(res.status, res.text).toBe(200);
  return (res.body.data.timeline as Array<{ date: string; sessions: number }>).map((p) => [p.date, p.sessions]);
};

/** Overview counts for every single day of the range, for comparison with the sessions operation. */
const overviewPerDay = async (o: Org, startDate: Date, endDate: Date) => {
  const out: Array<[string, number]> = [];
  for (let d = startDate; d <= endDate; d = new Date(d.getTime() + DAY)) out.push([iso(d), await sessionsOf(o, d, d)]);
  return out;
};

/** The daily rollup level equals the hourly level summed per day (after a compaction, with nothing pending). */
async function dailyEqualsHourly(orgId: string) {
  const hourly = await sql<Record<string, string>>`
    select to_char(bucket_hour at time zone 'UTC', 'YYYY-MM-DD') as day, sender_id, direction, coalesce(nullif(channel, ''), requested_channel) as channel, status, is_fallback,
      sum(messages)::int8 as n, sum(segments)::int8 as seg, sum(cost_units)::int8 as cost, sum(text_segments)::int8 as text, sum(rich_messages)::int8 as rich, sum(sessions)::int8 as sessions
    from analytics_message_rollups where organization_id = ${orgId} group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6`.execute(
    srv.context.db,
  );
  const daily = await sql<Record<string, string>>`
    select to_char(bucket_day at time zone 'UTC', 'YYYY-MM-DD') as day, sender_id, direction, channel, status, is_fallback,
      messages::int8 as n, segments::int8 as seg, cost_units::int8 as cost, text_segments::int8 as text, rich_messages::int8 as rich, sessions::int8 as sessions
    from analytics_message_rollups_daily where organization_id = ${orgId} order by 1, 2, 3, 4, 5, 6`.execute(srv.context.db);
  expect(hourly.rows.length).toBeGreaterThan(0);
  expect(daily.rows).toEqual(hourly.rows);
}

beforeAll(async () => {
  srv = await startTestServer();
  [org, other] = await Promise.all([srv.newOrg('Recorded sessions org'), srv.newOrg('Recorded sessions other org')]);
});
afterAll(() => srv.close());

describe('sessions recorded when inbound messages are stored', () => {
  const from = at(4, 0);
  let late: string;

  it('counts exactly the inbound messages that open a session, per day and over ranges, equal to the sessions operation', async () => {
    const a = await thread(org, '+14155550401');
    const b = await thread(org, '+14155550402');
    await put(org, a, 'inbound', at(10, 9)); // A: before the range, opens
    await put(org, a, 'inbound', at(4, 23)); // A: opens session 1 (D-4)
    await put(org, a, 'inbound', at(3, 1)); // A: 2 h later, across midnight: same session
    await put(org, a, 'outbound', at(2, 0, 30)); // outbound messages neither open nor extend
    await put(org, a, 'inbound', at(2, 1)); // A: exactly 24 h after the last one: same session
    await srv.context.db
      .insertInto('messages')
      .values({
        organization_id: org.organizationId,
        conversation_id: a.conversationId,
        contact_id: a.contactId,
        contact_phone: '+14155550100',
        sender_id: org.senderId,
        direction: 'inbound',
        status: 'received',
        channel: 'SMS',
        content: JSON.stringify({ type: 'text', text: 'x' }),
        origin: 'inbound',
        segments: 1,
        created_at: new Date(at(1, 1).getTime() + 1), // 24 h and 1 ms after the last one: opens session 2 (D-1)
      })
      .execute();
    await put(org, b, 'inbound', at(4, 23, 30)); // B: opens session 3 (D-4), independent of A's
    await put(org, b, 'inbound', at(3, 0, 15)); // B: across midnight, same session
    await put(org, b, 'inbound', at(2, 0, 16)); // B: 24 h 1 min later: opens session 4 (D-2)
    await put(other, await thread(other, '+14155550403'), 'inbound', at(2, 5)); // another organization's

    const expected: Array<[string, number]> = [
      [iso(at(4, 0)), 2],
      [iso(at(3, 0)), 0],
      [iso(at(2, 0)), 1],
      [iso(at(1, 0)), 1],
      [iso(today), 0],
    ];
    expect(await overviewPerDay(org, from, today)).toEqual(expected);
    expect(await perDay(org, from, today)).toEqual(expected);
    expect(await sessionsOf(org, from, today)).toBe(4);
    // A session that opened before the range is not counted again in it, though its messages continue inside.
    expect(await sessionsOf(org, at(3, 0), today)).toBe(2);
    expect(await sessionsOf(org, at(30, 0), today)).toBe(5);
    // Hourly level (7 days) and daily level agree.
    expect((await overview(org, at(6, 0), today, 'hour')).conversations.sessions).toBe(4);
    expect((await overview(org, at(6, 0), today, 'day')).conversations.sessions).toBe(4);
    // Tenancy: the other organization sees its one session only.
    expect(await sessionsOf(other, from, today)).toBe(1);
  });

  it('re-marks when an earlier inbound message arrives late and when one is deleted; compaction keeps the count', async () => {
    const [b] = await srv.context.db
      .selectFrom('conversations')
      .select(['id as conversationId', 'contact_id as contactId'])
      .where('organization_id', '=', org.organizationId)
      .where('contact_id', 'in', srv.context.db.selectFrom('contacts').select('id').where('phone', '=', '+14155550402'))
      .execute();
    // A carrier delivers late an inbound message of D-2 00:00 (23 h 45 min after B's D-3 one): B's D-2 message now
    // continues the session instead of opening one.
    late = await put(org, b!, 'inbound', at(2, 0));
    expect(await sessionsOf(org, from, today)).toBe(3);
    expect(await overviewPerDay(org, from, today)).toEqual(await perDay(org, from, today));
    await compactRollup(srv.context.db);
    expect(await sessionsOf(org, from, today)).toBe(3);
    await dailyEqualsHourly(org.organizationId);

    await srv.context.db.deleteFrom('messages').where('id', '=', late).execute();
    expect(await sessionsOf(org, from, today)).toBe(4);
    expect(await overviewPerDay(org, from, today)).toEqual(await perDay(org, from, today));
    await compactRollup(srv.context.db);
    expect(await sessionsOf(org, from, today)).toBe(4);
    await dailyEqualsHourly(org.organizationId);

    // The marks equal their definition (no earlier inbound message of the conversation within the 24 hours before).
    const marks = await sql<{ wrong: string }>`
      select count(*)::int8 as wrong from messages m
      where m.organization_id = ${org.organizationId} and m.direction = 'inbound'
        and m.opens_session is distinct from not exists (
          select 1 from messages p where p.organization_id = m.organization_id and p.conversation_id = m.conversation_id and p.direction = 'inbound'
            and p.id <> m.id and p.created_at >= m.created_at - interval '24 hours' and (p.created_at, p.id) < (m.created_at, m.id))`.execute(
      srv.context.db,
    );
    expect(Number(marks.rows[0]!.wrong)).toBe(0);
  });

  it('two inbound messages of a conversation stored concurrently open one session, not two', async () => {
    const o = await srv.newOrg('Recorded sessions concurrency org');
    const t = await thread(o, '+14155550404');
    const row = (created_at: Date) => ({
      organization_id: o.organizationId,
      conversation_id: t.conversationId,
      contact_id: t.contactId,
      contact_phone: '+14155550100',
      sender_id: o.senderId,
      direction: 'inbound' as const,
      status: 'received' as const,
      channel: 'SMS' as const,
      content: JSON.stringify({ type: 'text', text: 'x' }),
      origin: 'inbound' as const,
      segments: 1,
      created_at,
    });
    // The first transaction stores its message and stays open; the second (one hour later) waits on the
    // conversation's lock, then sees the first once it commits: only the first opens a session.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let stored!: () => void;
    const firstStored = new Promise<void>((r) => (stored = r));
    const first = srv.context.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('messages')
        .values(row(at(3, 9)))
        .execute();
      stored();
      await held;
    });
    await firstStored;
    const second = srv.context.db
      .insertInto('messages')
      .values(row(at(3, 10)))
      .execute();
    // Released only once the second really waits (so the race is the one under test, not a sequential run).
    await until(
      async () =>
        Number(
          (
            await sql<{
              n: string;
            }>`select count(*)::int8 as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`.execute(
              srv.context.db,
            )
          ).rows[0]!.n,
        ),
      (n) => n > 0,
      'the second insert waiting on the conversation lock',
    );
    release();
    await Promise.all([first, second]);
    expect(await sessionsOf(o, from, today)).toBe(1);
  });

  it('the trends compare recorded session counts too', async () => {
    const res = await call(srv, 'GET', '/v1/analytics/trends?period=7d', { key: org.apiKey.secret });
    expect(res.status, res.text).toBe(200);
    const sessions = (res.body.data.metrics as Array<{ metric: string; current: number; previous: number }>).find(
      (m) => m.metric === 'sessions',
    );
    // The 7 days ending today hold sessions 1–4; the 7 before, the one of D-10.
    expect(sessions).toMatchObject({ current: 4, previous: 1 });
  });
});
