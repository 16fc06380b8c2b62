// An RCS agent's SMS/MMS fallback goes from its fallback sender even when the fallback is found after acceptance
// (issue 32): the capability lookup at dispatch says the handset has no RCS, or the RCS delivery fails.
// - messages.fallback_sender_id: the sender that carries the message's fallback when not its own sender (the RCS
//   protocol's `fallbackSenderIdId`, else the program's FALLBACK sender), chosen by the accepting statement with
//   the same decision as a fallback known at acceptance (src/db/queries/messages/accept.ts); null when the message
//   falls back on its own sender, has no fallback, or has already moved. Dispatch moves the message to it
//   (src/domain/messaging/dispatch.ts) rather than deciding a second time. Nullable, no default (no table rewrite);
//   no foreign key, as messages.sender_id has none: a sender that is gone answers "no fallback" at the move.
// - messages_attribute (0044) also runs when a message moves to another sender: its program, brand and campaign
//   registrations are those of the sender that carries it, as its rollup sender and pass-through fee class are.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages add column fallback_sender_id uuid`.execute(db);
  await sql`create trigger messages_attribute_moved before update of sender_id on messages
    for each row when (old.sender_id is distinct from new.sender_id) execute function messages_attribute()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists messages_attribute_moved on messages`.execute(db);
  await sql`alter table messages drop column if exists fallback_sender_id`.execute(db);
}
