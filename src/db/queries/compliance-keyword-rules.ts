// SQL for organization keyword rules (the global rules are in code: src/domain/compliance/keyword-rules.ts).
import { sql, type Selectable } from 'kysely';
import { inTransaction, type Db } from '../database.ts';
import type { KeywordRulesTable } from '../tables/compliance.ts';
import { tenant } from '../tenant.ts';
import type { KeywordAction, OrgKeywordRule } from '../../domain/compliance/keyword-rules.ts';
import { lockOrganizationScope } from './compliance-shared.ts';

type KeywordRuleRow = Selectable<KeywordRulesTable>;

export const MAX_KEYWORD_RULES = 100;

const toRule = (r: KeywordRuleRow): OrgKeywordRule => ({
  id: r.id,
  keyword: r.keyword,
  action: r.action as KeywordAction,
  replyText: r.reply_text,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function listOrgKeywordRules(db: Db, orgId: string): Promise<OrgKeywordRule[]> {
  const rows = await tenant(db.selectFrom('keyword_rules'), orgId).selectAll().orderBy('keyword').execute();
  return rows.map(toRule);
}

export type InsertKeywordRuleResult = { rule: OrgKeywordRule } | { error: 'limit' | 'duplicate' };

/** Inserts under the organization's limit; the keyword must be new in the organization. */
export function insertKeywordRule(
  db: Db,
  orgId: string,
  rule: { keyword: string; action: KeywordAction; replyText: string },
): Promise<InsertKeywordRuleResult> {
  return inTransaction(db, async (tx) => {
    await lockOrganizationScope(tx, 'keyword_rules', orgId);
    const { n } = await tenant(tx.selectFrom('keyword_rules'), orgId)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_KEYWORD_RULES) return { error: 'limit' as const };
    const row = await tx
      .insertInto('keyword_rules')
      .values({ organization_id: orgId, keyword: rule.keyword, action: rule.action, reply_text: rule.replyText })
      .onConflict((oc) => oc.columns(['organization_id', 'keyword']).doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? { rule: toRule(row) } : { error: 'duplicate' as const };
  });
}

/** Changes a rule: `decide` sees the current rule (locked until commit) and answers the change, or throws. */
export function updateKeywordRule(
  db: Db,
  orgId: string,
  id: string,
  decide: (current: OrgKeywordRule) => { action: KeywordAction; replyText: string },
): Promise<OrgKeywordRule | undefined> {
  return inTransaction(db, async (tx) => {
    const current = await tenant(tx.selectFrom('keyword_rules'), orgId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) return undefined;
    const change = decide(toRule(current));
    const row = await tenant(tx.updateTable('keyword_rules'), orgId)
      .set({ action: change.action, reply_text: change.replyText, updated_at: sql`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRule(row);
  });
}

export async function deleteKeywordRule(db: Db, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('keyword_rules'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}
