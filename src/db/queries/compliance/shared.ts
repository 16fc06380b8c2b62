// Helpers shared by the Compliance section's queries.
import { sql } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

/**
 * Serializes writers of one organization's rows of `table` until the transaction ends, so a count-then-insert
 * limit check cannot be raced past. Call it inside a transaction.
 */
export async function lockOrganizationScope(tx: TenantDb, table: string, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${table}:${orgId}`}, 0))`.execute(tx);
}
