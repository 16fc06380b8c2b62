// messages_dispatch_idx (dispatch_at, migration 0025) served no query: every claim and every "when is the next one
// due" names its messages — by id (a send's wake job) or as a blast batch's recipient rows — and reaches them by
// primary key, never by scanning the outbox in time order (a wake job is queued for each scope's next due time, so
// no sweep looks for stranded rows). The index was written on every message insert and on every update that moves
// dispatch_at (claim, record, receipt, retry): one index entry in nine per write, for nothing (idx_scan 0 after a
// 1,000,000-recipient blast).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists messages_dispatch_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists messages_dispatch_idx on messages (dispatch_at) where dispatch_at is not null`.execute(db);
}
