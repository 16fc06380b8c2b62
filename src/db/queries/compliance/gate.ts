// The compliance gate in SQL, over a set of recipients at once: a direct send is the one-recipient case, a blast
// batch (or an estimate's whole audience) the many-recipient one. What needs TypeScript is computed before, once
// per distinct input, and joined in: content rules (RE2) once per distinct text, quiet hours once per distinct
// (time zone, number prefix, quiet period). The decision itself — which refusal wins, whether to hold — is here.
import { sql, type RawBuilder } from 'kysely';
import { tenant, type TenantDb } from '../../tenant.ts';
import { rowsOf } from '../../rows.ts';

export type GateContentRule = {
  id: string;
  name: string;
  pattern: string;
  pattern_type: string;
  action: string;
  case_sensitive: boolean;
};

/** The enabled content rules that apply to a message type, oldest first (a query: the send's one read embeds it). */
export function contentRulesQuery(db: TenantDb, orgId: string, messageType: string) {
  return tenant(db.selectFrom('content_rules'), orgId)
    .select(['id', 'name', 'pattern', 'pattern_type', 'action', 'case_sensitive'])
    .where('enabled', '=', true)
    .where(sql<boolean>`${messageType} = any(message_types)`)
    .orderBy('created_at')
    .orderBy('id');
}

export function contentRulesFor(db: TenantDb, orgId: string, messageType: string): Promise<GateContentRule[]> {
  return contentRulesQuery(db, orgId, messageType).execute();
}

/**
 * A quiet-hours group: recipients whose hold time is the same at any instant. The time zone is the contact's
 * explicit one, or ('' and) the first digits of the number, from which the zones are inferred (the longest key
 * of the number → zone mapping has NUMBER_PREFIX_DIGITS digits, so those digits decide it).
 */
export type QuietGroup = { tz: string; prefix: string; start: string; end: string };
export type QuietHold = QuietGroup & { heldUntil: Date };
export const NUMBER_PREFIX_DIGITS = 9;

/** A relation of recipients: rows of (contact_id uuid, key text), `key` naming the content each receives. */
export type Recipients = RawBuilder<unknown>;

/** Recipients given as arrays (a direct send: one of each). */
export function recipientsOf(contactIds: readonly string[], keys: readonly string[]): Recipients {
  return sql`select * from ${rowsOf('x', [
    { name: 'contact_id', type: 'uuid', values: contactIds },
    { name: 'key', type: 'text', values: keys },
  ])}`;
}

/**
 * The quiet-hours group of contact `c` as columns tz, prefix, qs, qe: the acceptance groups its recipients by them
 * (quietGroupsSql), and the dispatcher's claim returns them with each message (src/db/queries/messages/dispatch.ts).
 */
export const quietGroupColumns = (start: string, end: string) => sql`
  coalesce(c.time_zone, '') as tz,
  case when c.time_zone is null then left(ltrim(c.phone, '+'), ${NUMBER_PREFIX_DIGITS}) else '' end as prefix,
  coalesce(c.quiet_hours_start, ${start}) as qs,
  coalesce(c.quiet_hours_end, ${end}) as qe`;

/**
 * How recipients meet their contacts (`from … r, c`). 'probe': each one looked up by primary key, for sets up to a
 * blast batch — a plan that does not depend on statistics (a lateral subquery with `offset 0` is never flattened
 * into a join; planned as one, on statistics that had not seen the organization's contacts, a batch of 5,000 read
 * every contact of the table). 'join': the planner's choice, for a whole audience (an estimate), where a scan is right.
 */
export type ContactLookup = 'probe' | 'join';

export function recipientContacts(orgId: string, recipients: Recipients, lookup: ContactLookup): RawBuilder<unknown> {
  return lookup === 'probe'
    ? contactProbe(recipients, sql`${orgId}::uuid`)
    : sql`from (${recipients}) r join contacts c on c.organization_id = ${orgId}::uuid and c.id = r.contact_id`;
}

/** Each recipient's contact by primary key, if it is of organization `org` (a value, or a column of the recipients). */
function contactProbe(recipients: Recipients, org: RawBuilder<unknown>): RawBuilder<unknown> {
  // The organization is checked outside the probe: inside, an index on (organization_id, …) would compete with
  // the primary key, and on statistics that do not know the organization yet it wins (one row, they guess).
  return sql`from (${recipients}) r join lateral (select * from contacts c where c.id = r.contact_id offset 0) c on c.organization_id = ${org}`;
}

/** The distinct quiet-hours groups of the recipients (tz, prefix, qs, qe), as SQL (defaults: the TCPA window). */
export function quietGroupsSql(orgId: string, recipients: Recipients, defaults: { start: string; end: string }): RawBuilder<unknown> {
  return sql`select distinct ${quietGroupColumns(defaults.start, defaults.end)}
    ${recipientContacts(orgId, recipients, 'probe')}`;
}

/** The distinct quiet-hours groups of the recipients (defaults: the TCPA window). */
export async function quietGroupsOf(
  db: TenantDb,
  orgId: string,
  recipients: Recipients,
  defaults: { start: string; end: string },
): Promise<QuietGroup[]> {
  const rows = await sql<{ tz: string; prefix: string; qs: string; qe: string }>`${quietGroupsSql(orgId, recipients, defaults)}`.execute(
    db,
  );
  return rows.rows.map((r) => ({ tz: r.tz, prefix: r.prefix, start: r.qs, end: r.qe }));
}

export type GateInputs = {
  messageType: string;
  now: Date;
  /** Keyword replies (STOP/HELP confirmations) pass: no refusal, no hold. */
  skip: boolean;
  /** Content keys whose text a blocking content rule matched. */
  blockedKeys: readonly string[];
  /** Groups inside quiet hours now, with their hold time; null when quiet hours do not apply. */
  holds: readonly QuietHold[] | null;
  defaults: { start: string; end: string };
};

/**
 * The gate over `recipients`: one row per recipient found in the organization, with the contact's columns
 * (c.*), `key`, the facts (`dnc`, `opted_out`, `no_consent` — an active override lifts the last two —,
 * `content_blocked`), the refusal that wins (`block_code`: DNC_LISTED, OPTED_OUT, NO_CONSENT, CONTENT_BLOCKED in
 * that order; null when none) and `held_until` (quiet hours; null when outside them).
 */
export function gateRows(orgId: string, recipients: Recipients, g: GateInputs, lookup: ContactLookup = 'probe'): RawBuilder<unknown> {
  // No hold is sent as one that matches nothing (a null group): the statement keeps one shape and one row.
  const holds: readonly (QuietHold | null)[] = g.holds?.length ? g.holds : [null];
  const col = (f: (h: QuietHold) => unknown) => holds.map((h) => (h ? f(h) : null));
  // Facts as EXISTS probes on their unique indexes, not joins: the statement plans in a fraction of the time (it
  // is planned on every send) and runs the same index lookups per recipient. Each lateral ends in `offset 0`, so it
  // is run once per recipient: pulled up into the query, each probe was copied into every expression that reads
  // its column (`dnc` and `block_code`, `overridden` into `opted_out` and `no_consent`) and run again there — DNC,
  // opt-out and override lists read twice per recipient (bench part l: 6 of the acceptance statement's 74 shared
  // buffers per recipient).
  return sql`
    select r.key, c.*, f.dnc, f.opted_out, f.no_consent, f.content_blocked,
      case when ${g.skip} then null
           when f.dnc then 'DNC_LISTED' when f.opted_out then 'OPTED_OUT' when f.no_consent then 'NO_CONSENT'
           when f.content_blocked then 'CONTENT_BLOCKED' end as block_code,
      case when ${g.skip} then null else h.held_until end as held_until
    ${recipientContacts(orgId, recipients, lookup)}
    cross join lateral (select ${quietGroupColumns(g.defaults.start, g.defaults.end)}) k
    cross join lateral (select
      exists (select 1 from compliance_overrides o where o.organization_id = ${orgId}::uuid and o.contact_id = c.id and o.expires_at > ${g.now}::timestamptz) as overridden
      offset 0) ov
    cross join lateral (select
      exists (select 1 from dnc_entries d where d.organization_id = ${orgId}::uuid and d.phone = c.phone) as dnc,
      not ov.overridden and exists (select 1 from opt_outs o where o.organization_id = ${orgId}::uuid and o.phone = c.phone) as opted_out,
      ${g.messageType} = 'MARKETING' and c.consent_type <> 'MARKETING' and not ov.overridden as no_consent,
      r.key = any(${g.blockedKeys as string[]}::text[]) as content_blocked
      offset 0) f
    left join ${rowsOf('h', [
      { name: 'tz', type: 'text', values: col((h) => h.tz) },
      { name: 'prefix', type: 'text', values: col((h) => h.prefix) },
      { name: 'qs', type: 'text', values: col((h) => h.start) },
      { name: 'qe', type: 'text', values: col((h) => h.end) },
      { name: 'held_until', type: 'timestamptz', values: col((h) => h.heldUntil) },
    ])}
      on h.tz = k.tz and h.prefix = k.prefix and h.qs = k.qs and h.qe = k.qe`;
}

export type GateRow = {
  id: string;
  key: string;
  phone: string;
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: string;
  block_code: string | null;
  held_until: Date | null;
  dnc: boolean;
  opted_out: boolean;
  no_consent: boolean;
  content_blocked: boolean;
};

/** The gate's row for one contact (undefined when the contact is not the organization's). */
export async function gateRowOf(db: TenantDb, orgId: string, contactId: string, key: string, g: GateInputs): Promise<GateRow | undefined> {
  return (await sql<GateRow>`${gateRows(orgId, recipientsOf([contactId], [key]), g)}`.execute(db)).rows[0];
}
