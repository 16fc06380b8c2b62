// SQL for content rules (CRUD and list filters). The compliance gate reads them through gate.ts.
import { sql, type Selectable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { ContentRulesTable } from '../../tables/compliance.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { lockOrganizationScope } from './shared.ts';

export type ContentRuleRow = Selectable<ContentRulesTable>;

/** The columns a caller sets (the table type less the ids and timestamps the database owns). */
export type ContentRuleFields = Omit<ContentRuleRow, 'id' | 'organization_id' | 'created_at' | 'updated_at'>;

export type ContentRuleFilter = { search?: string; action?: string; patternType?: string };

const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');

/** Newest first; `search` is a case-insensitive substring of the name or the pattern (taken literally). */
export function listContentRules(
  db: TenantDb,
  orgId: string,
  f: ContentRuleFilter,
  page: { limit: number; offset: number },
): Promise<Page<ContentRuleRow>> {
  let q = tenant(db.selectFrom('content_rules'), orgId);
  if (f.search) {
    const like = `%${likeEscape(f.search)}%`;
    q = q.where((eb) => eb.or([eb('name', 'ilike', like), eb('pattern', 'ilike', like)]));
  }
  if (f.action) q = q.where('action', '=', f.action);
  if (f.patternType) q = q.where('pattern_type', '=', f.patternType);
  return listPage(newestFirst(q.selectAll()), page);
}

/** Serializes the organization's rule inserts until the transaction ends (for the count-then-insert limit). */
export function lockContentRules(tx: TenantDb, orgId: string): Promise<void> {
  return lockOrganizationScope(tx, 'content_rules', orgId);
}

export async function countContentRules(db: TenantDb, orgId: string): Promise<number> {
  const { n } = await tenant(db.selectFrom('content_rules'), orgId)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

export function insertContentRule(db: TenantDb, orgId: string, rule: ContentRuleFields): Promise<ContentRuleRow> {
  return db
    .insertInto('content_rules')
    .values({ organization_id: orgId, ...rule })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One rule of the organization; `forUpdate` locks it until the surrounding transaction ends. */
export function getContentRule(
  db: TenantDb,
  orgId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ContentRuleRow | undefined> {
  const q = tenant(db.selectFrom('content_rules'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function updateContentRule(
  db: TenantDb,
  orgId: string,
  id: string,
  change: Partial<ContentRuleFields>,
): Promise<ContentRuleRow | undefined> {
  return tenant(db.updateTable('content_rules'), orgId)
    .set({ ...change, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The id of the deleted rule; undefined when the organization has no such rule. */
export async function deleteContentRule(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('content_rules'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}
