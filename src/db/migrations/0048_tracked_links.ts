// Tracked links (issue 34 item 4): a message sent with `trackLinks` has each URL of its text (and each `openUrl`
// action) replaced by `{base}/l/{code}`; this table maps the code to the original URL and counts the clicks.
// - code: 11 random base64url characters per message (64 bits, drawn by the accepting statement) and one
//   character naming the link within the message; the primary key answers the public redirect alone.
// - clicks / first_clicked_at / last_clicked_at: one UPDATE per click on the code's own row (no click log to
//   grow; a message's, contact's or blast's clicks are sums over its rows).
// - The blast is copied from the message so blast stats sum its rows by (organization_id, blast_id).
// - Cascades with the message (a contact's erasure removes its links and their counts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table message_links (
    code text primary key check (length(code) = 12),
    organization_id uuid not null references organizations(id) on delete cascade,
    message_id uuid not null references messages(id) on delete cascade,
    contact_id uuid not null,
    blast_id uuid,
    url text not null check (length(url) <= 2048),
    clicks integer not null default 0,
    first_clicked_at timestamptz,
    last_clicked_at timestamptz,
    created_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index message_links_message_idx on message_links (organization_id, message_id)`.execute(db);
  await sql`create index message_links_blast_idx on message_links (organization_id, blast_id) where blast_id is not null`.execute(db);
  await sql`alter table blasts add column track_links boolean not null default false`.execute(db);
}
