// Quiet hours apply to a blast's test send as to every MARKETING message (testBlast): a test could be sent to
// handsets at night, as often as the endpoint was called. Nothing is exempt any more, so the exemption migration
// 0038 stored with each message (for the dispatcher's second check) is dropped. Dropping a column rewrites no row.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages drop column if exists ignore_quiet_hours`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column if not exists ignore_quiet_hours boolean not null default false`.execute(db);
}
