// SQL for the MCP server configuration (one row per organization). Tenant-scoped: every query names
// organization_id. `credentials` is always the sealed form; this module never sees plain credentials.
import { sql, type Selectable } from 'kysely';
import type { McpConfigsTable, McpCredentialsKind, StoredChannelHealth } from '../../tables/mcp.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type McpConfigRow = Selectable<McpConfigsTable>;
export type { StoredChannelHealth };

export function getMcpConfig(db: TenantDb, orgId: string, opts: { forUpdate?: boolean } = {}): Promise<McpConfigRow | undefined> {
  const q = tenant(db.selectFrom('mcp_configs'), orgId).selectAll();
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export type McpConfigValues = {
  baseUrl: string;
  credentialsType: McpCredentialsKind;
  sealedCredentials: string;
  credentialsHint: string;
  health: StoredChannelHealth[];
};

/** Creates or replaces the organization's configuration. */
export function upsertMcpConfig(db: TenantDb, orgId: string, v: McpConfigValues): Promise<McpConfigRow> {
  const values = {
    base_url: v.baseUrl,
    credentials_type: v.credentialsType,
    credentials: v.sealedCredentials,
    credentials_hint: v.credentialsHint,
    health: JSON.stringify(v.health),
  };
  return db
    .insertInto('mcp_configs')
    .values({ organization_id: orgId, ...values })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ ...values, updated_at: sql<Date>`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Stores test results, unless the configuration changed while the test ran (another base URL or other
 * credentials): then the results describe a configuration that no longer exists and are dropped (undefined).
 */
export function setMcpHealth(
  db: TenantDb,
  orgId: string,
  expected: { baseUrl: string; sealedCredentials: string },
  health: StoredChannelHealth[],
): Promise<McpConfigRow | undefined> {
  return tenant(db.updateTable('mcp_configs'), orgId)
    .set({ health: JSON.stringify(health), updated_at: sql<Date>`now()` })
    .where('base_url', '=', expected.baseUrl)
    .where('credentials', '=', expected.sealedCredentials)
    .returningAll()
    .executeTakeFirst();
}
