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
// Block beats hold beats allow; every reason that applies is reported. Overrides are checked against `now`, so
// an expired override stops applying at once. With no time zone at all (non-geographic numbers such as +800),
// quiet hours are checked in UTC.
import type { Db } from '../../db/database.ts';
import { loadGateFacts } from '../../db/queries/compliance/gate.ts';
import { matchContentRules, type ContentRuleSpec } from './content-rules.ts';
import { quietHoursHoldUntil } from './quiet-hours.ts';
import { resolveTcpa } from './tcpa.ts';

export type MessageType = 'MARKETING' | 'TRANSACTIONAL' | 'SERVICE';

export type ComplianceReasonCode = 'DNC_LISTED' | 'OPTED_OUT' | 'NO_CONSENT' | 'QUIET_HOURS' | 'CONTENT_BLOCKED' | 'CONTENT_FLAGGED';

export type ComplianceReason = {
  code: ComplianceReasonCode;
  message: string;
  /** For CONTENT_BLOCKED / CONTENT_FLAGGED: the rule that matched. */
  rule?: { id: string; name: string; timedOut: boolean };
};

export type ComplianceDecision =
  | { decision: 'allow'; reasons: ComplianceReason[] }
  | { decision: 'block'; reasons: ComplianceReason[] }
  | { decision: 'hold'; until: Date; reasons: ComplianceReason[] };

export type GateContact = {
  id: string;
  phone: string;
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: string;
};

export type ComplianceQuestion = {
  db: Db;
  organizationId: string;
  contact: GateContact;
  messageType: MessageType;
  /** The text checked against content rules (empty when the message has none). */
  content: string;
  now: Date;
};

const BLOCKING: ReadonlySet<ComplianceReasonCode> = new Set(['DNC_LISTED', 'OPTED_OUT', 'NO_CONSENT', 'CONTENT_BLOCKED']);

export async function evaluateCompliance(q: ComplianceQuestion): Promise<ComplianceDecision> {
  const { contact, messageType, now } = q;
  const facts = await loadGateFacts(q.db, q.organizationId, contact, messageType, now);
  const overridden = facts.overrideUntil !== null && facts.overrideUntil.getTime() > now.getTime();
  const reasons: ComplianceReason[] = [];

  if (facts.dncListed) reasons.push({ code: 'DNC_LISTED', message: 'The phone is on the Do-Not-Contact list.' });
  if (facts.optedOut && !overridden) reasons.push({ code: 'OPTED_OUT', message: 'The recipient opted out.' });
  if (messageType === 'MARKETING' && contact.consent_type !== 'MARKETING' && !overridden) {
    reasons.push({
      code: 'NO_CONSENT',
      message:
        'MARKETING messages (the default messageType) need the recipient’s marketing consent: record it with PATCH /v1/contacts/{id}/tcpa {"consentType":"MARKETING"}, or send a TRANSACTIONAL or SERVICE message.',
    });
  }

  const rules: ContentRuleSpec[] = facts.contentRules.map((r) => ({
    id: r.id,
    name: r.name,
    pattern: r.pattern,
    patternType: r.pattern_type as ContentRuleSpec['patternType'],
    action: r.action as ContentRuleSpec['action'],
    caseSensitive: r.case_sensitive,
  }));
  for (const m of q.content ? matchContentRules(rules, q.content) : []) {
    const blocked = m.rule.action === 'block';
    const how = m.timedOut ? 'could not be checked in time (counted as a match)' : 'matched';
    reasons.push({
      code: blocked ? 'CONTENT_BLOCKED' : 'CONTENT_FLAGGED',
      message: `Content rule "${m.rule.name}" ${how}.`,
      rule: { id: m.rule.id, name: m.rule.name, timedOut: m.timedOut },
    });
  }

  let holdUntil: Date | null = null;
  if (messageType === 'MARKETING') {
    const tcpa = await resolveTcpa(contact);
    const zones = tcpa.candidateTimeZones.length ? tcpa.candidateTimeZones : ['UTC'];
    holdUntil = quietHoursHoldUntil(zones, now, tcpa.quietHoursStart, tcpa.quietHoursEnd);
    if (holdUntil) {
      reasons.push({
        code: 'QUIET_HOURS',
        message: `Quiet hours (${tcpa.quietHoursStart}–${tcpa.quietHoursEnd} in ${zones.length === 1 ? zones[0] : `${zones.length} time zones`}) until ${holdUntil.toISOString()}.`,
      });
    }
  }

  if (reasons.some((r) => BLOCKING.has(r.code))) return { decision: 'block', reasons };
  if (holdUntil) return { decision: 'hold', until: holdUntil, reasons };
  return { decision: 'allow', reasons };
}
