// SQL of the dispatch worker. It claims and records batches of messages of any organization with the system
// handle (AppContext.db); per-message changes still name the message's organization.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { rowsOf } from '../../rows.ts';
import { tenant } from '../../tenant.ts';
import type { MessageRow } from './messages.ts';
import type { AssetRow } from '../assets/assets.ts';
import { newConversationId } from '../conversations/conversations.ts';
import { quietGroupColumns } from '../compliance/gate.ts';

/**
 * A claimed message, with the recipient's known RCS capability (null: unknown) and quiet-hours group (tz, prefix,
 * qs, qe: quietGroupColumns), read from the contact by the claim itself.
 */
export type ClaimedMessage = MessageRow & { contact_rcs_capable: boolean | null; tz: string; prefix: string; qs: string; qe: string };

/** The messages of one blast batch; `senderId`, the blast's sender, is absent from wake jobs queued before it was. */
export type BlastBatchScope = { organizationId: string; blastId: string; batch: number; senderId?: string };

/** Which outbox rows a wake job looks at: messages by id, or the messages of one blast batch. */
export type DispatchScope = { messageIds: string[] } | BlastBatchScope;

function scopeOf(scope: DispatchScope) {
  if ('messageIds' in scope) return sql`m.id = any(${scope.messageIds}::uuid[])`;
  return sql`m.id in (select r.message_id from blast_recipients r
    where r.organization_id = ${scope.organizationId}::uuid and r.blast_id = ${scope.blastId}::uuid and r.batch = ${scope.batch} and r.message_id is not null)`;
}

// System handle: the outbox dispatcher works on the messages of every organization.
/**
 * Claims up to `limit` due messages of the scope (queued/held/sending whose `dispatch_at` has come: a `sending`
 * one is due again when its claim's lease ran out, i.e. its worker died) → sending, one more attempt, leased for
 * `leaseSeconds`. Rows another worker holds are skipped (SKIP LOCKED), never waited for. Each comes with what
 * dispatch asks of its recipient (the contact is joined anyway): its RCS capability and its quiet-hours group
 * (`quietDefaults`: the TCPA window), so quiet hours are checked again without a second read of the contacts.
 * The claimed rows are updated where the lock found them (their ctid: the row version this statement locked, which
 * no other can change before the update), not found again by primary key: 3 shared buffers fewer per message.
 * A row another transaction updated after this statement's snapshot is locked in its new version, which the
 * update cannot see: it stays as it is, unclaimed, and is due again (nextDue) like a row another worker holds.
 */
export async function claimDue(
  db: Db,
  scope: DispatchScope,
  limit: number,
  leaseSeconds: number,
  quietDefaults: { start: string; end: string },
): Promise<ClaimedMessage[]> {
  return (
    await sql<ClaimedMessage>`
    with due as (
      select m.ctid from messages m
      where ${scopeOf(scope)} and m.dispatch_at <= now() and m.status in ('queued', 'held', 'sending')
      order by m.dispatch_at limit ${limit}
      for update skip locked
    )
    update messages m set status = 'sending', attempts = m.attempts + 1, dispatch_at = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
    from due, contacts c
    where m.ctid = due.ctid and c.id = m.contact_id
    returning m.*, c.rcs_capable as contact_rcs_capable, ${quietGroupColumns(quietDefaults.start, quietDefaults.end)}`.execute(db)
  ).rows;
}

// System handle: the outbox dispatcher works on the messages of every organization.
/**
 * When the scope's next message falls due (held, backing off, rate-limited, or leased to a worker); null when none.
 * With the ids of the messages left when there are at most `few` of them (else null), read in the same pass.
 */
export async function nextDue(db: Db, scope: DispatchScope, few = 0): Promise<{ at: Date; ids: string[] | null } | null> {
  const row = (
    await sql<{ at: Date | null; n: number; ids: string[] | null }>`
    select min(m.dispatch_at) as at, count(*)::int as n, (array_agg(m.id))[1:${few}::int] as ids from messages m
    where ${scopeOf(scope)} and m.dispatch_at is not null and m.status in ('queued', 'held', 'sending')`.execute(db)
  ).rows[0];
  if (!row?.at) return null;
  return { at: row.at, ids: row.n <= few ? (row.ids ?? []) : null };
}

export type AcceptedByProvider = {
  organizationId: string;
  id: string;
  providerMessageId: string;
  channel: string;
  segments: number;
  encoding: string | null;
  costUnits: number;
};

// System handle: the outbox dispatcher works on the messages of every organization.
/**
 * Records a batch of provider acceptances in one statement. A message no longer `sending` was moved on by a receipt
 * that came before this record (the carrier answers fast): it keeps its status, and a fallback that receipt queued
 * keeps its plan (channel, segments, encoding, cost), which this send on the first channel must not overwrite. A
 * message sent by the fallback this dispatch chose already carries that plan (planFallbacks, before the send), and
 * no receipt plans a fallback of a message sent by its fallback.
 */
export async function recordAccepted(db: Db, provider: string, accepted: AcceptedByProvider[]): Promise<MessageRow[]> {
  if (accepted.length === 0) return [];
  const col = (f: (a: AcceptedByProvider) => unknown) => accepted.map(f);
  return (
    await sql<MessageRow>`
    update messages m set
      status = case when m.status = 'sending' then 'sent' else m.status end,
      provider = ${provider},
      provider_message_id = v.provider_message_id,
      planned_channel = case when m.status = 'sending' then v.channel else m.planned_channel end,
      segments = case when m.status = 'sending' then v.segments else m.segments end,
      encoding = case when m.status = 'sending' then v.encoding else m.encoding end,
      cost_units = case when m.status = 'sending' then v.cost_units else m.cost_units end,
      sent_at = coalesce(m.sent_at, now()),
      -- Off the outbox, unless a receipt moved it on meanwhile (an RCS failure queued its fallback: still due).
      dispatch_at = case when m.status = 'sending' then null else m.dispatch_at end,
      updated_at = now()
    from ${rowsOf('v', [
      { name: 'organization_id', type: 'uuid', values: col((a) => a.organizationId) },
      { name: 'id', type: 'uuid', values: col((a) => a.id) },
      { name: 'provider_message_id', type: 'text', values: col((a) => a.providerMessageId) },
      { name: 'channel', type: 'text', values: col((a) => a.channel) },
      { name: 'segments', type: 'int', values: col((a) => a.segments) },
      { name: 'encoding', type: 'text', values: col((a) => a.encoding) },
      { name: 'cost_units', type: 'int', values: col((a) => a.costUnits) },
    ])}
    where m.organization_id = v.organization_id and m.id = v.id
    returning m.*`.execute(db)
  ).rows;
}

// System handle: the outbox dispatcher works on the messages of every organization.
/** Puts claimed messages back to `queued`, due again in `afterSeconds`; an attempt that never reached the provider is given back. */
export async function requeueMessages(
  db: Db,
  messages: ReadonlyArray<{ organizationId: string; id: string }>,
  countsAsAttempt: boolean,
  afterSeconds: number,
): Promise<void> {
  if (messages.length === 0) return;
  await sql`
    update messages m set status = 'queued', attempts = m.attempts ${countsAsAttempt ? sql`` : sql`- 1`},
      dispatch_at = now() + make_interval(secs => ${afterSeconds}), updated_at = now()
    from ${rowsOf('v', [
      { name: 'organization_id', type: 'uuid', values: messages.map((m) => m.organizationId) },
      { name: 'id', type: 'uuid', values: messages.map((m) => m.id) },
    ])}
    where m.organization_id = v.organization_id and m.id = v.id and m.status = 'sending'`.execute(db);
}

/** A claimed message to hold until `until` (the end of its recipient's quiet hours). */
export type QuietHold = { organizationId: string; id: string; until: Date };

// System handle: the outbox dispatcher works on the messages of every organization.
/**
 * Puts claimed messages back to `held` until their recipient's quiet hours end, in one statement: due again then
 * (`dispatch_at`), with the claim's attempt given back (it never reached the provider). A message no longer
 * `sending` (failed by an opt-out, revoked meanwhile) is left as it is. Answers the held rows.
 */
export async function holdMessages(db: Db, holds: readonly QuietHold[]): Promise<MessageRow[]> {
  if (holds.length === 0) return [];
  return (
    await sql<MessageRow>`
    update messages m set status = 'held', held_until = v.until, dispatch_at = v.until, attempts = m.attempts - 1, updated_at = now()
    from ${rowsOf('v', [
      { name: 'organization_id', type: 'uuid', values: holds.map((h) => h.organizationId) },
      { name: 'id', type: 'uuid', values: holds.map((h) => h.id) },
      { name: 'until', type: 'timestamptz', values: holds.map((h) => h.until) },
    ])}
    where m.organization_id = v.organization_id and m.id = v.id and m.status = 'sending'
    returning m.*`.execute(db)
  ).rows;
}

// System handle: the outbox dispatcher works on the messages of every organization.
/** Fails a message not yet final; undefined when it already was. `dropFallback` clears the planned fallback. */
export function failMessage(
  db: Db,
  orgId: string,
  id: string,
  code: string,
  text: string,
  opts: { dropFallback: boolean },
): Promise<MessageRow | undefined> {
  return tenant(db.updateTable('messages'), orgId)
    .set({
      status: 'failed',
      error_code: code,
      error_message: text,
      failed_at: sql`now()`,
      dispatch_at: null,
      updated_at: sql`now()`,
      ...(opts.dropFallback ? { fallback_used: false, fallback_reason: null } : {}),
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'held', 'sending', 'sent'])
    .returningAll()
    .executeTakeFirst();
}

// System handle: the outbox dispatcher works on the messages of every organization.
/** A message found without RCS at dispatch: it goes by its SMS/MMS fallback `channel` instead, for `reason`. */
export type FallbackPlan = { organizationId: string; id: string; channel: string; reason: string };

// System handle: the outbox dispatcher works on the messages of every organization.
/**
 * Plans the fallback chosen at dispatch of claimed messages, in one statement, before they are handed to the
 * provider (a receipt may come back before their acceptance is recorded: it must find the plan).
 */
export async function planFallbacks(db: Db, rows: readonly FallbackPlan[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`update messages m set planned_channel = v.channel, fallback_used = true, fallback_reason = v.reason
    from unnest(${rows.map((r) => r.organizationId)}::uuid[], ${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.channel)}::text[], ${rows.map((r) => r.reason)}::text[])
      as v(organization_id, id, channel, reason)
    where m.organization_id = v.organization_id and m.id = v.id`.execute(db);
}

/** A claimed message moving to the sender that carries its fallback (messages.fallback_sender_id). */
export type FallbackMove = { organizationId: string; id: string; senderId: string; channel: string; reason: string; preview: string };

// System handle: the outbox dispatcher works on the messages of every organization; each row names its own.
/**
 * Moves claimed messages to the sender that carries their SMS/MMS fallback, in one statement, as acceptance plans a
 * fallback known then: the message's sender becomes that sender, its conversation the contact's conversation with
 * it (opened with the source of the one it leaves when there is none, as acceptance opens it, and showing the
 * message as its latest), its planned channel the fallback with its reason; it is queued again, due now, its claim's
 * attempt given back (it reached no provider), to go through that sender's rate, validity and quiet hours. A
 * message no longer `sending` (failed or revoked meanwhile) stays as it is. Answers the moved rows.
 */
export async function moveToFallbackSender(db: Db, moves: readonly FallbackMove[]): Promise<MessageRow[]> {
  if (moves.length === 0) return [];
  const col = <T>(f: (m: FallbackMove) => T) => moves.map(f);
  const newId = newConversationId(sql`m.organization_id`, sql`m.contact_id`, sql`m.sender_id`);
  return (
    await sql<MessageRow>`
    with m as materialized (
      select x.id, x.organization_id, x.contact_id, x.conversation_id, v.sender_id, v.channel, v.reason, v.preview
      from ${rowsOf('v', [
        { name: 'organization_id', type: 'uuid', values: col((m) => m.organizationId) },
        { name: 'id', type: 'uuid', values: col((m) => m.id) },
        { name: 'sender_id', type: 'uuid', values: col((m) => m.senderId) },
        { name: 'channel', type: 'text', values: col((m) => m.channel) },
        { name: 'reason', type: 'text', values: col((m) => m.reason) },
        { name: 'preview', type: 'text', values: col((m) => m.preview) },
      ])}
      join messages x on x.organization_id = v.organization_id and x.id = v.id
      where x.status = 'sending'
    ),
    conv as (
      insert into conversations as cv (id, organization_id, contact_id, sender_id, source_type, source_blast_id, source_bot_id, source_campaign_id,
        handled_by, bot_id, first_message_id, last_message_at, last_outbound_at, last_message_preview, status)
      select distinct on (m.organization_id, m.contact_id, m.sender_id) ${newId}, m.organization_id, m.contact_id, m.sender_id,
        o.source_type, o.source_blast_id, o.source_bot_id, o.source_campaign_id, o.handled_by, o.bot_id, m.id, now(), now(), m.preview, 'open'
      from m join conversations o on o.organization_id = m.organization_id and o.id = m.conversation_id
      order by m.organization_id, m.contact_id, m.sender_id, m.id desc
      on conflict (organization_id, contact_id, sender_id) do update set
        last_message_at = excluded.last_message_at, last_outbound_at = excluded.last_outbound_at,
        last_message_preview = excluded.last_message_preview, first_message_id = coalesce(cv.first_message_id, excluded.first_message_id),
        status = 'open', updated_at = now()
      returning cv.id, cv.organization_id, cv.contact_id, cv.sender_id
    )
    update messages x set sender_id = m.sender_id, conversation_id = conv.id, planned_channel = m.channel, fallback_used = true,
      fallback_reason = m.reason, fallback_sender_id = null, status = 'queued', attempts = x.attempts - 1, dispatch_at = now(), updated_at = now()
    from m join conv on conv.organization_id = m.organization_id and conv.contact_id = m.contact_id and conv.sender_id = m.sender_id
    where x.organization_id = m.organization_id and x.id = m.id
    returning x.*`.execute(db)
  ).rows;
}

// System handle: a dispatch batch holds messages of any organization; each asset is matched with its message's.
/** The assets MMS messages of a batch carry, by `(organizationId, assetId)` pairs: dispatch weighs their media. */
export function mediaAssetsOfBatch(db: Db, refs: ReadonlyArray<{ organizationId: string; assetId: string }>): Promise<AssetRow[]> {
  if (refs.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('assets')
    .selectAll()
    .where((eb) => eb.or(refs.map((r) => eb.and([eb('organization_id', '=', r.organizationId), eb('id', '=', r.assetId)]))))
    .execute();
}
