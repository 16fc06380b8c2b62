// Two costs on the write path of every message, and the blast's in particular:
// - Messages and conversations reach their organization through their parents instead of a foreign key of their
//   own: a message through its conversation, a conversation through its contact (and its sender), each of those
//   referencing the organization, every link `on delete cascade`. The direct keys to `organizations` added nothing
//   (organization_id stays NOT NULL and is written from the authenticated tenant on every path) but cost a check
//   per row that locked the organization's one row FOR KEY SHARE: every send and every blast recipient locked the
//   same row (a WAL record, and a MultiXact whenever two transactions held it).
// - A blast batch's messages are found by (blast_id, batch) once accepted: the dispatcher's claim and its next-due
//   look (src/db/queries/conversations/dispatch.ts, scopeOf) had only the pending-recipients index, so each of them
//   read every recipient of the blast — quadratic over a million-recipient blast.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages drop constraint if exists messages_organization_id_fkey`.execute(db);
  await sql`alter table conversations drop constraint if exists conversations_organization_id_fkey`.execute(db);
  await sql`create index if not exists blast_recipients_batch_message_idx on blast_recipients (blast_id, batch) where message_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists blast_recipients_batch_message_idx`.execute(db);
  await sql`alter table messages add constraint messages_organization_id_fkey foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
  await sql`alter table conversations add constraint conversations_organization_id_fkey foreign key (organization_id) references organizations (id) on delete cascade`.execute(db);
}
