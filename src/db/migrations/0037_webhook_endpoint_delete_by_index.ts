// Deleting a webhook endpoint cascades to its deliveries (`webhook_deliveries.endpoint_id … on delete cascade`), and
// PostgreSQL finds them with `where endpoint_id = $1`. The only index on that column was partial (pending
// deliveries, migration 0005), which cannot answer it, so every endpoint delete read the whole table, every
// organization's deliveries (30 days of them, with the retention purge), while the request waited. A full index
// on endpoint_id answers it; the partial one stays for cancelling an endpoint's pending deliveries, which would
// otherwise read all of them. (The attempts' cascade: migration 0039; test/webhooks-retention.test.ts checks both
// plans.)
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_endpoint_idx`.execute(db);
}
