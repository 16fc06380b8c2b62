// SQL of the Common section's health check (getHealth): the cheapest statement that proves the database answers.
// Not tenant-scoped: it reads no table.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';

// System handle: select 1: touches no tenant table.
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
