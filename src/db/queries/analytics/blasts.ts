// SQL for blast figures (GET /v1/analytics/blasts/{id}, GET /v1/analytics/top): a blast's messages are those its
// recipients were sent (blast_recipients.message_id). Counted like the message rollup (AnalyticsMessageMetrics):
// `sent` = not revoked and handed to a carrier (sent_at set), `delivered` = delivered or read, `failed` = failed
// or undeliverable. A responder is a recipient
// that tapped or wrote back (an inbound message of the blast message's conversation) within 24 hours after it.
// Every table reference names the organization.
import { sql } from 'kysely';
import { tapsOf } from './taps.ts';
import type { TenantDb } from '../../tenant.ts';

export type BlastLeader = { blastId: string; name: string; sent: number; delivered: number; read: number; responders: number };

/** Blasts with messages created in [from, to), most sent first (ties by id), at most `limit`. */
export async function topBlasts(db: TenantDb, orgId: string, from: Date, to: Date, limit: number): Promise<BlastLeader[]> {
  const [blasts, recipients, messages] = [sql.table('blasts'), sql.table('blast_recipients'), sql.table('messages')];
  const result = await sql<{ id: string; name: string; sent: string; delivered: string; read: string; responders: string }>`
    with bm as (
      select r.blast_id, m.id, m.contact_id, m.conversation_id, m.status, m.created_at, m.sent_at
      from ${recipients} r join ${messages} m on m.organization_id = ${orgId} and m.id = r.message_id
      where r.organization_id = ${orgId} and m.direction = 'outbound' and m.status <> 'revoked'
        and m.created_at >= ${from} and m.created_at < ${to}
    ), per_blast as (
      select bm.blast_id, count(*) filter (where bm.sent_at is not null) as sent,
        count(*) filter (where bm.status in ('delivered', 'read')) as delivered,
        count(*) filter (where bm.status = 'read') as read,
        count(distinct bm.contact_id) filter (where exists (
          select 1 from ${messages} i where i.organization_id = ${orgId} and i.conversation_id = bm.conversation_id
            and i.direction = 'inbound' and i.created_at > bm.created_at and i.created_at <= bm.created_at + interval '24 hours')) as responders
      from bm group by bm.blast_id
    )
    select b.id, b.name, p.sent::int8, p.delivered::int8, p.read::int8, p.responders::int8
    from per_blast p join ${blasts} b on b.organization_id = ${orgId} and b.id = p.blast_id
    order by p.sent desc, b.id asc
    limit ${limit}`.execute(db);
  return result.rows.map((r) => ({
    blastId: r.id,
    name: r.name,
    sent: Number(r.sent),
    delivered: Number(r.delivered),
    read: Number(r.read),
    responders: Number(r.responders),
  }));
}

export type BotLeader = { botId: string; name: string; sessions: number; completions: number };

/** Bots by sessions started in [from, to) (ties by id), at most `limit`; completions = sessions ended on an End node. */
export async function topBots(db: TenantDb, orgId: string, from: Date, to: Date, limit: number): Promise<BotLeader[]> {
  const [bots, sessions] = [sql.table('bots'), sql.table('bot_sessions')];
  const result = await sql<{ id: string; name: string; sessions: string; completions: string }>`
    select b.id, b.name, count(*)::int8 as sessions,
      count(*) filter (where s.status = 'ENDED' and exists (
        select 1 from jsonb_array_elements(coalesce(s.flow->'nodes', '[]'::jsonb)) n where n->>'id' = s.node_id and n->>'type' = 'END'))::int8 as completions
    from ${sessions} s join ${bots} b on b.organization_id = ${orgId} and b.id = s.bot_id
    where s.organization_id = ${orgId} and s.created_at >= ${from} and s.created_at < ${to}
    group by b.id, b.name
    order by count(*) desc, b.id asc
    limit ${limit}`.execute(db);
  return result.rows.map((r) => ({ botId: r.id, name: r.name, sessions: Number(r.sessions), completions: Number(r.completions) }));
}

/** The blast's outbound messages (sent to its recipients), revoked ones excluded. */
function blastMessages(orgId: string, blastId: string) {
  const [recipients, messages] = [sql.table('blast_recipients'), sql.table('messages')];
  return sql`(
    select m.id, m.contact_id, m.conversation_id, m.status, m.channel, m.requested_channel, m.cost_units, m.created_at,
      m.sent_at, m.delivered_at, m.read_at, m.failed_at
    from ${recipients} r join ${messages} m on m.organization_id = ${orgId} and m.id = r.message_id
    where r.organization_id = ${orgId} and r.blast_id = ${blastId} and m.direction = 'outbound' and m.status <> 'revoked'
  )`;
}

/** Inbound messages answering a blast message: its conversation's, within 24 hours after it; `is_tap` per taps.ts. */
function blastResponses(orgId: string, blastId: string) {
  return sql`(
    select bm.id as blast_message_id, bm.channel as blast_channel, t.message_id, t.contact_id, t.created_at, (t.value is not null) as is_tap
    from ${blastMessages(orgId, blastId)} bm
    join lateral ${tapsOf(orgId, {}, sql`m.conversation_id = bm.conversation_id and m.created_at > bm.created_at and m.created_at <= bm.created_at + interval '24 hours'`)} t on true
  )`;
}

export type BlastChannelSums = {
  channel: string | null;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  received: number;
  fallback: number;
  costUnits: number;
};

export async function blastRecipientCount(db: TenantDb, orgId: string, blastId: string): Promise<number> {
  const recipients = sql.table('blast_recipients');
  const r = await sql<{
    n: string;
  }>`select count(*)::int8 as n from ${recipients} where organization_id = ${orgId} and blast_id = ${blastId} and status <> 'skipped'`.execute(
    db,
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Figures of the blast's messages per carrying channel (`received` = responses to them). */
export async function blastByChannel(db: TenantDb, orgId: string, blastId: string): Promise<BlastChannelSums[]> {
  const result = await sql<Record<string, string | null>>`
    with bm as ${blastMessages(orgId, blastId)},
    resp as (select blast_message_id, count(distinct message_id) as n from ${blastResponses(orgId, blastId)} x group by blast_message_id)
    select bm.channel, count(*) filter (where bm.sent_at is not null)::int8 as sent,
      count(*) filter (where bm.status in ('delivered', 'read'))::int8 as delivered,
      count(*) filter (where bm.status = 'read')::int8 as read,
      count(*) filter (where bm.status in ('failed', 'undeliverable'))::int8 as failed,
      coalesce(sum(resp.n), 0)::int8 as received,
      count(*) filter (where bm.sent_at is not null and bm.requested_channel = 'RCS' and bm.channel in ('SMS', 'MMS'))::int8 as fallback,
      coalesce(sum(bm.cost_units), 0)::int8 as cost
    from bm left join resp on resp.blast_message_id = bm.id
    group by bm.channel`.execute(db);
  return result.rows.map((r) => ({
    channel: r.channel ?? null,
    sent: Number(r.sent),
    delivered: Number(r.delivered),
    read: Number(r.read),
    failed: Number(r.failed),
    received: Number(r.received),
    fallback: Number(r.fallback),
    costUnits: Number(r.cost),
  }));
}

export type BlastEngagement = { taps: number; replies: number; uniqueResponders: number; optOuts: number };

/** Taps, text replies, responders and opt-outs within 24 hours of a blast message's delivery. */
export async function blastEngagement(db: TenantDb, orgId: string, blastId: string): Promise<BlastEngagement> {
  const consent = sql.table('consent_events');
  const result = await sql<Record<string, string>>`
    with resp as (select distinct message_id, contact_id, is_tap from ${blastResponses(orgId, blastId)} x)
    select
      (select count(*) from resp where is_tap)::int8 as taps,
      (select count(*) from resp where not is_tap)::int8 as replies,
      (select count(distinct contact_id) from resp)::int8 as responders,
      (select count(distinct bm.id) from ${blastMessages(orgId, blastId)} bm
        where bm.delivered_at is not null and exists (
          select 1 from ${consent} c where c.organization_id = ${orgId} and c.contact_id = bm.contact_id and c.action = 'OPT_OUT'
            and c.created_at >= bm.delivered_at and c.created_at <= bm.delivered_at + interval '24 hours'))::int8 as opt_outs`.execute(db);
  const r = result.rows[0]!;
  return { taps: Number(r.taps), replies: Number(r.replies), uniqueResponders: Number(r.responders), optOuts: Number(r.opt_outs) };
}

export type BlastBucket = { bucket: Date; sent: number; delivered: number; read: number; failed: number; taps: number; replies: number };

/** Events of the blast per `minute` or `hour` bucket (UTC): sends, deliveries, reads, failures, taps, replies. */
export async function blastTimeline(db: TenantDb, orgId: string, blastId: string, unit: 'minute' | 'hour'): Promise<BlastBucket[]> {
  const result = await sql<{ bucket: Date; sent: string; delivered: string; read: string; failed: string; taps: string; replies: string }>`
    with bm as ${blastMessages(orgId, blastId)},
    resp as (select distinct message_id, created_at, is_tap from ${blastResponses(orgId, blastId)} x),
    events as (
      select sent_at as at, 'sent' as kind from bm where sent_at is not null
      union all select delivered_at, 'delivered' from bm where status in ('delivered', 'read') and delivered_at is not null
      union all select read_at, 'read' from bm where status = 'read' and read_at is not null
      union all select failed_at, 'failed' from bm where status in ('failed', 'undeliverable') and failed_at is not null
      union all select created_at, case when is_tap then 'tap' else 'reply' end from resp
    )
    select date_trunc(${unit}, at at time zone 'UTC') at time zone 'UTC' as bucket,
      count(*) filter (where kind = 'sent')::int8 as sent, count(*) filter (where kind = 'delivered')::int8 as delivered,
      count(*) filter (where kind = 'read')::int8 as read, count(*) filter (where kind = 'failed')::int8 as failed,
      count(*) filter (where kind = 'tap')::int8 as taps, count(*) filter (where kind = 'reply')::int8 as replies
    from events group by 1 order by 1`.execute(db);
  return result.rows.map((r) => ({
    bucket: new Date(r.bucket),
    sent: Number(r.sent),
    delivered: Number(r.delivered),
    read: Number(r.read),
    failed: Number(r.failed),
    taps: Number(r.taps),
    replies: Number(r.replies),
  }));
}

export async function blastOf(db: TenantDb, orgId: string, blastId: string): Promise<{ id: string; launched_at: Date | null } | undefined> {
  const blasts = sql.table('blasts');
  const r = await sql<{
    id: string;
    launched_at: Date | null;
  }>`select id, launched_at from ${blasts} where organization_id = ${orgId} and id = ${blastId}`.execute(db);
  return r.rows[0];
}
