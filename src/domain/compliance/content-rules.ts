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
import { checkRegex, testRegexes, type RegexCheck, type RegexSpec } from './regex-safety.ts';

export type ContentRulePatternType = 'keyword' | 'regex';
export type ContentRuleAction = 'block' | 'flag';

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
