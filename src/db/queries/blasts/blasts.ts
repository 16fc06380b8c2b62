// SQL for the Blasts section: blasts, their recipients (the idempotency unit of sending) and the counts progress
// and stats are made of. Every query names the organization (tenant()).
import { sql, type Insertable, type RawBuilder, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { BlastsTable } from '../../tables/blasts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { chatSessionOpen } from '../messages/accept.ts';
import type { MessageRow } from '../messages/messages.ts';
import type { BlastStatus } from '../../tables/enums.ts';

export type BlastRow = Selectable<BlastsTable>;
export type NewBlast = Omit<Insertable<BlastsTable>, 'organization_id'>;

export function insertBlast(db: TenantDb, orgId: string, values: NewBlast): Promise<BlastRow> {
  return db
    .insertInto('blasts')
    .values({ ...values, organization_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Row locks: `forKeyShare` — the acceptance of a batch (batches run side by side, and the taking of the next slice,
 * `forNoKeyUpdate`, goes on beside them); `forUpdate` — a cancel or a move of state, which waits for both.
 */
export function getBlast(
  db: TenantDb,
  orgId: string,
  id: string,
  opts: { forUpdate?: boolean; forNoKeyUpdate?: boolean; forKeyShare?: boolean; skipLocked?: boolean } = {},
): Promise<BlastRow | undefined> {
  const q = tenant(db.selectFrom('blasts'), orgId).selectAll().where('id', '=', id);
  const locked = opts.forUpdate ? q.forUpdate() : opts.forNoKeyUpdate ? q.forNoKeyUpdate() : opts.forKeyShare ? q.forKeyShare() : q;
  return (opts.skipLocked ? locked.skipLocked() : locked).executeTakeFirst();
}

export function listBlasts(
  db: TenantDb,
  orgId: string,
  status: BlastStatus | undefined,
  page: { limit: number; offset: number },
): Promise<Page<BlastRow>> {
  let q = tenant(db.selectFrom('blasts'), orgId).selectAll();
  if (status) q = q.where('status', '=', status);
  return listPage(newestFirst(q), page);
}

export function updateBlast(db: TenantDb, orgId: string, id: string, patch: Updateable<BlastsTable>): Promise<BlastRow> {
  return tenant(db.updateTable('blasts'), orgId)
    .set({ ...patch, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteBlast(db: TenantDb, orgId: string, id: string): Promise<void> {
  await tenant(db.deleteFrom('blasts'), orgId).where('id', '=', id).execute();
}

/** Which of these contact ids exist in the organization. */
export async function existingContactIds(db: TenantDb, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tenant(db.selectFrom('contacts'), orgId).select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The audience's condition on contacts `c`: explicit ids ∪ segment. */
function audienceCondition(ids: readonly string[], segment: RawBuilder<SqlBool> | null): RawBuilder<SqlBool> {
  const idList = ids.length ? sql.join(ids.map((id) => sql`${id}::uuid`)) : null;
  const explicitCond = idList ? sql<SqlBool>`c.id in (${idList})` : sql<SqlBool>`false`;
  return segment ? sql<SqlBool>`(${explicitCond} or ${segment})` : explicitCond;
}

/** A contact's A/B variant key: a hash of (blast, contact) against the cumulative weights ('' without variants). */
function variantKey(blastId: string, variants: ReadonlyArray<{ key: string; upTo: number }> | null): RawBuilder<string> {
  const bucket = sql`mod(abs(hashtextextended(${blastId} || c.id::text, 0)), 100)`;
  return variants?.length
    ? sql`case ${sql.join(
        variants.map((v) => sql`when ${bucket} < ${v.upTo} then ${v.key}`),
        sql` `,
      )} else ${variants[variants.length - 1]!.key} end`
    : sql`''`;
}

/** The audience as recipients (contact_id, key): each contact once, with the content key of its variant. */
export function audienceRecipients(
  orgId: string,
  blastId: string,
  ids: readonly string[],
  segment: RawBuilder<SqlBool> | null,
  variants: ReadonlyArray<{ key: string; upTo: number }> | null,
): RawBuilder<unknown> {
  return sql`select c.id as contact_id, ${variantKey(blastId, variants)} as key from contacts c
    where c.organization_id = ${orgId}::uuid and ${audienceCondition(ids, segment)}`;
}

/** Contacts both named explicitly and in the segment (counted once in the audience, reported as duplicates). */
export async function audienceDuplicates(
  db: TenantDb,
  orgId: string,
  ids: readonly string[],
  segment: RawBuilder<SqlBool> | null,
): Promise<number> {
  if (!ids.length || !segment) return 0;
  const row = await tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id')
    .select(sql<string>`count(*)`.as('n'))
    .where(sql<SqlBool>`c.id in (${sql.join(ids.map((id) => sql`${id}::uuid`))}) and ${segment}`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export type EstimateGroup = {
  key: string;
  block_code: string | null;
  route: 'primary' | 'fallback' | null;
  capability_unknown: boolean;
  /** Inside their quiet hours now (a MARKETING send holds them): the latest time one of them is due. */
  held_until: Date | null;
  n: number;
};

/** How a blast's recipients are routed (the send's channel plan, for a set): see routeOf. */
export type RoutePlan = {
  /** The sender's own channel (defaultChannelOf): CHATAPP for a chat-app business sender, else RCS. */
  requested: 'RCS' | 'CHATAPP';
  /** Whether the sender may use it now (the sending rule). */
  requestedUsable: boolean;
  fallbackAllowed: boolean;
  /** Per content key: whether its SMS/MMS fallback has a carrier, and whether it needs no chat-app session (a template). */
  byKey: ReadonlyArray<{ key: string; fallbackOk: boolean; sessionFree: boolean }>;
  /** The chat-app session window (CHATAPP only): the sender, the send's session hours and the time now. */
  session: { senderId: string; hours: number; now: Date };
};

/**
 * A gate row's route: 'primary' (the requested channel), 'fallback' (SMS/MMS) or null (no channel), as the send
 * plans it (accept.ts routeSql). RCS: as BlastEstimate documents, an unknown capability is placed on the fallback
 * channel when fallback is allowed. CHATAPP: a template (`f.session_free`) or an open chat-app session of the
 * recipient with the sender (the send's own test, chatSessionOpen), else the fallback when one is carried (a
 * chat-app sender carries none). `f` is fallbackOf's join; `g.id` the recipient's contact.
 */
function routeOf(orgId: string, plan: RoutePlan): RawBuilder<string | null> {
  if (plan.requested === 'CHATAPP') {
    const open = sql`exists (select 1 from conversations cv where cv.organization_id = ${orgId}::uuid and cv.contact_id = g.id
      and cv.sender_id = ${plan.session.senderId}::uuid and ${chatSessionOpen({ now: plan.session.now, sessionHours: plan.session.hours })})`;
    return sql`case when ${plan.requestedUsable} and (f.session_free or ${open}) then 'primary' when f.ok then 'fallback' end`;
  }
  return sql`case when ${plan.requestedUsable} and (g.rcs_capable or (g.rcs_capable is null and not ${plan.fallbackAllowed})) then 'primary'
           when f.ok then 'fallback' end`;
}

/** Each content key's fallback carrier and session need, joined as `f` on the gate row's key. */
function fallbackOf(plan: RoutePlan): RawBuilder<unknown> {
  const keys = plan.byKey;
  return sql`left join unnest(${keys.map((k) => k.key)}::text[], ${keys.map((k) => k.fallbackOk)}::bool[], ${keys.map((k) => k.sessionFree)}::bool[])
    as f(key, ok, session_free) on f.key = g.key`;
}

/**
 * The estimate's figures in one aggregate over the gate's rows (src/db/queries/compliance/gate.ts): recipients by
 * content key, refusal, route (RCS, its SMS/MMS fallback, or none), unknown RCS capability and quiet hours now.
 */
export async function estimateGroups(db: TenantDb, orgId: string, gate: RawBuilder<unknown>, plan: RoutePlan): Promise<EstimateGroup[]> {
  // RCS capability plays no part in a chat-app plan: nobody is counted unknown there.
  const unknown = plan.requested === 'RCS' ? sql`g.rcs_capable is null` : sql`false`;
  const rows = await sql<EstimateGroup & { n: string }>`
    select g.key, g.block_code, ${unknown} as capability_unknown, ${routeOf(orgId, plan)} as route,
      g.held_until is not null as held, max(g.held_until) as held_until,
      count(*) as n
    from (${gate}) g ${fallbackOf(plan)}
    group by 1, 2, 3, 4, 5`.execute(db);
  return rows.rows.map((r) => ({ ...r, n: Number(r.n) }));
}

/**
 * Whether at least one recipient of the gate's rows passes it and has a channel: the launch's check, which stops
 * at the first such recipient (the rows stream in contact order; only an audience excluded almost entirely is
 * read through).
 */
export async function anyEligible(db: TenantDb, orgId: string, gate: RawBuilder<unknown>, plan: RoutePlan): Promise<boolean> {
  const rows = await sql<{ one: number }>`
    select 1 as one from (${gate}) g ${fallbackOf(plan)}
    where g.block_code is null and ${routeOf(orgId, plan)} is not null
    limit 1`.execute(db);
  return rows.rows.length > 0;
}

/** Count of the audience now, before exclusions (union, without duplicates). */
export async function countAudience(
  db: TenantDb,
  orgId: string,
  ids: readonly string[],
  segment: RawBuilder<SqlBool> | null,
): Promise<number> {
  const row = await tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id')
    .select(sql<string>`count(*)`.as('n'))
    .where(audienceCondition(ids, segment))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Resolves the next slice of the audience (explicit ids ∪ segment) into recipients of batch `batch`: the next
 * `size` contacts by contact id after `after` (the keyset; null for the first), each with its A/B variant chosen
 * deterministically from a hash of (blast, contact) against the cumulative weights. The caller holds the blast's
 * row (slices are taken one at a time); a recipient already there is left as it is (the primary key (blast,
 * contact) is the idempotency unit). Answers how many contacts the slice took and the last one (the next cursor).
 */
export async function resolveSlice(
  db: TenantDb,
  orgId: string,
  blastId: string,
  audience: { ids: readonly string[]; segment: RawBuilder<SqlBool> | null; variants: ReadonlyArray<{ key: string; upTo: number }> | null },
  slice: { batch: number; after: string | null; size: number },
): Promise<{ taken: number; last: string | null }> {
  const key = variantKey(blastId, audience.variants);
  const after = slice.after ? sql`and c.id > ${slice.after}::uuid` : sql``;
  const row = (
    await sql<{ taken: number; last: string | null }>`
      with s as (
        select c.organization_id, c.id, ${key} as key from contacts c
        where c.organization_id = ${orgId}::uuid and ${audienceCondition(audience.ids, audience.segment)} ${after}
        order by c.id limit ${slice.size}
      ), ins as (
        insert into blast_recipients (organization_id, blast_id, contact_id, batch, variant_key, status)
        select s.organization_id, ${blastId}::uuid, s.id, ${slice.batch}, nullif(s.key, ''), 'pending' from s
        on conflict (blast_id, contact_id) do nothing
      )
      select (select count(*)::int from s) as taken, (select s.id from s order by s.id desc limit 1) as last`.execute(db)
  ).rows[0]!;
  return { taken: row.taken, last: row.last };
}

/** Records a resolved slice on the blast: the cursor, the slices so far, and when the last one was (`done`). */
export async function recordSlice(db: TenantDb, orgId: string, blastId: string, cursor: string | null, batches: number, done: boolean) {
  await tenant(db.updateTable('blasts'), orgId)
    .set({ audience_cursor: cursor, audience_batches: batches, ...(done ? { audience_done_at: sql<Date>`now()` } : {}) })
    .where('id', '=', blastId)
    .execute();
}

// System handle: ANALYZE blast_recipients: statistics, no row read or written.
/**
 * Fresh statistics for blast_recipients after a blast's first slice is resolved: without them the planner takes a just-inserted
 * batch for one row and joins the send path's set statement by nested loops over thousands of rows.
 */
export async function analyzeRecipients(db: Db): Promise<void> {
  await sql`analyze blast_recipients`.execute(db);
}

/** Blast recipients of one batch still pending, as send-path recipients (contact_id, key), locked for this transaction (others skip them). */
export function pendingBatch(orgId: string, blastId: string, batch: number): RawBuilder<unknown> {
  return sql`select contact_id, coalesce(variant_key, '') as key from blast_recipients
    where organization_id = ${orgId}::uuid and blast_id = ${blastId}::uuid and batch = ${batch} and status = 'pending'
    for update skip locked`;
}

/** The pending recipients of one batch, all cancelled or skipped with one reason (a blast no longer sending, a sender not ready). */
export async function settlePendingBatch(
  db: TenantDb,
  orgId: string,
  blastId: string,
  batch: number,
  to: { status: 'cancelled' } | { status: 'skipped'; reason: string },
): Promise<void> {
  await tenant(db.updateTable('blast_recipients'), orgId)
    .set({ status: to.status, skip_reason: to.status === 'skipped' ? to.reason : null, updated_at: sql`now()` })
    .where('blast_id', '=', blastId)
    .where('batch', '=', batch)
    .where('status', '=', 'pending')
    .execute();
}

/** Cancel: every pending recipient becomes cancelled. */
export async function cancelPending(db: TenantDb, orgId: string, blastId: string): Promise<number> {
  const res = await tenant(db.updateTable('blast_recipients'), orgId)
    .set({ status: 'cancelled', updated_at: sql`now()` })
    .where('blast_id', '=', blastId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Cancel, set-based: the blast's messages not yet handed to a carrier (queued or held) are revoked — unbilled,
 * off the dispatch outbox, their planned fallback dropped (no carrier ever accepted them) — and their recipients
 * count as cancelled. A message a dispatcher has already claimed is left to it. Answers the revoked rows when
 * `withRows` (for their `message.revoked` events), else only how many.
 */
export async function revokeUnsent(
  db: TenantDb,
  orgId: string,
  blastId: string,
  withRows: boolean,
): Promise<{ revoked: number; rows: MessageRow[] }> {
  const rows = (
    await sql<MessageRow & { revoked_count: number }>`
      with m as (
        update messages m set status = 'revoked', revoked_at = now(), cost_units = null, dispatch_at = null, updated_at = now(),
          fallback_used = case when m.sent_at is null then false else m.fallback_used end,
          fallback_reason = case when m.sent_at is null then null else m.fallback_reason end
        from blast_recipients r
        where r.organization_id = ${orgId}::uuid and r.blast_id = ${blastId}::uuid and r.status = 'accepted'
          and m.organization_id = ${orgId}::uuid and m.id = r.message_id and m.status in ('queued', 'held')
        returning m.*
      ), cancelled as (
        update blast_recipients r set status = 'cancelled', updated_at = now()
        from m where r.organization_id = ${orgId}::uuid and r.blast_id = ${blastId}::uuid and r.message_id = m.id
      )
      ${withRows ? sql`select x.revoked_count, m.* from (select count(*)::int as revoked_count from m) x left join m on true` : sql`select count(*)::int as revoked_count from m`}`.execute(
      db,
    )
  ).rows;
  return { revoked: rows[0]?.revoked_count ?? 0, rows: withRows ? rows.filter((r) => r.id) : [] };
}

/**
 * Whether a recipient of the blast still waits for its batch. Batches are accepted roughly in order, so the batch
 * index is read newest batch first: while the last batches wait the look ends at once, instead of reading every
 * recipient already accepted (the index holds every recipient, so that marking one changes no index: 0035).
 */
export async function hasPendingRecipient(db: TenantDb, orgId: string, blastId: string): Promise<boolean> {
  // A limited, ordered select (an EXISTS would drop the order).
  const row = await sql<{ one: number }>`select 1 as one from blast_recipients
    where organization_id = ${orgId}::uuid and blast_id = ${blastId}::uuid and status = 'pending'
    order by batch desc limit 1`.execute(db);
  return row.rows.length > 0;
}

/**
 * The first batch of the blast, from batch `from` on, with a message in one of `statuses`; null when none. Read from
 * the blast's recipient rows in batch order (blast_recipients_batch_idx), each message probed by its primary key:
 * messages have no index on their status (migration 0055: every status write would change an index entry, so none
 * could be HOT). The advance job passes the batch its last look ended at, so the batches it found settled are not
 * read again: batches are dispatched and settled roughly in order, and a look reads the settled part of one batch
 * (at most a batch's size) before it finds what is left. (Read from the first batch each time, a look read every
 * recipient already settled and its message: bench part l, 200,000 recipients, about 850,000 buffers and 1.4 s per
 * look, every second.)
 */
export async function firstBatchWithMessageIn(
  db: TenantDb,
  orgId: string,
  blastId: string,
  statuses: readonly string[],
  from: number,
): Promise<number | null> {
  // The message's status is a scalar probe per recipient row, never flattened into a join: the order by batch with
  // a limit ends the scan at the first hit, whatever the statistics think of the messages table.
  const row = await sql<{ batch: number }>`select r.batch from blast_recipients r
    where r.organization_id = ${orgId}::uuid and r.blast_id = ${blastId}::uuid and r.batch >= ${from} and r.message_id is not null
      and (select m.status from messages m where m.id = r.message_id and m.organization_id = r.organization_id) = any(${statuses as string[]}::text[])
    order by r.batch limit 1`.execute(db);
  return row.rows[0]?.batch ?? null;
}

export type RecipientCounts = {
  pending: number;
  accepted: number;
  skipped: number;
  cancelled: number;
  skippedByReason: Record<string, number>;
};

export async function recipientCounts(db: TenantDb, orgId: string, blastId: string): Promise<RecipientCounts> {
  const rows = await tenant(db.selectFrom('blast_recipients'), orgId)
    .select(['status', 'skip_reason', sql<string>`count(*)`.as('n')])
    .where('blast_id', '=', blastId)
    .groupBy(['status', 'skip_reason'])
    .execute();
  const out: RecipientCounts = { pending: 0, accepted: 0, skipped: 0, cancelled: 0, skippedByReason: {} };
  for (const r of rows) {
    const n = Number(r.n);
    out[r.status as 'pending' | 'accepted' | 'skipped' | 'cancelled'] += n;
    if (r.status === 'skipped' && r.skip_reason) out.skippedByReason[r.skip_reason] = (out.skippedByReason[r.skip_reason] ?? 0) + n;
  }
  return out;
}

export type BlastMessageRow = {
  status: string;
  channel: string | null;
  planned_channel: string | null;
  fallback_used: boolean;
  /** A carrier took the messages (sent_at set): `sent` as AnalyticsMessageMetrics defines it. */
  handed: boolean;
  cost_units: number | null;
  variant_key: string | null;
  n: number;
  cost: number;
  /** The latest `held_until` of the group's messages (held for quiet hours), else null. */
  held_until: Date | null;
};

/** The blast's (not cancelled) messages grouped by status, channel and variant, with the cost billed. */
export async function messageGroups(db: TenantDb, orgId: string, blastId: string): Promise<BlastMessageRow[]> {
  const rows = await tenant(db.selectFrom('blast_recipients as r'), orgId, 'r.organization_id')
    .innerJoin('messages as m', (j) => j.onRef('m.id', '=', 'r.message_id').onRef('m.organization_id', '=', 'r.organization_id'))
    .select([
      'm.status',
      'm.channel',
      'm.planned_channel',
      'm.fallback_used',
      sql<boolean>`m.sent_at is not null`.as('handed'),
      'r.variant_key',
      sql<string>`count(*)`.as('n'),
      sql<string>`coalesce(sum(m.cost_units), 0)`.as('cost'),
      sql<Date | null>`max(m.held_until)`.as('held_until'),
    ])
    .where('r.blast_id', '=', blastId)
    .where('r.status', '=', 'accepted')
    .groupBy(['m.status', 'm.channel', 'm.planned_channel', 'm.fallback_used', sql`m.sent_at is not null`, 'r.variant_key'])
    .execute();
  return rows.map((r) => ({ ...r, cost_units: null, n: Number(r.n), cost: Number(r.cost) }));
}

export async function contactPhone(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.selectFrom('contacts'), orgId).select('phone').where('id', '=', id).executeTakeFirst();
  return row?.phone;
}

/**
 * Per variant (null without variants): recipients who replied (an inbound message) and who opted out within
 * `days` of their blast message, and whose message's tracked links were visited (at any time, however often).
 */
export async function engagement(
  db: TenantDb,
  orgId: string,
  blastId: string,
  days: number,
): Promise<Array<{ variant_key: string | null; replies: number; opt_outs: number; clicks: number }>> {
  const result = await sql<{ variant_key: string | null; replies: string; opt_outs: string; clicks: string }>`
    select r.variant_key,
      count(*) filter (where exists (
        select 1 from messages i
        where i.organization_id = m.organization_id and i.contact_id = m.contact_id and i.direction = 'inbound'
          and i.created_at >= m.created_at and i.created_at < m.created_at + make_interval(days => ${days})
      )) as replies,
      count(*) filter (where exists (
        select 1 from opt_outs o
        where o.organization_id = m.organization_id and o.phone = m.contact_phone
          and o.opted_out_at >= m.created_at and o.opted_out_at < m.created_at + make_interval(days => ${days})
      )) as opt_outs,
      count(*) filter (where exists (
        select 1 from message_links l where l.organization_id = m.organization_id and l.message_id = m.id and l.clicks > 0
      )) as clicks
    from blast_recipients r
    join messages m on m.id = r.message_id and m.organization_id = r.organization_id
    where r.organization_id = ${orgId}::uuid and r.blast_id = ${blastId}::uuid and r.status = 'accepted'
    group by r.variant_key`.execute(db);
  return result.rows.map((r) => ({
    variant_key: r.variant_key,
    replies: Number(r.replies),
    opt_outs: Number(r.opt_outs),
    clicks: Number(r.clicks),
  }));
}
