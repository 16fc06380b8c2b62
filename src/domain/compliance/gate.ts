// The compliance gate: every send path asks it whether a message may go to a contact now.
//
//   DNC_LISTED       block  the phone is on the organization's Do-Not-Contact list (nothing lifts it)
//   OPTED_OUT        block  the phone opted out, unless an override is active
//   NO_CONSENT       block  MARKETING without MARKETING consent, unless an override is active
//   CONTENT_BLOCKED  block  a blocking content rule for the message type matched the text
//   QUIET_HOURS      hold   MARKETING inside the recipient's quiet hours, in any of the time zones they may be in;
//                           held until the first instant outside the quiet period in all of them
//   CONTENT_FLAGGED  —      a flagging content rule matched: the message may go, the match is reported
//
// Block beats hold beats allow; every reason that applies is reported.
//
// One implementation for one recipient and for millions: the decision is SQL over a set of recipients
// (src/db/queries/compliance/gate.ts, joined into the send path's INSERT … SELECT), with what needs TypeScript
// computed before and joined in — content rules (RE2) once per distinct text, quiet hours once per distinct
// (time zone or number prefix, quiet period). evaluateCompliance is its one-recipient wrapper. Quiet hours are
// checked once more as a message is handed to the carrier (quietHoldsOfContacts, from dispatch.ts), with the same
// groups and holds. Overrides are checked against `now`, so an expired override stops applying at once. With no
// time zone at all (non-geographic numbers such as +800), quiet hours are checked in UTC.
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/compliance/gate.ts';
import { matchContentRules, type ContentRuleSpec } from './content-rules.ts';
import { quietHoursHoldUntil } from './quiet-hours.ts';
import { DEFAULT_QUIET_HOURS_END, DEFAULT_QUIET_HOURS_START, resolveTcpa } from './tcpa.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type MessageType = components['schemas']['MessageType'];

type ComplianceReasonCode = 'DNC_LISTED' | 'OPTED_OUT' | 'NO_CONSENT' | 'QUIET_HOURS' | 'CONTENT_BLOCKED' | 'CONTENT_FLAGGED';

type ComplianceReason = {
  code: ComplianceReasonCode;
  message: string;
  /** For CONTENT_BLOCKED / CONTENT_FLAGGED: the rule that matched. */
  rule?: { id: string; name: string; timedOut: boolean };
};

export type ComplianceDecision =
  | { decision: 'allow'; reasons: ComplianceReason[] }
  | { decision: 'block'; reasons: ComplianceReason[] }
  | { decision: 'hold'; until: Date; reasons: ComplianceReason[] };

type GateContact = {
  id: string;
  phone: string;
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: string;
};

export type ComplianceQuestion = {
  db: TenantDb;
  organizationId: string;
  contact: GateContact;
  messageType: MessageType;
  /** The text checked against content rules (empty when the message has none). */
  content: string;
  now: Date;
};

export type { Recipients } from '../../db/queries/compliance/gate.ts';
export { recipientsOf } from '../../db/queries/compliance/gate.ts';

/** The gate made ready for a set of recipients: the SQL inputs, and the texts of the reasons it may give. */
export type PreparedGate = q.GateInputs & {
  /** Content-rule reasons (CONTENT_BLOCKED / CONTENT_FLAGGED) per content key. */
  contentReasons: Map<string, ComplianceReason[]>;
  /** The zones of each quiet group now inside quiet hours, for the QUIET_HOURS reason. */
  quietZones: Map<string, string[]>;
};

const groupKey = (g: q.QuietGroup) => `${g.tz}|${g.prefix}|${g.start}|${g.end}`;

/** Content rules matched once per distinct text. */
function contentReasonsOf(rows: q.GateContentRule[], texts: ReadonlyMap<string, string>): Map<string, ComplianceReason[]> {
  const rules: ContentRuleSpec[] = rows.map((r) => ({
    id: r.id,
    name: r.name,
    pattern: r.pattern,
    patternType: r.pattern_type as ContentRuleSpec['patternType'],
    action: r.action as ContentRuleSpec['action'],
    caseSensitive: r.case_sensitive,
  }));
  const out = new Map<string, ComplianceReason[]>();
  const byText = new Map<string, ComplianceReason[]>();
  for (const [key, text] of texts) {
    let reasons = byText.get(text);
    if (!reasons) {
      reasons = (text && rules.length ? matchContentRules(rules, text) : []).map((m) => ({
        code: m.rule.action === 'block' ? ('CONTENT_BLOCKED' as const) : ('CONTENT_FLAGGED' as const),
        message: `Content rule "${m.rule.name}" ${m.timedOut ? 'could not be checked in time (counted as a match)' : 'matched'}.`,
        rule: { id: m.rule.id, name: m.rule.name, timedOut: m.timedOut },
      }));
      byText.set(text, reasons);
    }
    out.set(key, reasons);
  }
  return out;
}

/**
 * Hold times of the quiet groups that are inside quiet hours at `now`, each group's zones inferred once. The hold
 * depends on the zones and the period only, so it is computed once per distinct pair: the number prefixes of a
 * batch are hundreds of groups but a handful of zones (500 US numbers of 20 area codes, read and holds together:
 * 6–13 ms → 4–6 ms).
 */
async function quietHoldsOf(groups: q.QuietGroup[], now: Date): Promise<{ holds: q.QuietHold[]; zones: Map<string, string[]> }> {
  const holds: q.QuietHold[] = [];
  const zones = new Map<string, string[]>();
  const holdOf = new Map<string, Date | null>();
  for (const g of groups) {
    const tcpa = await resolveTcpa({
      phone: `+${g.prefix}`,
      time_zone: g.tz || null,
      quiet_hours_start: g.start,
      quiet_hours_end: g.end,
      consent_type: 'NONE',
    });
    const candidates = tcpa.candidateTimeZones.length ? tcpa.candidateTimeZones : ['UTC'];
    const key = `${candidates.join('&')}|${g.start}|${g.end}`;
    if (!holdOf.has(key)) holdOf.set(key, quietHoursHoldUntil(candidates, now, g.start, g.end));
    const heldUntil = holdOf.get(key)!;
    if (!heldUntil) continue;
    holds.push({ ...g, heldUntil });
    zones.set(groupKey(g), candidates);
  }
  return { holds, zones };
}

export type GateQuestion = {
  messageType: MessageType;
  now: Date;
  skip?: boolean;
  ignoreQuietHours?: boolean;
  texts: ReadonlyMap<string, string>;
};

/**
 * Whether quiet hours apply: to a MARKETING message past the gate (not a keyword reply), unless the question says
 * to leave them aside (a blast's estimate, which counts a held message as one that will be sent).
 */
export function quietHoursApply(p: { messageType: string | null; skip?: boolean; ignoreQuietHours?: boolean }): boolean {
  return !p.skip && p.messageType === 'MARKETING' && !p.ignoreQuietHours;
}

/** What the gate must read for a question: the content rules (when there is text), the quiet groups (MARKETING). */
export function gateNeeds(p: GateQuestion): { rules: boolean; quietGroups: boolean } {
  return { rules: !p.skip && [...p.texts.values()].some(Boolean), quietGroups: quietHoursApply(p) };
}

export const QUIET_DEFAULTS = { start: DEFAULT_QUIET_HOURS_START, end: DEFAULT_QUIET_HOURS_END };

/**
 * Until when each contact is inside its quiet hours at `now`, by contact id, from the contacts' quiet groups
 * (q.quietGroupColumns, which the dispatcher's claim returns with each message); a contact outside them has no entry.
 * The acceptance's hold (quietHoldsOf), for messages about to be handed to a carrier: each distinct group's hold
 * computed once.
 */
export async function quietHoldsOfContacts(
  rows: ReadonlyArray<q.QuietGroup & { contactId: string }>,
  now: Date,
): Promise<Map<string, Date>> {
  const groups = new Map(rows.map(({ tz, prefix, start, end }) => [groupKey({ tz, prefix, start, end }), { tz, prefix, start, end }]));
  const { holds } = await quietHoldsOf([...groups.values()], now);
  const until = new Map(holds.map((h) => [groupKey(h), h.heldUntil]));
  const byContact = new Map<string, Date>();
  for (const r of rows) {
    const at = until.get(groupKey(r));
    if (at) byContact.set(r.contactId, at);
  }
  return byContact;
}

/** The gate made ready from what it read (gateNeeds): content rules and the recipients' quiet groups. */
export async function gateOf(p: GateQuestion, rules: q.GateContentRule[], groups: q.QuietGroup[] | null): Promise<PreparedGate> {
  const base = { messageType: p.messageType, now: p.now, defaults: QUIET_DEFAULTS };
  if (p.skip) return { ...base, skip: true, blockedKeys: [], holds: null, contentReasons: new Map(), quietZones: new Map() };
  const contentReasons = contentReasonsOf(rules, p.texts);
  const blockedKeys = [...contentReasons].filter(([, rs]) => rs.some((r) => r.code === 'CONTENT_BLOCKED')).map(([k]) => k);
  const quiet = groups ? await quietHoldsOf(groups, p.now) : null;
  return { ...base, skip: false, blockedKeys, holds: quiet?.holds ?? null, contentReasons, quietZones: quiet?.zones ?? new Map() };
}

/**
 * Prepares the gate for `recipients` receiving the content keyed in `texts` (key → text checked by content
 * rules): one read of the content rules, one of the recipients' distinct quiet groups (MARKETING only).
 */
export async function prepareGate(
  db: TenantDb,
  organizationId: string,
  p: GateQuestion & { recipients: q.Recipients },
): Promise<PreparedGate> {
  const needs = gateNeeds(p);
  const rules = needs.rules ? await q.contentRulesFor(db, organizationId, p.messageType) : [];
  const groups = needs.quietGroups ? await q.quietGroupsOf(db, organizationId, p.recipients, QUIET_DEFAULTS) : null;
  return gateOf(p, rules, groups);
}

const FIXED_REASONS = {
  DNC_LISTED: 'The phone is on the Do-Not-Contact list.',
  OPTED_OUT: 'The recipient opted out.',
  NO_CONSENT:
    'MARKETING messages (the default messageType) need the recipient’s marketing consent: record it with PATCH /v1/contacts/{id}/tcpa {"consentType":"MARKETING"}, or send a TRANSACTIONAL or SERVICE message.',
} as const;

/** The text of a refusal (the gate row's `block_code`) for content `key`. */
export function refusalMessage(gate: PreparedGate, key: string, code: string): string {
  if (code in FIXED_REASONS) return FIXED_REASONS[code as keyof typeof FIXED_REASONS];
  return gate.contentReasons.get(key)?.find((r) => r.code === code)?.message ?? code;
}

/** Every reason that applies to one recipient's gate row, in the documented order. */
function reasonsOf(gate: PreparedGate, row: q.GateRow): ComplianceReason[] {
  const reasons: ComplianceReason[] = [];
  if (row.dnc) reasons.push({ code: 'DNC_LISTED', message: FIXED_REASONS.DNC_LISTED });
  if (row.opted_out) reasons.push({ code: 'OPTED_OUT', message: FIXED_REASONS.OPTED_OUT });
  if (row.no_consent) reasons.push({ code: 'NO_CONSENT', message: FIXED_REASONS.NO_CONSENT });
  reasons.push(...(gate.contentReasons.get(row.key) ?? []));
  if (row.held_until) {
    const start = row.quiet_hours_start ?? DEFAULT_QUIET_HOURS_START;
    const end = row.quiet_hours_end ?? DEFAULT_QUIET_HOURS_END;
    const prefix = row.time_zone ? '' : row.phone.replace(/^\+/, '').slice(0, q.NUMBER_PREFIX_DIGITS);
    const zones = gate.quietZones.get(groupKey({ tz: row.time_zone ?? '', prefix, start, end })) ?? [];
    reasons.push({
      code: 'QUIET_HOURS',
      message: `Quiet hours (${start}–${end} in ${zones.length === 1 ? zones[0] : `${zones.length} time zones`}) until ${row.held_until.toISOString()}.`,
    });
  }
  return reasons;
}

/** The decision for one recipient's gate row: block beats hold beats allow. */
function decisionOf(gate: PreparedGate, row: q.GateRow): ComplianceDecision {
  const reasons = reasonsOf(gate, row);
  if (row.block_code) return { decision: 'block', reasons };
  if (row.held_until) return { decision: 'hold', until: row.held_until, reasons };
  return { decision: 'allow', reasons };
}

/** The gate for one stored contact: the set-based gate over a set of one. */
export async function evaluateCompliance(question: ComplianceQuestion): Promise<ComplianceDecision> {
  const { db, organizationId, contact, messageType, now } = question;
  const recipients = q.recipientsOf([contact.id], ['']);
  const gate = await prepareGate(db, organizationId, { messageType, now, texts: new Map([['', question.content]]), recipients });
  const row = await q.gateRowOf(db, organizationId, contact.id, '', gate);
  if (!row) throw new Error(`contact ${contact.id} is not of organization ${organizationId}`);
  return decisionOf(gate, row);
}
