// Contact imports (issue 38, bench part d): contacts_org_rcs_created_idx keeps only contacts whose RCS capability is
// known. It serves the contact list's `rcsCap=true|false` filter in creation order (migration 0003), which never asks
// for an unknown capability; a segment's `rcsCap: null` reads contacts_org_rcs_idx or the creation-order index, as
// it did. Every contact an import creates (and every one created through the API) starts unknown until an RCS
// lookup, so an import no longer pays this B-tree's insert per contact; the lookup's update, which sets the
// capability, was never HOT (contacts_org_rcs_idx covers the column) and now adds the entry instead.
//
// The predicate is written `rcs_capable or not rcs_capable` (true exactly when it is not null), not `is not null`:
// PostgreSQL simplifies the filters `rcs_capable = true` and `= false` to `rcs_capable` and `not rcs_capable`, and
// proves the index usable from either only against this form (`not rcs_capable` does not imply `is not null` to its
// planner). With a bound parameter (`rcs_capable = $1`), the custom plan the unnamed statements get folds it first.
// Measured (bench d's import, 2 rounds each in one run, load 5-8): WAL 2,888-2,901 → 2,730-2,741 B/row, one B-tree of
// the 14 the import writes; test/contacts-rcs-index.test.ts: the index grew 606 KB for 5,000 imported contacts
// before, nothing now, and both filters plan an index scan of it.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists contacts_org_rcs_created_idx`.execute(db);
  await sql`create index contacts_org_rcs_created_idx on contacts (organization_id, rcs_capable, created_at desc, id desc)
    where rcs_capable or not rcs_capable`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists contacts_org_rcs_created_idx`.execute(db);
  await sql`create index contacts_org_rcs_created_idx on contacts (organization_id, rcs_capable, created_at desc, id desc)`.execute(db);
}
