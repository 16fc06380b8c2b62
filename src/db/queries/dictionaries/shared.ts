// Shared by the dictionary queries: the per-organization write lock of one dictionary.
import { sql } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

export type Dictionary = 'dictionary_categories' | 'intents' | 'variable_definitions';

/** Serializes the organization's writes to one dictionary until the transaction ends (check-then-write of unique tokens). */
export async function lockDictionary(tx: TenantDb, dictionary: Dictionary, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${dictionary}:${orgId}`}, 0))`.execute(tx);
}
