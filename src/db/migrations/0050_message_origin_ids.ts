// Every stored message knows its origin with the ids (issue 34): besides the blast (0044), the bot whose flow sent
// it, the event trigger that started that flow, and the acquisition campaign whose confirmation or welcome it is.
// Written by the accepting statement from the send's order (src/db/queries/messages/accept.ts); the message report
// names them. Nullable, no default (no table rewrite); messages stored before keep null: their bot, trigger or
// campaign cannot be told apart after the fact.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column bot_id uuid, add column event_trigger_id text check (length(event_trigger_id) <= 100),
    add column acquisition_campaign_id uuid`.execute(db);
}
