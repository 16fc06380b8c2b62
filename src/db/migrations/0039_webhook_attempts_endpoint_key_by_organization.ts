// Deleting a webhook endpoint cascades to its attempts. With the key on endpoint_id alone, PostgreSQL finds them with
// `where endpoint_id = $1`, which webhook_attempts_endpoint_idx (organization_id, endpoint_id, …) answers only through
// PostgreSQL 18's skip scan: on the 13–17 the README also supports (DATABASE_URL), every endpoint delete read the
// whole table, 30 days of every organization's attempts. The key now names the organization too — an attempt refers
// to (organization_id, endpoint_id), a unique pair of webhook_endpoints — so the cascade's lookup is a prefix of that
// index on every version, and an attempt can no longer name another organization's endpoint. The insert's check
// probes the new unique index instead of the primary key: the same work.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index if not exists webhook_endpoints_org_id_key on webhook_endpoints (organization_id, id)`.execute(db);
  await sql`alter table webhook_delivery_attempts drop constraint if exists webhook_delivery_attempts_endpoint_id_fkey`.execute(db);
  // NOT VALID, then VALIDATE: the existing rows are checked without blocking writes to the table meanwhile.
  await sql`
    alter table webhook_delivery_attempts add constraint webhook_delivery_attempts_endpoint_fkey
      foreign key (organization_id, endpoint_id) references webhook_endpoints (organization_id, id) on delete cascade not valid`.execute(
    db,
  );
  await sql`alter table webhook_delivery_attempts validate constraint webhook_delivery_attempts_endpoint_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_delivery_attempts drop constraint if exists webhook_delivery_attempts_endpoint_fkey`.execute(db);
  await sql`
    alter table webhook_delivery_attempts add constraint webhook_delivery_attempts_endpoint_id_fkey
      foreign key (endpoint_id) references webhook_endpoints (id) on delete cascade`.execute(db);
  await sql`drop index if exists webhook_endpoints_org_id_key`.execute(db);
}
