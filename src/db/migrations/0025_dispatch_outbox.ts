// The message row is its own dispatch outbox: `dispatch_at` is when a dispatch worker may claim it (now for a
// queued message, the end of quiet hours for a held one, the next retry after a provider error, the end of a
// claim's lease while `sending`), null once settled. Workers claim the due rows with FOR UPDATE SKIP LOCKED
// by id, instead of one pg-boss job row per message (the partial index on dispatch_at made here served no query:
// dropped by 0036).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column dispatch_at timestamptz`.execute(db);
  await sql`update messages set dispatch_at = coalesce(held_until, now()) where direction = 'outbound' and status in ('queued', 'held', 'sending')`.execute(
    db,
  );
  await sql`create index messages_dispatch_idx on messages (dispatch_at) where dispatch_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists messages_dispatch_idx`.execute(db);
  await sql`alter table messages drop column if exists dispatch_at`.execute(db);
}
