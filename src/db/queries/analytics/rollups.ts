// SQL over the exact message rollup (analytics_message_rollups by hour, analytics_message_rollups_daily by day, plus
// the pending analytics_message_deltas; migrations 0022 and 0028: the trigger on messages appends deltas in the
// writer's transaction, a job folds them into both levels). Every message figure of the analytics operations is read here, never
// from the messages table. Counts are summed as int8 and returned as numbers (safe: far below 2^53).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type RollupGranularity = 'hour' | 'day' | 'week' | 'month';

export type RollupFilter = {
  /** Inclusive start (a UTC midnight). */
  from: Date;
  /** Exclusive end (the UTC midnight after the last day). */
  to: Date;
  senderId?: string;
  /**
   * Brand / campaign registration filters: the registrations of the sender's program when each message was stored
   * (sender_attribution, migration 0059), a dimension of every rollup level. An unknown id matches no message.
   */
  brandId?: string;
  campaignId?: string;
};

export type MetricSums = {
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  received: number;
  fallback: number;
  costUnits: number;
};

// The terms of AnalyticsMessageMetrics, defined once there: `accepted` = an outbound message the service took and
// did not revoke (whatever its status: held, queued, sending …); `sent` = accepted and handed to a carrier (the
// carrier took it: messages.sent_at, the rollups' `handed`); `delivered` = delivered or read; `read`; `failed` =
// failed or undeliverable (handed or not). src/db/queries/analytics/blasts.ts and bots.ts count the same way.
const ACCEPTED = sql`direction = 'outbound' and status <> 'revoked'`;
const SENT = sql`${ACCEPTED} and handed`;
const sumWhere = (column: 'messages' | 'cost_units', where: RawBuilder<unknown>) =>
  sql<string>`coalesce(sum(${sql.ref(column)}) filter (where ${where}), 0)::int8`;
const METRICS = [
  sumWhere('messages', SENT).as('sent'),
  sumWhere('messages', sql`${ACCEPTED} and status in ('delivered', 'read')`).as('delivered'),
  sumWhere('messages', sql`${ACCEPTED} and status = 'read'`).as('read'),
  sumWhere('messages', sql`${ACCEPTED} and status in ('failed', 'undeliverable')`).as('failed'),
  sumWhere('messages', sql`direction = 'inbound'`).as('received'),
  sumWhere('messages', sql`${SENT} and is_fallback`).as('fallback'),
  sumWhere('cost_units', ACCEPTED).as('cost_units'),
] as const;

type RawSums = { sent: string; delivered: string; read: string; failed: string; received: string; fallback: string; cost_units: string };
const toSums = (r: RawSums): MetricSums => ({
  sent: Number(r.sent),
  delivered: Number(r.delivered),
  read: Number(r.read),
  failed: Number(r.failed),
  received: Number(r.received),
  fallback: Number(r.fallback),
  costUnits: Number(r.cost_units),
});

const DAY_MS = 86_400_000;
const SUMS = ['messages', 'segments', 'cost_units', 'text_segments', 'rich_messages', 'sessions'] as const;
/** The carrying channel of an hourly row: the actual one, else the requested one (the daily level stores it so). */
const CARRYING_CHANNEL = sql<string>`coalesce(nullif(channel, ''), nullif(requested_channel, ''), '')`;

/**
 * Which rollup level answers: the daily one (migration 0028) when the range is whole UTC days and no hourly bucket
 * is asked for — 24× fewer rows — else the hourly one.
 */
type RollupLevel = 'hour' | 'day';
const levelFor = (f: Pick<RollupFilter, 'from' | 'to'>, granularity?: RollupGranularity): RollupLevel =>
  granularity !== 'hour' && f.from.getTime() % DAY_MS === 0 && f.to.getTime() % DAY_MS === 0 ? 'day' : 'hour';

/**
 * The organization's rollup rows of the range (at the given level) plus the deltas not folded yet (appended by
 * the trigger in the writers' transactions): together they equal the messages table at this statement's
 * snapshot. Every row reads as (bucket, sender_id, direction, channel — the carrying one —, status, is_fallback, sums).
 */
function scoped(db: TenantDb, orgId: string, f: RollupFilter, level: RollupLevel) {
  const filter = (bucket: 'bucket_hour' | 'bucket_day') =>
    sql<boolean>`${sql.ref(bucket)} >= ${f.from} and ${sql.ref(bucket)} < ${f.to}${
      f.senderId !== undefined ? sql` and sender_id = ${f.senderId}` : sql``
    }${f.brandId !== undefined ? sql` and brand_id = ${f.brandId}` : sql``}${
      f.campaignId !== undefined ? sql` and campaign_id = ${f.campaignId}` : sql``
    }`;
  const hourly = (table: 'analytics_message_rollups' | 'analytics_message_deltas') =>
    tenant(db.selectFrom(table), orgId)
      .select([
        sql<Date>`bucket_hour`.as('bucket'),
        'sender_id',
        'direction',
        CARRYING_CHANNEL.as('channel'),
        'status',
        'is_fallback',
        'handed',
        ...SUMS,
      ])
      .where(filter('bucket_hour'));
  const daily = () =>
    tenant(db.selectFrom('analytics_message_rollups_daily'), orgId)
      .select([sql<Date>`bucket_day`.as('bucket'), 'sender_id', 'direction', 'channel', 'status', 'is_fallback', 'handed', ...SUMS])
      .where(filter('bucket_day'));
  const folded = level === 'day' ? daily() : hourly('analytics_message_rollups');
  return db.selectFrom(folded.unionAll(hourly('analytics_message_deltas')).as('r'));
}

// System handle: the compaction job rewrites the rollup rows of every organization.
/** Folds every committed delta into the rollup (system handle; exact and idempotent: see migration 0022). */
export async function compactRollup(db: Db): Promise<number> {
  const r = await sql<{ folded: string }>`select analytics_rollup_compact() as folded`.execute(db);
  return Number(r.rows[0]?.folded ?? 0);
}

/** The totals of the range. */
export async function rollupTotals(db: TenantDb, orgId: string, f: RollupFilter): Promise<MetricSums> {
  const row = await scoped(db, orgId, f, levelFor(f))
    .select([...METRICS])
    .executeTakeFirstOrThrow();
  return toSums(row as RawSums);
}

/** Per carrying channel (the actual one; the requested one while not yet known). Channels without rows are absent. */
export async function rollupByChannel(db: TenantDb, orgId: string, f: RollupFilter): Promise<Array<MetricSums & { channel: string }>> {
  const rows = await scoped(db, orgId, f, levelFor(f))
    .select(['channel', ...METRICS])
    .groupBy('channel')
    .execute();
  return rows.map((r) => ({ channel: r.channel, ...toSums(r as unknown as RawSums) }));
}

/** Per sender ID. */
export async function rollupBySender(db: TenantDb, orgId: string, f: RollupFilter): Promise<Array<MetricSums & { senderId: string }>> {
  const rows = await scoped(db, orgId, f, levelFor(f))
    .select(['sender_id', ...METRICS])
    .groupBy('sender_id')
    .execute();
  return rows.map((r) => ({ senderId: r.sender_id, ...toSums(r as unknown as RawSums) }));
}

/** Per UTC bucket (hour, day, ISO week from Monday, calendar month); buckets without rows are absent. */
export async function rollupTimeline(
  db: TenantDb,
  orgId: string,
  f: RollupFilter,
  granularity: RollupGranularity,
): Promise<Array<MetricSums & { bucket: Date }>> {
  const unit = sql.lit(granularity);
  const bucket = sql<Date>`(date_trunc(${unit}, bucket at time zone 'UTC') at time zone 'UTC')`;
  const rows = await scoped(db, orgId, f, levelFor(f, granularity))
    .select([bucket.as('bucket'), ...METRICS])
    .groupBy(bucket)
    .orderBy(bucket)
    .execute();
  return rows.map((r) => ({ bucket: (r as { bucket: Date }).bucket, ...toSums(r as RawSums) }));
}

/**
 * Sessions opened in [from, to), organization-wide: the inbound messages marked as opening one (migration 0028),
 * counted by the rollup.
 */
export async function rollupSessions(db: TenantDb, orgId: string, from: Date, to: Date): Promise<number> {
  const f = { from, to };
  const row = await scoped(db, orgId, f, levelFor(f))
    .select(sql<string>`coalesce(sum(sessions), 0)::int8`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Name and type of the organization's sender IDs (all of them, or the given ones). */
export function senderNames(db: TenantDb, orgId: string, ids?: readonly string[]) {
  let q = tenant(db.selectFrom('sender_ids'), orgId).select(['id', 'name', 'type']);
  if (ids) q = ids.length ? q.where('id', 'in', ids) : q.where(sql<boolean>`false`);
  return q.execute();
}

export type UsageSums = { bucket: Date; textSegments: number; richMessages: number; costUnits: number };

/** Billable items per UTC day or month, over every message charged in the range (any direction and status). */
export async function rollupUsage(db: TenantDb, orgId: string, f: RollupFilter, granularity: 'day' | 'month'): Promise<UsageSums[]> {
  const bucket = sql<Date>`(date_trunc(${sql.lit(granularity)}, bucket at time zone 'UTC') at time zone 'UTC')`;
  const rows = await scoped(db, orgId, f, levelFor(f, granularity))
    .select([
      bucket.as('bucket'),
      sql<string>`coalesce(sum(text_segments), 0)::int8`.as('text_segments'),
      sql<string>`coalesce(sum(rich_messages), 0)::int8`.as('rich_messages'),
      sql<string>`coalesce(sum(cost_units), 0)::int8`.as('cost_units'),
    ])
    .groupBy(bucket)
    .execute();
  return rows.map((r) => ({
    bucket: r.bucket,
    textSegments: Number(r.text_segments),
    richMessages: Number(r.rich_messages),
    costUnits: Number(r.cost_units),
  }));
}

/** Fresh completed RCS capability lookups (contact_rcs_lookups) per UTC day or month: organization-wide. */
export async function capabilityChecks(
  db: TenantDb,
  orgId: string,
  from: Date,
  to: Date,
  granularity: 'day' | 'month',
): Promise<Array<{ bucket: Date; checks: number }>> {
  const bucket = sql<Date>`(date_trunc(${sql.lit(granularity)}, created_at at time zone 'UTC') at time zone 'UTC')`;
  const rows = await tenant(db.selectFrom('contact_rcs_lookups'), orgId)
    .select([bucket.as('bucket'), sql<string>`count(*)::int8`.as('checks')])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .groupBy(bucket)
    .execute();
  return rows.map((r) => ({ bucket: r.bucket, checks: Number(r.checks) }));
}

export type CarriedSums = { bucket: Date; senderId: string; senderType: string; isSandbox: boolean; channel: string; messages: number };

/**
 * Outbound messages handed to a carrier on SMS or MMS per UTC day or month, by sender and channel, with the
 * sender's type: what the carriers' per-message pass-through fees are counted on.
 */
export async function rollupCarried(db: TenantDb, orgId: string, f: RollupFilter, granularity: 'day' | 'month'): Promise<CarriedSums[]> {
  const bucket = sql<Date>`(date_trunc(${sql.lit(granularity)}, bucket at time zone 'UTC') at time zone 'UTC')`;
  const rows = await scoped(db, orgId, f, levelFor(f, granularity))
    .select([bucket.as('bucket'), 'sender_id', 'channel', sumWhere('messages', SENT).as('messages')])
    .where('channel', 'in', ['SMS', 'MMS'])
    .groupBy([bucket, 'sender_id', 'channel'])
    .execute();
  const ids = [...new Set(rows.map((r) => r.sender_id as string))];
  const senders = ids.length
    ? await tenant(db.selectFrom('sender_ids'), orgId).select(['id', 'type', 'is_sandbox']).where('id', 'in', ids).execute()
    : [];
  const byId = new Map(senders.map((s) => [s.id, s]));
  return rows.flatMap((r) => {
    const s = byId.get(r.sender_id as string);
    const messages = Number(r.messages);
    if (!s || messages === 0) return [];
    return [{ bucket: r.bucket, senderId: s.id, senderType: s.type, isSandbox: s.is_sandbox, channel: r.channel as string, messages }];
  });
}
