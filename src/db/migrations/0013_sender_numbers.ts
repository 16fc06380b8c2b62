// Sender numbers: the leases of numbers the organization holds (purchased or imported), and the carrier
// simulator's own record of which inventory numbers it has assigned (provider-side state).
// One live lease per number across all organizations: the partial unique index is the conflict target of the
// insert, so two organizations (or two racing requests) can never hold the same number.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sender_numbers')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.references('sender_ids.id').onDelete('set null'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('number_key', 'text')
    .addColumn('inventory_type', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    // PENDING (not billed) → ACTIVE (campaign REGISTERED, billing started) | NEEDS_RECONCILIATION | RELEASED
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('country_code', 'text', (c) => c.notNull())
    .addColumn('region', 'text')
    .addColumn('locality', 'text')
    .addColumn('capabilities', sql`text[]`, (c) => c.notNull())
    .addColumn('monthly_cost', 'numeric')
    .addColumn('upstream_order_state', 'text')
    .addColumn('billing_started_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('released_at', 'timestamptz')
    .execute();
  await sql`create unique index sender_numbers_live_number_key on sender_numbers (number) where status <> 'RELEASED'`.execute(db);
  await sql`create index sender_numbers_org_created_idx on sender_numbers (organization_id, created_at desc, id desc)`.execute(db);
  await sql`create index sender_numbers_sender_idx on sender_numbers (sender_id) where sender_id is not null`.execute(db);

  await db.schema
    .createTable('simulator_numbers')
    .addColumn('number', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('order_key', 'text', (c) => c.notNull())
    // ASSIGNED, or RELEASED (aging: the sandbox never offers a released number again)
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('simulator_numbers').execute();
  await db.schema.dropTable('sender_numbers').execute();
}
