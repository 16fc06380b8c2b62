// Contact imports write one consent entry per contact whose consent type they set (99,000 of the bench's 150,000
// rows): consent entries get time-ordered ids, as messages and contacts did in 0029, so each new entry lands at the
// right edge of consent_events_pkey instead of a random leaf (a page touched, and after a checkpoint a full-page
// image written, per entry). Measured with a COPY of the bench import's 99,000 entries: 1.08 → 0.94 s of backend
// CPU (median of 4 rounds). Ties in the history's order (created_at desc, id desc; one transaction's entries share
// created_at) now follow insertion order instead of chance.
//
// The stored upload is kept uncompressed (storage external): it lives only until its job ends, and compressing it
// (pglz: this build has no lz4) sat on the upload's path and before the worker's first row. A 10 MB CSV: 80-100 →
// 30-50 ms of backend CPU and 115-205 → 65-80 ms to insert, 2.2 → 10.1 MB held while the job is queued or running.
//
// Looked at and kept, for whoever looks next:
// - contacts_org_rcs_idx (organization_id, rcs_capable) is not redundant next to contacts_org_rcs_created_idx: with
//   three key values per organization it deduplicates to a few pages, and every contact list's total count is an
//   index-only scan of it; without it those counts read the table (bench part e: ~50 → ~210 ms per list page at
//   1,000,000 contacts). Its upkeep in an import is ~0.1 s of 150,000 rows.
// - consent_events → organizations: consent entries outlive their contact (no key to contacts: an audit trail), so
//   this key is the only thing that removes them with their organization.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table consent_events alter column id set default time_ordered_uuid()`.execute(db);
  await sql`alter table contact_import_files alter column data set storage external`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table contact_import_files alter column data set storage extended`.execute(db);
  await sql`alter table consent_events alter column id set default gen_random_uuid()`.execute(db);
}
