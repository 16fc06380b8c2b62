// A bot could only be met through a handoff or an event trigger: "hi" to its sender got no answer (issue 33 item 1).
// Its inbound triggers (keywords, intents) are kept with its event triggers, as jsonb on the bot; the sender's
// default bot is a flag, one per sender (a partial unique index: a second default for the sender fails the write,
// answered as 409 CONFLICT). The inbound path reads them per inbound message from the bots of one organization, a
// handful of rows, so no index beyond the unique one.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table bots
      add column inbound_triggers jsonb not null default '[]',
      add column default_for_sender boolean not null default false`.execute(db);
  // Replies in a row that matched nothing at the node a session waits at (issue 33 item 5): the flow's fallback
  // hands the conversation to a human after `maxMisses` of them, instead of the bot waiting forever in silence.
  await sql`alter table bot_sessions add column misses integer not null default 0`.execute(db);
  await sql`
    create unique index bots_default_for_sender_key on bots (organization_id, sender_id) where default_for_sender`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists bots_default_for_sender_key`.execute(db);
  await sql`alter table bot_sessions drop column misses`.execute(db);
  await sql`alter table bots drop column inbound_triggers, drop column default_for_sender`.execute(db);
}
