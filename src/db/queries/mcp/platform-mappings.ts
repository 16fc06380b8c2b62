// SQL for platform mappings: the link between an organization and its account on the messaging platform.
// Tenant-scoped: every query names organization_id.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { PlatformMappingsTable } from '../../tables/mcp.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type PlatformMappingRow = Selectable<PlatformMappingsTable>;

export function getPlatformMapping(db: TenantDb, orgId: string): Promise<PlatformMappingRow | undefined> {
  return tenant(db.selectFrom('platform_mappings'), orgId).selectAll().executeTakeFirst();
}

// System handle: the admin CLI (a platform admin, no organization key).
/** Creates or replaces the organization's mapping. */
export function upsertPlatformMapping(db: Db, orgId: string, platformAccountId: string): Promise<PlatformMappingRow> {
  return db
    .insertInto('platform_mappings')
    .values({ organization_id: orgId, platform_account_id: platformAccountId })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ platform_account_id: platformAccountId, updated_at: sql<Date>`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

// System handle: the admin CLI (a platform admin, no organization key).
export async function organizationExists(db: Db, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst();
  return Boolean(row);
}
