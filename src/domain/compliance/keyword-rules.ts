// Keyword rules: the global rules (defined here, the same for every organization, with fixed ids) and how an
// organization's own rules are merged with them. An organization rule with a global keyword overrides that
// global rule; for the STOP-class keywords only the reply text can be overridden (an opt-out keyword always
// opts out).

export type KeywordAction = 'OPT_OUT' | 'OPT_IN' | 'HELP' | 'AUTO_REPLY';

export const DEFAULT_REPLY_TEXT: Record<Exclude<KeywordAction, 'AUTO_REPLY'>, string> = {
  OPT_OUT: 'You are unsubscribed and will receive no more messages. Reply START to resubscribe.',
  OPT_IN: 'You are subscribed again. Reply STOP to unsubscribe.',
  HELP: 'Msg&data rates may apply. Reply STOP to unsubscribe, START to resubscribe.',
};

export type GlobalKeywordRule = { id: string; keyword: string; action: Exclude<KeywordAction, 'AUTO_REPLY'>; replyText: string };

const globalRule = (n: number, keyword: string, action: GlobalKeywordRule['action']): GlobalKeywordRule => ({
  id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
  keyword,
  action,
  replyText: DEFAULT_REPLY_TEXT[action],
});

export const GLOBAL_KEYWORD_RULES: readonly GlobalKeywordRule[] = [
  globalRule(1, 'STOP', 'OPT_OUT'),
  globalRule(2, 'STOPALL', 'OPT_OUT'),
  globalRule(3, 'UNSUBSCRIBE', 'OPT_OUT'),
  globalRule(4, 'CANCEL', 'OPT_OUT'),
  globalRule(5, 'END', 'OPT_OUT'),
  globalRule(6, 'QUIT', 'OPT_OUT'),
  globalRule(7, 'START', 'OPT_IN'),
  globalRule(8, 'UNSTOP', 'OPT_IN'),
  globalRule(9, 'YES', 'OPT_IN'),
  globalRule(10, 'HELP', 'HELP'),
  globalRule(11, 'INFO', 'HELP'),
];

const globalsByKeyword = new Map(GLOBAL_KEYWORD_RULES.map((r) => [r.keyword, r]));
const globalsById = new Map(GLOBAL_KEYWORD_RULES.map((r) => [r.id, r]));

export const globalRuleByKeyword = (keyword: string) => globalsByKeyword.get(keyword);
export const isGlobalRuleId = (id: string) => globalsById.has(id.toLowerCase());

/** Keywords whose override must keep action OPT_OUT. */
export function isStopClass(keyword: string): boolean {
  return globalsByKeyword.get(keyword)?.action === 'OPT_OUT';
}

/** Organization rule as stored. */
export type OrgKeywordRule = {
  id: string;
  keyword: string;
  action: KeywordAction;
  replyText: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** One entry of `GET /v1/keyword-rules`. */
export type ListedKeywordRule = {
  id: string;
  keyword: string;
  action: KeywordAction;
  replyText: string | null;
  scope: 'global' | 'organization';
  editable: boolean;
  overrides: string | null;
  overriddenBy: string | null;
  createdAt: Date | null;
  updatedAt: Date | null;
};

/** An organization rule as listed: `overrides` names the global rule with the same keyword, if any. */
export function listedOrgRule(r: OrgKeywordRule): ListedKeywordRule {
  return { ...r, scope: 'organization', editable: true, overrides: globalsByKeyword.get(r.keyword)?.id ?? null, overriddenBy: null };
}

/** Every global rule and every organization rule, by keyword, a global rule before the rule overriding it. */
export function listKeywordRules(orgRules: OrgKeywordRule[]): ListedKeywordRule[] {
  const orgByKeyword = new Map(orgRules.map((r) => [r.keyword, r]));
  const globals: ListedKeywordRule[] = GLOBAL_KEYWORD_RULES.map((g) => ({
    ...g,
    scope: 'global',
    editable: false,
    overrides: null,
    overriddenBy: orgByKeyword.get(g.keyword)?.id ?? null,
    createdAt: null,
    updatedAt: null,
  }));
  const own = orgRules.map(listedOrgRule);
  return [...globals, ...own].sort((a, b) =>
    a.keyword < b.keyword ? -1 : a.keyword > b.keyword ? 1 : a.scope === b.scope ? 0 : a.scope === 'global' ? -1 : 1,
  );
}

/** The rule that applies to each keyword: the organization's when it has one, else the global one. */
export type EffectiveKeywordRule = {
  id: string;
  keyword: string;
  action: KeywordAction;
  replyText: string | null;
  scope: 'global' | 'organization';
};

export function effectiveKeywordRules(orgRules: OrgKeywordRule[]): Map<string, EffectiveKeywordRule> {
  const out = new Map<string, EffectiveKeywordRule>();
  for (const g of GLOBAL_KEYWORD_RULES) out.set(g.keyword, { ...g, scope: 'global' });
  for (const r of orgRules) {
    out.set(r.keyword, { id: r.id, keyword: r.keyword, action: r.action, replyText: r.replyText, scope: 'organization' });
  }
  return out;
}

/**
 * Resolves action and reply text of an organization rule being created or changed, or names the problem.
 * Null/omitted reply text means the default text of the action (AUTO_REPLY has none, so it needs one). When
 * only the action changes and the stored text is the old action's default, the text follows the new action.
 */
export function resolveKeywordRule(
  keyword: string,
  next: { action: KeywordAction; replyText: string | null | undefined },
  previous?: { action: KeywordAction; replyText: string | null },
): { ok: true; action: KeywordAction; replyText: string } | { ok: false; field: 'body.action' | 'body.replyText'; message: string } {
  if (isStopClass(keyword) && next.action !== 'OPT_OUT') {
    return { ok: false, field: 'body.action', message: `${keyword} is an opt-out keyword: only its reply text can be overridden, the action must be OPT_OUT` };
  }
  let text = next.replyText;
  if (text === undefined && previous) {
    const wasDefault = previous.action !== 'AUTO_REPLY' && previous.replyText === DEFAULT_REPLY_TEXT[previous.action];
    text = wasDefault ? null : previous.replyText;
  }
  if (text === null || text === undefined) {
    if (next.action === 'AUTO_REPLY') return { ok: false, field: 'body.replyText', message: 'is required for action AUTO_REPLY' };
    text = DEFAULT_REPLY_TEXT[next.action];
  }
  return { ok: true, action: next.action, replyText: text };
}
