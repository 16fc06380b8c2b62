// A message's status writes may be HOT (heap-only tuples: the new version on the same page, no index entry
// written), issue 33, bench part l. Every update of messages was a full one (0–20 HOT of ~235,000 per run): each
// changes an indexed column, so PostgreSQL wrote a new entry into each of the table's eight indexes and the
// version onto another page.
// - messages_org_status_idx (organization_id, status, created_at desc) goes: status changes at every step of a
//   message (queued → sending → sent → delivered/read), and the index served one read, a blast's advance look for
//   a message still waiting, which now reads the blast's recipient rows batch by batch
//   (src/db/queries/blasts/blasts.ts, firstBatchWithMessageIn). No other query filters messages by status alone:
//   the message report's status filter reads within its period by messages_org_created_idx.
// - fillfactor 50: a new version can only be HOT on the page of the old one. The claim updates every message of a
//   page at once (a batch's messages were inserted side by side), before the old versions may be pruned, so the
//   page keeps room for a second version of each of them. Pages written from now on.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists messages_org_status_idx`.execute(db);
  await sql`alter table messages set (fillfactor = 50)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages reset (fillfactor)`.execute(db);
  await sql`create index if not exists messages_org_status_idx on messages (organization_id, status, created_at desc)`.execute(db);
}
