// A message may be exempt from quiet hours (a blast's test send goes now: testBlast). The dispatcher checks quiet
// hours again when it claims a MARKETING message (src/domain/messaging/dispatch.ts), so the exemption decided at
// acceptance is stored with the message. A constant default: PostgreSQL adds the column without rewriting the table.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column ignore_quiet_hours boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages drop column if exists ignore_quiet_hours`.execute(db);
}
