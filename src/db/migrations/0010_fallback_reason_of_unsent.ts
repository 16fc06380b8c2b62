// A message that ended before any carrier accepted it never fell back: clear the planned fallback that older
// versions left on such rows, so stored messages, the report and events agree (src/domain/messaging/fallback.ts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update messages set fallback_used = false, fallback_reason = null
    where status in ('failed', 'revoked') and sent_at is null
      and (fallback_used or fallback_reason is not null)`.execute(db);
}

export async function down(): Promise<void> {
  // Data correction only; nothing to undo.
}
