// Keyword rules: the global rules (defined here, the same for every organization, with fixed ids) and how an
// organization's own rules are merged with them. An organization rule with a global keyword overrides that
// global rule; for the STOP-class keywords only the reply text can be overridden (an opt-out keyword always
// opts out).
//
// The organization's rules: at most MAX_KEYWORD_RULES, one per keyword (stored upper case, 409 ALREADY_EXISTS
// for a second), changed with the rule locked. Global rules cannot be changed or deleted (403
// GLOBAL_RULE_IMMUTABLE): an organization rule with the same keyword overrides one.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/compliance/keyword-rules.ts';
import { ApiError, conflict, found, invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { assertBelowLimit } from './limits.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type KeywordAction = 'OPT_OUT' | 'OPT_IN' | 'HELP' | 'AUTO_REPLY';

export const DEFAULT_REPLY_TEXT: Record<Exclude<KeywordAction, 'AUTO_REPLY'>, string> = {
  OPT_OUT: 'You are unsubscribed and will receive no more messages. Reply START to resubscribe.',
  OPT_IN: 'You are subscribed again. Reply STOP to unsubscribe.',
  HELP: 'Msg&data rates may apply. Reply STOP to unsubscribe, START to resubscribe.',
};

type GlobalKeywordRule = { id: string; keyword: string; action: Exclude<KeywordAction, 'AUTO_REPLY'>; replyText: string };

const globalRule = (n: number, keyword: string, action: GlobalKeywordRule['action']): GlobalKeywordRule => ({
  id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
  keyword,
  action,
  replyText: DEFAULT_REPLY_TEXT[action],
});

const GLOBAL_KEYWORD_RULES: readonly GlobalKeywordRule[] = [
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

const isGlobalRuleId = (id: string) => globalsById.has(id.toLowerCase());

/** Keywords whose override must keep action OPT_OUT. */
function isStopClass(keyword: string): boolean {
  return globalsByKeyword.get(keyword)?.action === 'OPT_OUT';
}

/** An organization rule. */
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
function listedOrgRule(r: OrgKeywordRule): ListedKeywordRule {
  return { ...r, scope: 'organization', editable: true, overrides: globalsByKeyword.get(r.keyword)?.id ?? null, overriddenBy: null };
}

/** Every global rule and every organization rule, by keyword, a global rule before the rule overriding it. */
function mergeKeywordRules(orgRules: OrgKeywordRule[]): ListedKeywordRule[] {
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
function resolveKeywordRule(
  keyword: string,
  next: { action: KeywordAction; replyText: string | null | undefined },
  previous?: { action: KeywordAction; replyText: string | null },
): { ok: true; action: KeywordAction; replyText: string } | { ok: false; field: 'body.action' | 'body.replyText'; message: string } {
  if (isStopClass(keyword) && next.action !== 'OPT_OUT') {
    return {
      ok: false,
      field: 'body.action',
      message: `${keyword} is an opt-out keyword: only its reply text can be overridden, the action must be OPT_OUT`,
    };
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

// ---------------------------------------------------------------------------------------------------------------
// The organization's rules
// ---------------------------------------------------------------------------------------------------------------

const MAX_KEYWORD_RULES = 100;

/** A stored organization rule (the query's row) as the domain sees it. */
function toOrgKeywordRule(r: q.KeywordRuleRow): OrgKeywordRule {
  return {
    id: r.id,
    keyword: r.keyword,
    action: r.action as KeywordAction,
    replyText: r.reply_text,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The organization's own rules, by keyword (the keyword engine reads them with the system handle). */
export async function orgKeywordRules(db: TenantDb, organizationId: string): Promise<OrgKeywordRule[]> {
  return (await q.listKeywordRules(db, organizationId)).map(toOrgKeywordRule);
}

function assertMutableKeywordRule(id: string): void {
  if (isGlobalRuleId(id)) {
    throw new ApiError(
      403,
      'GLOBAL_RULE_IMMUTABLE',
      'Global keyword rules cannot be edited or deleted; create an organization rule with the same keyword to override it.',
    );
  }
}

/** The global rules merged with the organization's (see mergeKeywordRules). */
export async function listKeywordRules(tenant: Tenant): Promise<ListedKeywordRule[]> {
  return mergeKeywordRules(await orgKeywordRules(tenant.db, tenant.organizationId));
}

/** 400 for an action or text the keyword cannot have, 422 UNPROCESSABLE beyond MAX_KEYWORD_RULES, 409 for a keyword the organization has. */
export function createKeywordRule(
  tenant: Tenant,
  body: { keyword: string; action: KeywordAction; replyText?: string | null },
): Promise<ListedKeywordRule> {
  const keyword = body.keyword.toUpperCase();
  const resolved = resolveKeywordRule(keyword, { action: body.action, replyText: body.replyText });
  if (!resolved.ok) throw invalidField(resolved.field, resolved.message);
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    await q.lockKeywordRules(tx, orgId);
    assertBelowLimit(await q.countKeywordRules(tx, orgId), MAX_KEYWORD_RULES, 'keyword rules');
    const row = await q.insertKeywordRule(tx, orgId, { keyword, action: resolved.action, replyText: resolved.replyText });
    if (!row) throw conflict('ALREADY_EXISTS', `The organization already has a keyword rule for ${keyword}.`);
    return listedOrgRule(toOrgKeywordRule(row));
  });
}

/** 403 for a global rule, 404 unknown in the organization, 400 for an action or text the keyword cannot have. */
export function updateKeywordRule(
  tenant: Tenant,
  id: string,
  body: { action?: KeywordAction; replyText?: string | null },
): Promise<ListedKeywordRule> {
  assertMutableKeywordRule(id);
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const current = toOrgKeywordRule(found(await q.getKeywordRule(tx, orgId, id, { forUpdate: true }), 'Keyword rule'));
    const resolved = resolveKeywordRule(current.keyword, { action: body.action ?? current.action, replyText: body.replyText }, current);
    if (!resolved.ok) throw invalidField(resolved.field, resolved.message);
    const row = found(await q.updateKeywordRule(tx, orgId, id, resolved), 'Keyword rule'); // locked: always found
    return listedOrgRule(toOrgKeywordRule(row));
  });
}

/** 403 for a global rule, 404 unknown in the organization. Answers the deleted rule's id. */
export async function deleteKeywordRule(tenant: Tenant, id: string): Promise<string> {
  assertMutableKeywordRule(id);
  return found(await q.deleteKeywordRule(tenant.db, tenant.organizationId, id), 'Keyword rule');
}
