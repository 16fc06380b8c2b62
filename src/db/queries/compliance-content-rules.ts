// SQL for content rules (CRUD and list filters). The compliance gate reads them through compliance-gate.ts.
import { sql, type Selectable } from 'kysely';
import { inTransaction, type Db } from '../database.ts';
import type { ContentRulesTable } from '../tables/compliance.ts';
import { tenant } from '../tenant.ts';
import { lockOrganizationScope } from './compliance-shared.ts';
import { newestFirstPage } from '../paging.ts';

export type ContentRuleRow = Selectable<ContentRulesTable>;

export const MAX_CONTENT_RULES = 200;

export type ContentRuleFilter = { search?: string; action?: string; patternType?: string };

const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');

function filtered(db: Db, orgId: string, f: ContentRuleFilter) {
  let q = tenant(db.selectFrom('content_rules'), orgId);
  if (f.search) {
    const like = `%${likeEscape(f.search)}%`;
    q = q.where((eb) => eb.or([eb('name', 'ilike', like), eb('pattern', 'ilike', like)]));
  }
  if (f.action) q = q.where('action', '=', f.action);
  if (f.patternType) q = q.where('pattern_type', '=', f.patternType);
  return q;
}

export async function listContentRules(db: Db, orgId: string, f: ContentRuleFilter, page: { limit: number; offset: number }) {
  return newestFirstPage(filtered(db, orgId, f).selectAll(), page).execute();
}

export async function countContentRules(db: Db, orgId: string, f: ContentRuleFilter): Promise<number> {
  const { n } = await filtered(db, orgId, f).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

export function getContentRule(db: Db, orgId: string, id: string): Promise<ContentRuleRow | undefined> {
  return tenant(db.selectFrom('content_rules'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** The columns a caller sets (the table type less the ids and timestamps the database owns). */
export type ContentRuleFields = Omit<ContentRuleRow, 'id' | 'organization_id' | 'created_at' | 'updated_at'>;

/** Inserts under the organization's limit; undefined when the limit is reached. */
export function insertContentRule(db: Db, orgId: string, rule: ContentRuleFields): Promise<ContentRuleRow | undefined> {
  return inTransaction(db, async (tx) => {
    await lockOrganizationScope(tx, 'content_rules', orgId);
    const { n } = await tenant(tx.selectFrom('content_rules'), orgId)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_CONTENT_RULES) return undefined;
    return tx
      .insertInto('content_rules')
      .values({ organization_id: orgId, ...rule })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/**
 * Changes a rule: `decide` sees the current row (locked until commit, so concurrent changes cannot combine
 * into an unchecked pattern) and answers the change, or throws to refuse it. Undefined when there is no rule.
 */
export function updateContentRule(
  db: Db,
  orgId: string,
  id: string,
  decide: (current: ContentRuleRow) => Partial<ContentRuleFields>,
): Promise<ContentRuleRow | undefined> {
  return inTransaction(db, async (tx) => {
    const current = await tenant(tx.selectFrom('content_rules'), orgId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!current) return undefined;
    return tenant(tx.updateTable('content_rules'), orgId)
      .set({ ...decide(current), updated_at: sql`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

export async function deleteContentRule(db: Db, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('content_rules'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}
