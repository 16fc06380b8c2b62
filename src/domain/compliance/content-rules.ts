// Content rules: how a rule's pattern is checked when saved, and matching an outbound text against the rules.
//
// - `keyword`: the phrase matches as whole words: not preceded or followed by a letter, digit or `_` (Unicode
//   aware, so `café` is a word), inner whitespace of the phrase matches any run of whitespace. The matcher is
//   built here from the escaped phrase (never a user regex), so V8's engine runs it in linear time.
// - `regex`: the pattern as written, run by RE2 (regex-safety.ts) with the `i` flag unless case-sensitive:
//   matching time is linear in the text whatever the pattern. RE2 has no backreferences or lookaround, and
//   patterns that expand too much are refused too; both are refused when saved. All regexes of one message
//   share a time budget (REGEX_TOTAL_BUDGET_MS). A regex rule that was not run — the budget was spent, or its
//   stored pattern was saved before these rules — counts as matched: the gate fails closed (a blocking rule
//   blocks, a flagging rule flags) and says so.
//
// The rules of an organization: at most MAX_CONTENT_RULES; a pattern is checked when saved (400 UNSAFE_REGEX
// naming body.pattern), and again when a change touches the pattern or its type (with the rule locked, so two
// concurrent changes cannot combine into an unchecked pattern).
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import type { Page } from '../../db/paging.ts';
import * as q from '../../db/queries/compliance/content-rules.ts';
import { found, invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { assertBelowLimit } from './limits.ts';
import { checkRegex, testRegexes, type RegexCheck, type RegexSpec } from './regex-safety.ts';

type MessageType = components['schemas']['MessageType'];

export type ContentRulePatternType = 'keyword' | 'regex';
type ContentRuleAction = 'block' | 'flag';

export type ContentRuleSpec = {
  id: string;
  name: string;
  pattern: string;
  patternType: ContentRulePatternType;
  action: ContentRuleAction;
  caseSensitive: boolean;
};

/** `timedOut`: the rule was not checked (time budget spent, or a stored pattern RE2 cannot run); it counts as matched. */
export type ContentRuleMatch = { rule: ContentRuleSpec; timedOut: boolean };

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Whether a pattern may be saved; `ok: false` carries the reason for the 400. */
export function checkContentPattern(pattern: string, patternType: ContentRulePatternType): RegexCheck {
  if (patternType === 'keyword') {
    return pattern.trim() === '' ? { ok: false, reason: 'a keyword pattern must contain a word' } : { ok: true };
  }
  return checkRegex(pattern);
}

// Keyword matchers are pure functions of (flags, phrase): cached per process, bounded.
const keywordMatchers = new Map<string, RegExp>();
const MAX_KEYWORD_MATCHERS = 2000;

function keywordMatcher(rule: Pick<ContentRuleSpec, 'pattern' | 'caseSensitive'>): RegExp {
  const key = `${rule.caseSensitive ? 's' : 'i'}:${rule.pattern}`;
  let re = keywordMatchers.get(key);
  if (!re) {
    const phrase = rule.pattern.trim().split(/\s+/).map(escapeRegExp).join('\\s+');
    re = new RegExp(`(?<![\\p{L}\\p{N}_])${phrase}(?![\\p{L}\\p{N}_])`, rule.caseSensitive ? 'u' : 'iu');
    if (keywordMatchers.size >= MAX_KEYWORD_MATCHERS) keywordMatchers.clear();
    keywordMatchers.set(key, re);
  }
  return re;
}

const regexSpec = (rule: ContentRuleSpec): RegexSpec => ({ pattern: rule.pattern, flags: rule.caseSensitive ? 'u' : 'iu' });

/** The rules that match `text`, in the order of `rules`. */
export function matchContentRules(rules: ContentRuleSpec[], text: string): ContentRuleMatch[] {
  const regexRules = rules.filter((r) => r.patternType === 'regex');
  const regexResults = new Map<ContentRuleSpec, boolean | undefined>();
  testRegexes(regexRules.map(regexSpec), text).forEach((r, k) => regexResults.set(regexRules[k]!, r));
  const matches: ContentRuleMatch[] = [];
  for (const rule of rules) {
    if (rule.patternType === 'keyword') {
      if (keywordMatcher(rule).test(text)) matches.push({ rule, timedOut: false });
      continue;
    }
    const r = regexResults.get(rule);
    if (r === undefined) matches.push({ rule, timedOut: true });
    else if (r) matches.push({ rule, timedOut: false });
  }
  return matches;
}

// ---------------------------------------------------------------------------------------------------------------
// The organization's rules
// ---------------------------------------------------------------------------------------------------------------

export type ContentRuleRow = q.ContentRuleRow;

const MAX_CONTENT_RULES = 200;

/** A rule applies to these message types unless it names some. */
const ALL_MESSAGE_TYPES: readonly MessageType[] = ['MARKETING', 'TRANSACTIONAL', 'SERVICE'];

export type ContentRuleInput = {
  name: string;
  pattern: string;
  patternType: ContentRulePatternType;
  action: ContentRuleAction;
  caseSensitive?: boolean;
  messageTypes?: MessageType[];
  enabled?: boolean;
};

export type ContentRuleFilter = { search?: string; action?: ContentRuleAction; patternType?: ContentRulePatternType };

/** Refuses an unsafe or invalid pattern with 400 UNSAFE_REGEX naming body.pattern. */
function assertSafePattern(pattern: string, patternType: ContentRulePatternType): void {
  const check = checkContentPattern(pattern, patternType);
  if (!check.ok) throw invalidField('body.pattern', check.reason, 'UNSAFE_REGEX');
}

/** A page of the organization's rules, newest first, filtered. */
export function listContentRules(
  tenant: Tenant,
  filter: ContentRuleFilter,
  page: { limit: number; offset: number },
): Promise<Page<ContentRuleRow>> {
  return q.listContentRules(tenant.db, tenant.organizationId, filter, page);
}

/** 400 UNSAFE_REGEX for a pattern that cannot be saved, 422 UNPROCESSABLE beyond MAX_CONTENT_RULES. */
export function createContentRule(tenant: Tenant, body: ContentRuleInput): Promise<ContentRuleRow> {
  assertSafePattern(body.pattern, body.patternType);
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    await q.lockContentRules(tx, orgId);
    assertBelowLimit(await q.countContentRules(tx, orgId), MAX_CONTENT_RULES, 'content rules');
    return q.insertContentRule(tx, orgId, {
      name: body.name,
      pattern: body.pattern,
      pattern_type: body.patternType,
      action: body.action,
      case_sensitive: body.caseSensitive ?? false,
      message_types: [...(body.messageTypes ?? ALL_MESSAGE_TYPES)],
      enabled: body.enabled ?? true,
    });
  });
}

/** Changes the given fields; 404 unknown in the organization, 400 UNSAFE_REGEX when the resulting pattern cannot be saved. */
export function updateContentRule(tenant: Tenant, id: string, body: Partial<ContentRuleInput>): Promise<ContentRuleRow> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getContentRule(tx, orgId, id, { forUpdate: true }), 'Content rule');
    const pattern = body.pattern ?? current.pattern;
    const patternType = body.patternType ?? (current.pattern_type as ContentRulePatternType);
    if (pattern !== current.pattern || patternType !== current.pattern_type) assertSafePattern(pattern, patternType);
    const change: Partial<q.ContentRuleFields> = {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.pattern !== undefined && { pattern: body.pattern }),
      ...(body.patternType !== undefined && { pattern_type: body.patternType }),
      ...(body.action !== undefined && { action: body.action }),
      ...(body.caseSensitive !== undefined && { case_sensitive: body.caseSensitive }),
      ...(body.messageTypes !== undefined && { message_types: body.messageTypes }),
      ...(body.enabled !== undefined && { enabled: body.enabled }),
    };
    return found(await q.updateContentRule(tx, orgId, id, change), 'Content rule'); // locked: always found
  });
}

/** Deletes a rule; 404 when the organization has no such rule. Answers its id. */
export async function deleteContentRule(tenant: Tenant, id: string): Promise<string> {
  return found(await q.deleteContentRule(tenant.db, tenant.organizationId, id), 'Content rule');
}
