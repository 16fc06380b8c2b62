// A blast's audience resolved slice by slice as it sends (issue 33), instead of materialized in full at launch:
// the launch of 1,000,000 recipients spent 7.9 s inserting them (and the estimate over all of them) before it
// answered. Each send-batch job now takes the next slice of the audience by keyset over contact id.
// - blasts.audience_cursor: the last contact id resolved (the keyset); null before the first slice.
// - blasts.audience_batches: slices resolved so far (the next batch's number).
// - blasts.audience_done_at: when the last slice was resolved; null while slices remain. Blasts launched before
//   this migration had their audience resolved at launch: they are marked done, and their queued batch jobs only
//   accept the recipients already there.
// - contacts (organization_id, id): the keyset's ordered scan within one organization (the primary key alone walks
//   every organization's contacts in id order).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table blasts add column audience_cursor uuid, add column audience_batches integer not null default 0,
    add column audience_done_at timestamptz`.execute(db);
  await sql`update blasts set audience_done_at = launched_at where launched_at is not null`.execute(db);
  await sql`create index if not exists contacts_org_id_idx on contacts (organization_id, id)`.execute(db);
}
