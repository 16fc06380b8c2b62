// Three costs on the write path of every message, and the blast's in particular:
// - Messages and conversations reach their organization through their parents instead of a foreign key of their
//   own: a message through its conversation, a conversation through its contact (and its sender), each of those
//   referencing the organization, every link `on delete cascade`. The direct keys to `organizations` added nothing
//   (organization_id stays NOT NULL and is written from the authenticated tenant on every path) but cost a check
//   per row that locked the organization's one row FOR KEY SHARE: every send and every blast recipient locked the
//   same row (a WAL record, and a MultiXact whenever two transactions held it).
// - A blast batch's messages are found by (blast_id, batch) once accepted: the dispatcher's claim and its next-due
//   look (src/db/queries/messages/dispatch.ts, scopeOf) had only the pending-recipients index, so each of them
//   read every recipient of the blast — quadratic over a million-recipient blast.
// - Recipient rows are written by one statement only, the launch's materialization (src/db/queries/blasts/
//   blasts.ts), with the id and organization of the blast row that transaction holds FOR UPDATE; a blast that has
//   recipients can no longer be deleted (DELETE only in DRAFT), and recipients are only ever read by (organization,
//   blast). Their foreign key to blasts checked, a million times per million-recipient launch (3.2 s of its 8 s),
//   what that lock already guaranteed. A delete of a blast still takes its recipients with it (trigger below), as the
//   key's cascade did.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table messages drop constraint if exists messages_organization_id_fkey`.execute(db);
  await sql`alter table conversations drop constraint if exists conversations_organization_id_fkey`.execute(db);
  await sql`create index if not exists blast_recipients_batch_message_idx on blast_recipients (blast_id, batch) where message_id is not null`.execute(
    db,
  );
  await sql`alter table blast_recipients drop constraint if exists blast_recipients_blast_fkey`.execute(db);
  await sql`
    create or replace function blast_recipients_follow_blast() returns trigger language plpgsql as $$
    begin
      delete from blast_recipients where organization_id = old.organization_id and blast_id = old.id;
      return old;
    end $$`.execute(db);
  await sql`create trigger blasts_delete_recipients after delete on blasts for each row execute function blast_recipients_follow_blast()`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists blasts_delete_recipients on blasts`.execute(db);
  await sql`drop function if exists blast_recipients_follow_blast()`.execute(db);
  await sql`alter table blast_recipients add constraint blast_recipients_blast_fkey foreign key (organization_id, blast_id) references blasts (organization_id, id) on delete cascade`.execute(
    db,
  );
  await sql`drop index if exists blast_recipients_batch_message_idx`.execute(db);
  await sql`alter table messages add constraint messages_organization_id_fkey foreign key (organization_id) references organizations (id) on delete cascade`.execute(
    db,
  );
  await sql`alter table conversations add constraint conversations_organization_id_fkey foreign key (organization_id) references organizations (id) on delete cascade`.execute(
    db,
  );
}
