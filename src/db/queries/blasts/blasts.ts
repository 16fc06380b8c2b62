// SQL for the Blasts section: blasts, their recipients (the idempotency unit of sending) and the counts progress
// and stats are made of. Every query names the organization (tenant()).
import { sql, type Insertable, type RawBuilder, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { BlastsTable } from '../../tables/blasts.ts';
import type { ContactsTable } from '../../tables/contacts.ts';
import { tenant } from '../../tenant.ts';

export type BlastRow = Selectable<BlastsTable>;
export type ContactRow = Selectable<ContactsTable>;
export type NewBlast = Omit<Insertable<BlastsTable>, 'organization_id'>;

export function insertBlast(db: Db, orgId: string, values: NewBlast): Promise<BlastRow> {
  return db.insertInto('blasts').values({ ...values, organization_id: orgId }).returningAll().executeTakeFirstOrThrow();
}

export function getBlast(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<BlastRow | undefined> {
  const q = tenant(db.selectFrom('blasts'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function listBlasts(db: Db, orgId: string, status: string | undefined, page: { limit: number; offset: number }): Promise<Page<BlastRow>> {
  let q = tenant(db.selectFrom('blasts'), orgId).selectAll();
  if (status) q = q.where('status', '=', status);
  return listPage(newestFirst(q), page);
}

export function updateBlast(db: Db, orgId: string, id: string, patch: Updateable<BlastsTable>): Promise<BlastRow> {
  return tenant(db.updateTable('blasts'), orgId)
    .set({ ...patch, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteBlast(db: Db, orgId: string, id: string): Promise<void> {
  await tenant(db.deleteFrom('blasts'), orgId).where('id', '=', id).execute();
}

/** Which of these contact ids exist in the organization. */
export async function existingContactIds(db: Db, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tenant(db.selectFrom('contacts'), orgId).select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The audience's contacts (explicit ids ∪ segment), each once, with their A/B bucket (0–99) and how many were duplicates. */
export async function audienceContacts(
  db: Db,
  orgId: string,
  blastId: string,
  ids: readonly string[],
  segment: RawBuilder<SqlBool> | null,
): Promise<{ contacts: Array<ContactRow & { bucket: number }>; duplicates: number }> {
  const base = () =>
    tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id')
      .selectAll('c')
      .select(sql<number>`mod(abs(hashtextextended(${blastId} || c.id::text, 0)), 100)::int`.as('bucket'));
  const explicit = ids.length ? await base().where('c.id', 'in', ids).execute() : [];
  const fromSegment = segment ? await base().where(segment).execute() : [];
  const byId = new Map<string, ContactRow & { bucket: number }>();
  let duplicates = 0;
  for (const c of [...explicit, ...fromSegment]) {
    if (byId.has(c.id)) duplicates += 1;
    else byId.set(c.id, c);
  }
  return { contacts: [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), duplicates };
}

/** Count of the audience now, before exclusions (union, without duplicates). */
export async function countAudience(db: Db, orgId: string, ids: readonly string[], segment: RawBuilder<SqlBool> | null): Promise<number> {
  const idList = ids.length ? sql.join(ids.map((id) => sql`${id}::uuid`)) : null;
  const explicitCond = idList ? sql<SqlBool>`c.id in (${idList})` : sql<SqlBool>`false`;
  const cond = segment ? sql<SqlBool>`(${explicitCond} or ${segment})` : explicitCond;
  const row = await tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id').select(sql<string>`count(*)`.as('n')).where(cond).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Materializes the recipients in one set-based INSERT … SELECT: the audience (explicit ids ∪ segment), each contact
 * once, with its batch number and its A/B variant chosen deterministically from a hash of (blast, contact) against
 * the cumulative weights. Idempotent (ON CONFLICT DO NOTHING). Answers the number of batches.
 */
export async function materializeRecipients(
  db: Db,
  orgId: string,
  blastId: string,
  ids: readonly string[],
  segment: RawBuilder<SqlBool> | null,
  variants: ReadonlyArray<{ key: string; upTo: number }> | null,
  batchSize: number,
): Promise<{ recipients: number; batches: number }> {
  const idList = ids.length ? sql.join(ids.map((id) => sql`${id}::uuid`)) : null;
  const explicitCond = idList ? sql<SqlBool>`c.id in (${idList})` : sql<SqlBool>`false`;
  const cond = segment ? sql<SqlBool>`(${explicitCond} or ${segment})` : explicitCond;
  const bucket = sql`mod(abs(hashtextextended(${blastId} || c.id::text, 0)), 100)`;
  const variantExpr = variants?.length
    ? sql`case ${sql.join(variants.map((v) => sql`when ${bucket} < ${v.upTo} then ${v.key}`), sql` `)} else ${variants[variants.length - 1]!.key} end`
    : sql`null`;
  const result = await sql<{ n: string; b: string }>`
    with inserted as (
      insert into blast_recipients (organization_id, blast_id, contact_id, batch, variant_key, status)
      select c.organization_id, ${blastId}::uuid, c.id, ((row_number() over (order by c.id)) - 1) / ${batchSize}, ${variantExpr}, 'pending'
      from contacts c
      where c.organization_id = ${orgId}::uuid and ${cond}
      on conflict (blast_id, contact_id) do nothing
      returning batch
    )
    select count(*) as n, coalesce(max(batch) + 1, 0) as b from inserted`.execute(db);
  const row = result.rows[0]!;
  return { recipients: Number(row.n), batches: Number(row.b) };
}

export async function pendingContactIds(db: Db, orgId: string, blastId: string, batch: number): Promise<string[]> {
  const rows = await tenant(db.selectFrom('blast_recipients'), orgId)
    .select('contact_id')
    .where('blast_id', '=', blastId)
    .where('batch', '=', batch)
    .where('status', '=', 'pending')
    .orderBy('contact_id')
    .execute();
  return rows.map((r) => r.contact_id);
}

/** Claims one pending recipient until the transaction ends; undefined when done already or claimed elsewhere. */
export function claimRecipient(db: Db, orgId: string, blastId: string, contactId: string) {
  return tenant(db.selectFrom('blast_recipients'), orgId)
    .select(['contact_id', 'variant_key'])
    .where('blast_id', '=', blastId)
    .where('contact_id', '=', contactId)
    .where('status', '=', 'pending')
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

export async function markRecipient(
  db: Db,
  orgId: string,
  blastId: string,
  contactId: string,
  to: { status: 'accepted'; messageId: string } | { status: 'skipped'; reason: string } | { status: 'cancelled' },
): Promise<boolean> {
  const res = await tenant(db.updateTable('blast_recipients'), orgId)
    .set({
      status: to.status,
      message_id: to.status === 'accepted' ? to.messageId : null,
      skip_reason: to.status === 'skipped' ? to.reason : null,
      updated_at: sql`now()`,
    })
    .where('blast_id', '=', blastId)
    .where('contact_id', '=', contactId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Cancel: every pending recipient becomes cancelled. */
export async function cancelPending(db: Db, orgId: string, blastId: string): Promise<number> {
  const res = await tenant(db.updateTable('blast_recipients'), orgId)
    .set({ status: 'cancelled', updated_at: sql`now()` })
    .where('blast_id', '=', blastId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Accepted recipients whose message was not handed to a carrier yet (queued or held). */
export async function unsentMessageIds(db: Db, orgId: string, blastId: string): Promise<string[]> {
  const rows = await tenant(db.selectFrom('blast_recipients as r'), orgId, 'r.organization_id')
    .innerJoin('messages as m', (j) => j.onRef('m.id', '=', 'r.message_id').onRef('m.organization_id', '=', 'r.organization_id'))
    .select('m.id')
    .where('r.blast_id', '=', blastId)
    .where('r.status', '=', 'accepted')
    .where('m.status', 'in', ['queued', 'held'])
    .execute();
  return rows.map((r) => r.id);
}

/** An accepted recipient whose message was withdrawn by a cancel. */
export async function markMessageCancelled(db: Db, orgId: string, blastId: string, messageId: string): Promise<void> {
  await tenant(db.updateTable('blast_recipients'), orgId)
    .set({ status: 'cancelled', updated_at: sql`now()` })
    .where('blast_id', '=', blastId)
    .where('message_id', '=', messageId)
    .execute();
}

export type RecipientCounts = { pending: number; accepted: number; skipped: number; cancelled: number; skippedByReason: Record<string, number> };

export async function recipientCounts(db: Db, orgId: string, blastId: string): Promise<RecipientCounts> {
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
  cost_units: number | null;
  variant_key: string | null;
  n: number;
  cost: number;
};

/** The blast's (not cancelled) messages grouped by status, channel and variant, with the cost billed. */
export async function messageGroups(db: Db, orgId: string, blastId: string): Promise<BlastMessageRow[]> {
  const rows = await tenant(db.selectFrom('blast_recipients as r'), orgId, 'r.organization_id')
    .innerJoin('messages as m', (j) => j.onRef('m.id', '=', 'r.message_id').onRef('m.organization_id', '=', 'r.organization_id'))
    .select([
      'm.status',
      'm.channel',
      'm.planned_channel',
      'm.fallback_used',
      'r.variant_key',
      sql<string>`count(*)`.as('n'),
      sql<string>`coalesce(sum(m.cost_units), 0)`.as('cost'),
    ])
    .where('r.blast_id', '=', blastId)
    .where('r.status', '=', 'accepted')
    .groupBy(['m.status', 'm.channel', 'm.planned_channel', 'm.fallback_used', 'r.variant_key'])
    .execute();
  return rows.map((r) => ({ ...r, cost_units: null, n: Number(r.n), cost: Number(r.cost) }));
}

/** Running blasts whose state the system may advance (SENDING, DISPATCHED), every organization (system handle). */
export function blastsInFlight(db: Db) {
  return db.selectFrom('blasts').select(['id', 'organization_id']).where('status', 'in', ['SENDING', 'DISPATCHED']).execute();
}

export async function contactPhone(db: Db, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.selectFrom('contacts'), orgId).select('phone').where('id', '=', id).executeTakeFirst();
  return row?.phone;
}

/**
 * Per variant (null without variants): recipients who replied (an inbound message) and who opted out within
 * `days` of their blast message.
 */
export async function engagement(db: Db, orgId: string, blastId: string, days: number): Promise<Array<{ variant_key: string | null; replies: number; opt_outs: number }>> {
  const result = await sql<{ variant_key: string | null; replies: string; opt_outs: string }>`
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
      )) as opt_outs
    from blast_recipients r
    join messages m on m.id = r.message_id and m.organization_id = r.organization_id
    where r.organization_id = ${orgId}::uuid and r.blast_id = ${blastId}::uuid and r.status = 'accepted'
    group by r.variant_key`.execute(db);
  return result.rows.map((r) => ({ variant_key: r.variant_key, replies: Number(r.replies), opt_outs: Number(r.opt_outs) }));
}
