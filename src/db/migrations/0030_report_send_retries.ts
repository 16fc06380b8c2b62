// Scheduled reports whose email is refused back off instead of being tried at every 5-minute tick forever:
// `send_failures` counts the refusals since the last sent report, `retry_at` is when the next try may run (5 minutes
// doubling to at most 6 hours; src/domain/analytics/report-runs.ts). A sent report, or an edit of the report, clears
// both.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table analytics_reports add column send_failures integer not null default 0, add column retry_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table analytics_reports drop column if exists send_failures, drop column if exists retry_at`.execute(db);
}
