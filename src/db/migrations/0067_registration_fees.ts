// Two more one-time registry fees in the pass-through ledger (migration 0052): The Campaign Registry bills each brand
// registration it is sent (`brand_registration`, on the brand registration) and each campaign it vets
// (`campaign_vetting`, on the campaign registration), whatever the outcome. Before, usage passed through the monthly
// campaign and number fees and brand vetting only, so a registration's own fees never reached a tenant's bill.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pass_through_charges drop constraint pass_through_charges_kind_check`.execute(db);
  await sql`alter table pass_through_charges add constraint pass_through_charges_kind_check
    check (kind in ('campaign_monthly', 'number_monthly', 'vetting', 'brand_registration', 'campaign_vetting'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from pass_through_charges where kind in ('brand_registration', 'campaign_vetting')`.execute(db);
  await sql`alter table pass_through_charges drop constraint pass_through_charges_kind_check`.execute(db);
  await sql`alter table pass_through_charges add constraint pass_through_charges_kind_check
    check (kind in ('campaign_monthly', 'number_monthly', 'vetting'))`.execute(db);
}
