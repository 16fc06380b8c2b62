// An ARCHIVED program is retired (POST /v1/programs/{id}/archive): a later brand registration of the sender it was
// created for (after a rejection) gets a new program, where the full unique index answered a unique violation (500).
// One program per sender now holds among programs that are not ARCHIVED only.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index programs_sender_key`.execute(db);
  await sql`create unique index programs_sender_key on programs (organization_id, sender_id) where status <> 'ARCHIVED'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index programs_sender_key`.execute(db);
  await sql`create unique index programs_sender_key on programs (organization_id, sender_id)`.execute(db);
}
