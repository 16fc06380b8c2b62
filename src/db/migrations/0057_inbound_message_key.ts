// Recording the provider's acceptance of a message may be HOT (issue 33, bench part l). It writes provider and
// provider_message_id, both in messages_provider_id_key (the unique (provider, provider_message_id) of migration
// 0006), so after 0055 it was still a full update: a new entry in each of the table's seven indexes and the version
// on another page (about 29 shared buffers per message). That key serves one purpose: an inbound message stored
// once per provider message id (a carrier's repeated callback, insertInboundMessage). No read looks an outbound
// message up by its provider id (receipts name our message id). The key moves to a column only inbound messages
// set, messages.inbound_key (provider and its message id); an outbound message's id at its provider is no longer
// held unique by the database (the provider gives it).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column inbound_key text`.execute(db);
  await sql`update messages set inbound_key = provider || ' ' || provider_message_id
    where direction = 'inbound' and provider is not null and provider_message_id is not null`.execute(db);
  await sql`create unique index messages_inbound_key on messages (inbound_key) where inbound_key is not null`.execute(db);
  await sql`drop index if exists messages_provider_id_key`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index if not exists messages_provider_id_key on messages (provider, provider_message_id) where provider_message_id is not null`.execute(
    db,
  );
  await sql`drop index if exists messages_inbound_key`.execute(db);
  await sql`alter table messages drop column inbound_key`.execute(db);
}
