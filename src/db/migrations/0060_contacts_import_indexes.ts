// Contact imports (issue 38, bench part d): every B-tree on contacts costs each imported contact an insert.
// - contacts_org_name_desc_idx is gone: `sortBy=name&sortOrder=desc` reads the ascending contacts_org_name_idx
//   backward for the named contacts and by `lower(name) is null` for the unnamed ones, which still come last
//   (src/db/queries/contacts/contacts.ts, byNameDescending). Measured on a COPY of the bench import's 148,501
//   contacts, each variant rolled back, 3 alternating rounds (load 3-8): backend CPU 6.06 → 5.74 s (median).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists contacts_org_name_desc_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists contacts_org_name_desc_idx on contacts (organization_id, lower(name) desc nulls last, id desc)`.execute(
    db,
  );
}
