// Content rules: how a rule's pattern becomes a matcher, and matching an outbound text against the rules.
//
// - `keyword`: the phrase matches as whole words: not preceded or followed by a letter, digit or `_` (Unicode
//   aware, so `café` is a word), inner whitespace of the phrase matches any run of whitespace.
// - `regex`: the ECMAScript pattern as written, with the `i` flag unless case-sensitive. Patterns are checked
//   when saved (regex-safety.ts); at send time regexes still run under a time budget (25 ms each, 100 ms for all
//   of one message), in a separate V8 context whose execution is interrupted when the budget is spent, because
//   a pattern can be slow without being exponential (`.*.*.*x`). A rule that does not finish in time counts as
//   matched: the gate fails closed (a blocking rule blocks, a flagging rule flags) and says so in the reason.
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import { checkRegexSafety, type RegexCheck } from './regex-safety.ts';

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

export type ContentRuleMatch = { rule: ContentRuleSpec; timedOut: boolean };

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Whether a pattern may be saved; `ok: false` carries the reason for the 400. */
export function checkContentPattern(pattern: string, patternType: ContentRulePatternType): RegexCheck {
  if (patternType === 'keyword') {
    return pattern.trim() === '' ? { ok: false, reason: 'a keyword pattern must contain a word' } : { ok: true };
  }
  return checkRegexSafety(pattern);
}

// Compiled patterns are pure functions of (type, flags, pattern): cached per process, bounded.
const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 2000;

export function compileContentRule(rule: Pick<ContentRuleSpec, 'pattern' | 'patternType' | 'caseSensitive'>): RegExp {
  const key = `${rule.patternType}:${rule.caseSensitive ? 's' : 'i'}:${rule.pattern}`;
  let re = compiled.get(key);
  if (!re) {
    if (rule.patternType === 'keyword') {
      const phrase = rule.pattern.trim().split(/\s+/).map(escapeRegExp).join('\\s+');
      re = new RegExp(`(?<![\\p{L}\\p{N}_])${phrase}(?![\\p{L}\\p{N}_])`, rule.caseSensitive ? 'u' : 'iu');
    } else {
      re = new RegExp(rule.pattern, rule.caseSensitive ? '' : 'i');
    }
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, re);
  }
  return re;
}

// One context for every bounded run; the job is passed in through a global of that context. A run costs a
// watchdog thread (a few hundred µs), so results are memoized for identical texts (a blast sends one text to
// many recipients).
type RegexJob = { patterns: RegExp[]; from: number; text: string; results: boolean[] };
const sandbox = vm.createContext({ job: null as RegexJob | null });
const runJob = new vm.Script('for (let k = job.from; k < job.patterns.length; k++) job.results.push(job.patterns[k].test(job.text));');

/** Time one regex may take before it counts as not finished. */
export const REGEX_RULE_BUDGET_MS = 25;
/** Time all regexes of one evaluation may take together. */
export const REGEX_TOTAL_BUDGET_MS = 100;

const memo = new Map<string, boolean[]>();
const MAX_MEMO = 1000;

/**
 * Runs the regexes against `text`, each within REGEX_RULE_BUDGET_MS and all within REGEX_TOTAL_BUDGET_MS;
 * the entry of a regex that did not finish is `undefined`.
 */
export function testWithinBudget(patterns: RegExp[], text: string): Array<boolean | undefined> {
  if (patterns.length === 0) return [];
  const key = createHash('sha256').update(patterns.map((p) => `${p.flags}/${p.source}`).join('\n')).update('\0').update(text).digest('base64');
  const known = memo.get(key);
  if (known) return known;
  const results: Array<boolean | undefined> = [];
  const deadline = performance.now() + REGEX_TOTAL_BUDGET_MS;
  let from = 0;
  while (from < patterns.length) {
    const remaining = deadline - performance.now();
    if (remaining < 1) break;
    const job: RegexJob = { patterns, from, text, results: [] };
    sandbox.job = job;
    try {
      runJob.runInContext(sandbox, { timeout: Math.ceil(Math.min(REGEX_RULE_BUDGET_MS, remaining)) });
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    } finally {
      sandbox.job = null;
    }
    results.push(...job.results);
    from += job.results.length;
    if (from < patterns.length) {
      results.push(undefined); // this one ran out of time; go on with the next
      from++;
    }
  }
  const complete = patterns.map((_, k) => results[k]);
  if (complete.every((r) => r !== undefined)) {
    if (memo.size >= MAX_MEMO) memo.clear();
    memo.set(key, complete as boolean[]);
  }
  return complete;
}

/** The rules that match `text` (keyword rules directly, regex rules under the time budget). */
export function matchContentRules(rules: ContentRuleSpec[], text: string): ContentRuleMatch[] {
  const matches: ContentRuleMatch[] = [];
  const regexRules: ContentRuleSpec[] = [];
  for (const rule of rules) {
    if (rule.patternType === 'regex') regexRules.push(rule);
    else if (compileContentRule(rule).test(text)) matches.push({ rule, timedOut: false });
  }
  const results = testWithinBudget(regexRules.map(compileContentRule), text);
  regexRules.forEach((rule, k) => {
    const r = results[k];
    if (r === undefined) matches.push({ rule, timedOut: true });
    else if (r) matches.push({ rule, timedOut: false });
  });
  return matches;
}
