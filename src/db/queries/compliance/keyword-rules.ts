// SQL for organization keyword rules (the global rules are in code: src/domain/compliance/keyword-rules.ts).
import { sql, type Selectable } from 'kysely';
import type { KeywordRulesTable } from '../../tables/compliance.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { lockOrganizationScope } from './shared.ts';

export type KeywordRuleRow = Selectable<KeywordRulesTable>;

/** The organization's rules, by keyword. */
export function listKeywordRules(db: TenantDb, orgId: string): Promise<KeywordRuleRow[]> {
  return tenant(db.selectFrom('keyword_rules'), orgId).selectAll().orderBy('keyword').execute();
}

/** Serializes the organization's rule inserts until the transaction ends (for the count-then-insert limit). */
export function lockKeywordRules(tx: TenantDb, orgId: string): Promise<void> {
  return lockOrganizationScope(tx, 'keyword_rules', orgId);
}

export async function countKeywordRules(db: TenantDb, orgId: string): Promise<number> {
  const { n } = await tenant(db.selectFrom('keyword_rules'), orgId)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Inserts the rule; undefined when the organization already has a rule for the keyword. */
export function insertKeywordRule(
  db: TenantDb,
  orgId: string,
  rule: { keyword: string; action: string; replyText: string },
): Promise<KeywordRuleRow | undefined> {
  return db
    .insertInto('keyword_rules')
    .values({ organization_id: orgId, keyword: rule.keyword, action: rule.action, reply_text: rule.replyText })
    .onConflict((oc) => oc.columns(['organization_id', 'keyword']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** One rule of the organization; `forUpdate` locks it until the surrounding transaction ends. */
export function getKeywordRule(
  db: TenantDb,
  orgId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<KeywordRuleRow | undefined> {
  const q = tenant(db.selectFrom('keyword_rules'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function updateKeywordRule(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { action: string; replyText: string },
): Promise<KeywordRuleRow | undefined> {
  return tenant(db.updateTable('keyword_rules'), orgId)
    .set({ action: change.action, reply_text: change.replyText, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The id of the deleted rule; undefined when the organization has no such rule. */
export async function deleteKeywordRule(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('keyword_rules'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}
