// SQL for conversation sessions (GET /v1/analytics/sessions): a session is a conversation's 24-hour window opened by
// an inbound message and extended by each further inbound message; it is counted on the (UTC) day it started and
// holds every message of its conversation from its first inbound message until 24 hours after its last one.
// Sessions depend on message order within a conversation, so they are computed from the messages table (index
// messages (organization_id, created_at …), migration 0007), not from the rollup; every step names the organization.
import { sql } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

export type SessionRow = {
  day: string;
  source: string;
  sessions: number;
  uniqueContacts: number;
  inboundMessages: number;
  outboundMessages: number;
  /** Sum of the sessions' durations (first to last message), seconds. */
  durationSeconds: number;
};

export type SessionKey = 'day' | 'source' | 'none';

/** Sessions started in [from, to), grouped by start day, conversation source, or not at all. */
export async function sessionFigures(db: TenantDb, orgId: string, from: Date, to: Date, by: SessionKey): Promise<SessionRow[]> {
  const messages = sql.table('messages');
  const conversations = sql.table('conversations');
  const key = by === 'day' ? sql`to_char(s.started_at at time zone 'UTC', 'YYYY-MM-DD')` : by === 'source' ? sql`c.source_type` : sql`''`;
  // Inbound messages from 24 hours before the range (to know whether the first ones open a session) onwards.
  const result = await sql<{ k: string; sessions: string; contacts: string; inbound: string; outbound: string; duration: string }>`
    with inbound as (
      select m.conversation_id, m.contact_id, m.created_at,
        case when lag(m.created_at) over w is null or m.created_at - lag(m.created_at) over w > interval '24 hours' then 1 else 0 end as opens
      from ${messages} m
      where m.organization_id = ${orgId} and m.direction = 'inbound' and m.created_at >= ${new Date(from.getTime() - 86_400_000)}
      window w as (partition by m.conversation_id order by m.created_at, m.id)
    ), numbered as (
      select *, sum(opens) over (partition by conversation_id order by created_at rows unbounded preceding) as n from inbound
    ), sessions as (
      select conversation_id, n, min(contact_id::text) as contact_id, min(created_at) as started_at,
        max(created_at) + interval '24 hours' as ends_at, count(*) as inbound
      from numbered group by conversation_id, n
    ), in_range as (
      select * from sessions where started_at >= ${from} and started_at < ${to}
    ), figures as (
      select s.*, o.outbound, greatest(coalesce(o.last_at, s.started_at), (select max(created_at) from numbered x where x.conversation_id = s.conversation_id and x.n = s.n)) as last_at
      from in_range s
      left join lateral (
        select count(*) as outbound, max(om.created_at) as last_at from ${messages} om
        where om.organization_id = ${orgId} and om.conversation_id = s.conversation_id and om.direction = 'outbound'
          and om.created_at >= s.started_at and om.created_at < s.ends_at
      ) o on true
    )
    select ${key} as k, count(*)::int8 as sessions, count(distinct s.contact_id)::int8 as contacts,
      coalesce(sum(s.inbound), 0)::int8 as inbound, coalesce(sum(s.outbound), 0)::int8 as outbound,
      coalesce(sum(extract(epoch from s.last_at - s.started_at)), 0)::float8 as duration
    from figures s join ${conversations} c on c.id = s.conversation_id and c.organization_id = ${orgId}
    group by 1`.execute(db);
  return result.rows.map((r) => ({
    day: by === 'day' ? r.k : '',
    source: by === 'source' ? r.k : '',
    sessions: Number(r.sessions),
    uniqueContacts: Number(r.contacts),
    inboundMessages: Number(r.inbound),
    outboundMessages: Number(r.outbound),
    durationSeconds: Number(r.duration),
  }));
}
