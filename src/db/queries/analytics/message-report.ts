// SQL for the message report (GET /v1/reports/messages): one tenant-scoped query with every filter, the sort
// and limit + 1 (the caller derives hasMore). Provider columns are never selected. Indexes: migration 0007.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Channel, MessageStatus } from '../../tables/enums.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

type ReportSort = 'createdAt' | 'receiptAt' | 'direction' | 'channel' | 'actualChannel' | 'fallbackReason';

export type MessageReportQuery = {
  from: Date;
  to: Date;
  /** true: created_at <= to (a date-time `end`); false: created_at < to (a date-only `end`, the next midnight). */
  toInclusive: boolean;
  direction?: 'inbound' | 'outbound';
  status?: MessageStatus;
  senderId?: string;
  carrier?: string;
  brand?: string;
  campaign?: string;
  programId?: string;
  blastId?: string;
  channel?: Channel;
  actualChannel?: Channel;
  fallback?: 'primary' | 'fallback';
  sort: ReportSort;
  dir: 'asc' | 'desc';
  /** Rows to read (the page size + 1). */
  limit: number;
  /**
   * Keyset cursor for sort `createdAt` ascending (exports read in batches): rows after this one. `at` is the row's
   * `cursor_at` (created_at as ISO text with microseconds: a JS Date's milliseconds would skip or repeat rows).
   */
  after?: { at: string; id: string };
};

// The message's attribution as stored with it (migration 0043: the sender's program and its registrations when
// the message was stored). Compared as text, so a filter value that is not a uuid matches no row instead of failing.
const PROGRAM_ID = sql<string | null>`program_id::text`;
const BRAND = sql<string | null>`brand_registration_id::text`;
const CAMPAIGN = sql<string | null>`campaign_registration_id::text`;
// The network the contact's number was originally allocated to, recorded at acceptance (migration 0049); null on
// inbound and older messages and where the mapping knows none, which a `carrier` filter then does not match.
const CARRIER = sql<string | null>`carrier`;

// Literal SQL (no bind parameters) so PostgreSQL matches these to the expression indexes of migration 0007.
/** Inbound messages have no receipt: their receive time stands in. */
const RECEIPT_AT = sql<Date | null>`(case when direction = 'inbound' then created_at else receipt_at end)`;
/** Requested as RCS and carried by SMS/MMS. */
const IS_FALLBACK = sql<SqlBool>`(requested_channel = 'RCS' and channel in ('SMS', 'MMS'))`;

/** Sort keys; nullable ones sort nulls first ascending and last descending (matching the indexes). */
const SORT_KEYS: Record<ReportSort, { expr: Expression<unknown>; nullable: boolean }> = {
  createdAt: { expr: sql`created_at`, nullable: false },
  receiptAt: { expr: RECEIPT_AT, nullable: true },
  direction: { expr: sql`direction`, nullable: false },
  channel: { expr: sql`requested_channel`, nullable: true },
  actualChannel: { expr: sql`channel`, nullable: true },
  fallbackReason: { expr: sql`fallback_reason`, nullable: true },
};

export function messageReportRows(db: TenantDb, orgId: string, f: MessageReportQuery) {
  let q = tenant(db.selectFrom('messages'), orgId)
    .select([
      'id',
      'direction',
      'created_at',
      RECEIPT_AT.as('receipt_at'),
      'contact_id',
      'contact_phone',
      'sender_id',
      PROGRAM_ID.as('program_id'),
      BRAND.as('brand'),
      CAMPAIGN.as('campaign'),
      CARRIER.as('carrier'),
      'requested_channel',
      'channel',
      sql<boolean>`coalesce(${IS_FALLBACK}, false)`.as('is_fallback'),
      'fallback_reason',
      'message_type',
      'status',
      'error_code',
      'segments',
      'cost_units',
      'conversation_id',
      'blast_id',
      'bot_id',
      'event_trigger_id',
      'acquisition_campaign_id',
      sql<string>`to_json(created_at) #>> '{}'`.as('cursor_at'),
    ])
    .where('created_at', '>=', f.from)
    .where('created_at', f.toInclusive ? '<=' : '<', f.to);

  if (f.after) q = q.where(sql<SqlBool>`(created_at, id) > (${f.after.at}::timestamptz, ${f.after.id}::uuid)`);
  if (f.direction) q = q.where('direction', '=', f.direction);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.senderId) q = q.where('sender_id', '=', f.senderId);
  if (f.channel) q = q.where('requested_channel', '=', f.channel);
  if (f.actualChannel) q = q.where('channel', '=', f.actualChannel);
  if (f.carrier !== undefined) q = q.where(sql<SqlBool>`lower(${CARRIER}) = lower(${f.carrier})`);
  if (f.brand !== undefined) q = q.where(sql<SqlBool>`${BRAND} = ${f.brand}`);
  if (f.campaign !== undefined) q = q.where(sql<SqlBool>`${CAMPAIGN} = ${f.campaign}`);
  if (f.blastId !== undefined) q = q.where(sql<SqlBool>`blast_id::text = ${f.blastId}`);
  if (f.programId !== undefined) q = q.where(sql<SqlBool>`${PROGRAM_ID} = ${f.programId}`);
  if (f.fallback === 'fallback') q = q.where(IS_FALLBACK);
  if (f.fallback === 'primary') q = q.where(sql<SqlBool>`not coalesce(${IS_FALLBACK}, false)`);

  const key = SORT_KEYS[f.sort];
  const desc = f.dir === 'desc';
  return q
    .orderBy(key.expr, (ob) => {
      const o = desc ? ob.desc() : ob.asc();
      return key.nullable ? (desc ? o.nullsLast() : o.nullsFirst()) : o;
    })
    .orderBy('id', desc ? 'desc' : 'asc')
    .limit(f.limit)
    .execute();
}

export type MessageReportDbRow = Awaited<ReturnType<typeof messageReportRows>>[number];
