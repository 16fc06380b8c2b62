// The send path's per-recipient lookups no longer depend on the planner's statistics, and a blast's recipient rows
// are marked without touching an index.
//
// Conversation ids derived from their key. Every writer names a new conversation md5(organization:contact:sender)
// (newConversationId), so the send path finds a recipient's conversation by primary key. A check constraint now
// holds every new row to that, and the database derives the id of a row inserted without one (a trigger, only
// then: the send path names it). The check is validated when no older conversation has a random id (a database
// created after the derivation, i.e. every one but early development ones): src/db/queries/messages/accept.ts
// then probes the primary key only. Before, the probe by (organization, contact, sender) could be planned on
// conversations_org_last_idx when the statistics had not seen the organization's new conversations yet (a new
// organization, or one blasting for the first time, in a database holding others): every probe then read the
// organization's conversations, quadratic over a blast (measured: a 5,000-recipient batch 0.4 s → 15-45 s after
// 30,000 recipients, next to 700,000 conversations of other organizations).
//
// Recipient rows marked by HOT updates. A batch marks its 5,000 recipients accepted (with the message id) or
// skipped. Indexed columns changed by that (status in two partial-index predicates, message_id in a third index)
// made every mark a new row version with an entry in each index; now only (blast_id, batch) and the primary key are
// indexed — neither changes — and the table leaves room on each page (fillfactor 50), so a mark rewrites the row on
// its own page and no index. The pending-recipient and batch-message lookups read the batch's entries (5,000) and
// check the row; "is any recipient pending" reads the newest batches first (src/db/queries/blasts/blasts.ts).
// blast_recipients_message_idx (message_id) served no query.
import { sql, type Kysely } from 'kysely';

/** newConversationId (src/db/queries/conversations/conversations.ts) of a row's key; `row` prefixes its columns. */
const derivedId = (row = '') => `md5(${row}organization_id::text || ':' || ${row}contact_id::text || ':' || ${row}sender_id::text)::uuid`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table conversations alter column id drop default`.execute(db);
  await sql
    .raw(
      `
    create function conversations_derive_id() returns trigger language plpgsql as $fn$
    begin
      new.id := ${derivedId('new.')};
      return new;
    end $fn$`,
    )
    .execute(db);
  await sql`create trigger conversations_derive_id before insert on conversations for each row when (new.id is null) execute function conversations_derive_id()`.execute(
    db,
  );
  await sql.raw(`alter table conversations add constraint conversations_id_from_key check (id = ${derivedId()}) not valid`).execute(db);
  const legacy = (
    await sql.raw<{ found: boolean }>(`select exists (select 1 from conversations where id <> ${derivedId()}) as found`).execute(db)
  ).rows[0]!.found;
  if (!legacy) await sql`alter table conversations validate constraint conversations_id_from_key`.execute(db);

  await sql`drop index if exists blast_recipients_batch_idx`.execute(db);
  await sql`drop index if exists blast_recipients_batch_message_idx`.execute(db);
  await sql`drop index if exists blast_recipients_message_idx`.execute(db);
  await sql`create index blast_recipients_batch_idx on blast_recipients (blast_id, batch)`.execute(db);
  await sql`alter table blast_recipients set (fillfactor = 50)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table blast_recipients reset (fillfactor)`.execute(db);
  await sql`drop index if exists blast_recipients_batch_idx`.execute(db);
  await sql`create index blast_recipients_batch_idx on blast_recipients (blast_id, batch) where status = 'pending'`.execute(db);
  await sql`create index blast_recipients_message_idx on blast_recipients (message_id) where message_id is not null`.execute(db);
  await sql`create index blast_recipients_batch_message_idx on blast_recipients (blast_id, batch) where message_id is not null`.execute(db);
  await sql`alter table conversations drop constraint if exists conversations_id_from_key`.execute(db);
  await sql`drop trigger if exists conversations_derive_id on conversations`.execute(db);
  await sql`drop function if exists conversations_derive_id()`.execute(db);
  await sql`alter table conversations alter column id set default gen_random_uuid()`.execute(db);
}
