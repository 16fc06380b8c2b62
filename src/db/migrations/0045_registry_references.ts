// A real registry keeps its own id for what it reviews (Telnyx's 10DLC brand and campaign ids): the review jobs ask
// it about that id until it decides. The sandbox registry keeps none (it decides by what was submitted), so the
// column stays null for it. Never shown to API clients (a brand's registryBrandId is the id once REGISTERED).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table brand_registrations add column registry_reference text check (length(registry_reference) <= 200)`.execute(db);
  await sql`alter table campaign_registrations add column registry_reference text check (length(registry_reference) <= 200)`.execute(db);
  await sql`alter table sender_submissions add column registry_reference text check (length(registry_reference) <= 200)`.execute(db);
}
