// The keyword engine, called by the message lifecycle on every inbound message.
//
// What matches: the whole message is the keyword. The text is normalized the way carriers treat opt-out
// words, then compared with the keywords (stored upper case):
//   1. Unicode NFKC (full-width `ＳＴＯＰ` → `STOP`), invisible format characters (zero-width space, ZWJ …) removed;
//   2. leading and trailing whitespace, punctuation and symbols removed (`Stop.`, ` STOP! `, `"stop"`, `STOP 🛑`);
//   3. runs of inner whitespace become one space; upper case.
// So `stop`, ` STOP `, `Stop.` and `STOP!!` match STOP; `STOP please`, `S T O P` and `STOPP` do not.
//
// Effects (applyKeyword, one transaction): OPT_OUT marks the phone opted out and writes an OPT_OUT consent audit
// entry (source KEYWORD, with keyword, channel and message id); OPT_IN lifts the opt-out and writes an OPT_IN
// entry; HELP and AUTO_REPLY change nothing. Every action answers the reply text to send back (null: none).
//
// Opt-in keywords (START, YES, UNSTOP and the organization's OPT_IN rules) act only for a phone that is opted out:
// to anyone else "Yes" is an ordinary reply (a bot's button labelled Yes, a question), never "subscribed again".
// STOP, HELP and the other actions keep their precedence everywhere (actingKeyword).
import { inTransaction } from '../../db/database.ts';
import { clearOptOut, isOptedOut, recordConsentEvent, setOptedOut } from '../../db/queries/compliance/consent.ts';
import { effectiveKeywordRules, orgKeywordRules, type EffectiveKeywordRule, type KeywordAction } from './keyword-rules.ts';
import type { TenantDb } from '../../db/tenant.ts';

export function normalizeInboundText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '')
    .replace(/\s+/gu, ' ')
    .toUpperCase();
}

export type KeywordMatch = {
  rule: EffectiveKeywordRule;
  /** The keyword as matched (upper case). */
  keyword: string;
  action: KeywordAction;
  replyText: string | null;
};

/** The effective rule whose keyword the whole inbound text is, or null. */
export function matchKeyword(rules: Map<string, EffectiveKeywordRule>, text: string): KeywordMatch | null {
  const normalized = normalizeInboundText(text);
  if (normalized === '') return null;
  const rule = rules.get(normalized);
  return rule ? { rule, keyword: rule.keyword, action: rule.action, replyText: rule.replyText } : null;
}

export type InboundKeyword = {
  organizationId: string;
  /** The contact the inbound message came from (the phone is what opts out). */
  contact: { id: string; phone: string };
  channel: 'RCS' | 'SMS' | 'MMS' | 'CHATAPP';
  messageId: string | null;
};

export type KeywordOutcome = KeywordMatch & { consentEventId: string | null };

/** Performs the effects of a matched keyword in one transaction. */
export async function applyKeyword(db: TenantDb, inbound: InboundKeyword, match: KeywordMatch): Promise<KeywordOutcome> {
  if (match.action !== 'OPT_OUT' && match.action !== 'OPT_IN') return { ...match, consentEventId: null };
  const { organizationId: orgId, contact } = inbound;
  return inTransaction(db, async (tx) => {
    if (match.action === 'OPT_OUT') await setOptedOut(tx, orgId, contact.phone, { source: 'KEYWORD', keyword: match.keyword });
    else await clearOptOut(tx, orgId, contact.phone);
    const event = await recordConsentEvent(tx, {
      organization_id: orgId,
      contact_id: contact.id,
      phone: contact.phone,
      action: match.action,
      source: 'KEYWORD',
      keyword: match.keyword,
      channel: inbound.channel,
      message_id: inbound.messageId,
    });
    return { ...match, consentEventId: event.id };
  });
}

/**
 * The keyword `text` is for this phone, or null: the organization's rules matched, except an opt-in keyword from a
 * phone that is not opted out (an ordinary reply then). Everything that reads an inbound text asks this one question.
 */
export async function actingKeyword(db: TenantDb, organizationId: string, phone: string, text: string): Promise<KeywordMatch | null> {
  const match = matchKeyword(effectiveKeywordRules(await orgKeywordRules(db, organizationId)), text);
  if (match?.action === 'OPT_IN' && !(await isOptedOut(db, organizationId, phone))) return null;
  return match;
}

/** Loads the organization's rules, matches `text` and applies the effects; null when no keyword acts. */
export async function handleInboundKeyword(db: TenantDb, inbound: InboundKeyword & { text: string }): Promise<KeywordOutcome | null> {
  const match = await actingKeyword(db, inbound.organizationId, inbound.contact.phone, inbound.text);
  return match ? applyKeyword(db, inbound, match) : null;
}
