// PostgreSQL checks a foreign key one inserted row at a time: a trigger per row that looks up the row it refers to
// and locks it FOR KEY SHARE. In a bulk write that is most of the cost after the indexes (a 150,000-row contact
// import: ~620,000 checks, ~1 s of its ~5). A transaction that has taken those locks itself, once per referenced
// row and before writing, gets the same guarantee from them, and may skip the per-row triggers.
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Locks the organization's row FOR KEY SHARE (what the checks of every `organization_id` key take: it cannot be
 * deleted until the transaction ends) and, where the database role may set it (a superuser, as the embedded
 * server's is and a self-hosted server's owner usually is), sets session_replication_role = replica for the rest of
 * the transaction, which skips the per-row foreign-key triggers. (PostgreSQL 15's GRANT SET ON PARAMETER could
 * allow it to other roles, but has_parameter_privilege does not exist on the 13 and 14 we also run on.) Returns
 * whether they are skipped; where they are not, keys are checked row by row as usual, with the same results.
 *
 * The caller's duty, for the rest of the transaction:
 * - every other existing row its new rows refer to is locked FOR KEY SHARE or stronger before they are written,
 *   and read within the organization (the locks the checks would take; the organization, which they do not check);
 * - it never deletes rows or changes a key (their cascades are triggers too).
 * Replica mode silences every trigger, not only foreign keys': test/contacts-import-keys.test.ts keeps the tables
 * written this way free of any other.
 */
export async function skipRowKeyChecks(tx: Db, organizationId: string): Promise<boolean> {
  const { rows } = await sql<{ skipped: boolean }>`
    select case when current_setting('is_superuser') = 'on'
                then set_config('session_replication_role', 'replica', true) = 'replica' else false end as skipped
    from organizations where id = ${organizationId} for key share`.execute(tx);
  if (rows.length === 0) throw new Error('the organization no longer exists');
  return rows[0]!.skipped;
}
