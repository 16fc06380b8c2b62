// Submissions and programs: sender submissions (carrier approval), brand and campaign registrations (the
// registry), programs (one brand + one campaign) and their sender attachments (never deleted: detaching ends one).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An RCS agent's launch request (POST /v1/sender-ids/{id}/launch): one row per sender, first request kept.
  await db.schema
    .createTable('rcs_agent_launches')
    .addColumn('sender_id', 'uuid', (c) => c.primaryKey().references('sender_ids.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('sender_submissions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    // pending → submitted → in_review → approved | rejected; or failed (upstream)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('rejection_reasons', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('error', 'jsonb')
    .addColumn('submitted_at', 'timestamptz')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index sender_submissions_sender_idx on sender_submissions (organization_id, sender_id, created_at desc)`.execute(db);

  await db.schema
    .createTable('brand_registrations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    // PENDING → IN_REVIEW → REGISTERED | REJECTED; SUSPENDED
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('identity_status', 'text')
    .addColumn('entity_type', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('company_name', 'text')
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('vertical', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull())
    .addColumn('registry_brand_id', 'text')
    .addColumn('vetting_score', 'integer')
    .addColumn('rejection_reasons', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('registered_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index brand_registrations_sender_idx on brand_registrations (organization_id, sender_id, created_at desc)`.execute(db);

  await db.schema
    .createTable('campaign_registrations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('brand_registration_id', 'uuid', (c) => c.notNull().references('brand_registrations.id').onDelete('cascade'))
    // PENDING → IN_REVIEW → REGISTERED | REJECTED; SUSPENDED, EXPIRED
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('use_case', 'text', (c) => c.notNull())
    .addColumn('sub_use_cases', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull())
    .addColumn('registry_campaign_id', 'text')
    .addColumn('carrier_statuses', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('rejection_reasons', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('monthly_fee', 'numeric')
    .addColumn('submitted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('registered_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index campaign_registrations_sender_idx on campaign_registrations (organization_id, sender_id, created_at desc)`.execute(
    db,
  );

  await db.schema
    .createTable('programs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // DRAFT → ACTIVE (first time ready); ARCHIVED
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('channels', sql`text[]`, (c) => c.notNull())
    // The sender whose brand registration created the program (brand and campaign follow its registrations).
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('brand_registration_id', 'uuid', (c) => c.references('brand_registrations.id').onDelete('set null'))
    .addColumn('campaign_registration_id', 'uuid', (c) => c.references('campaign_registrations.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index programs_sender_key on programs (organization_id, sender_id)`.execute(db);
  await sql`create index programs_org_created_idx on programs (organization_id, created_at desc, id desc)`.execute(db);

  await db.schema
    .createTable('program_senders')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('program_id', 'uuid', (c) => c.notNull().references('programs.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    // ACTIVE | DETACHED (kept as the audit trail)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attached_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('detached_at', 'timestamptz')
    .execute();
  // At most one active attachment of a sender to a program (racing attaches: one wins, the other is 409).
  await sql`create unique index program_senders_active_key on program_senders (program_id, sender_id) where status = 'ACTIVE'`.execute(db);
  await sql`create index program_senders_program_idx on program_senders (organization_id, program_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('program_senders').execute();
  await db.schema.dropTable('programs').execute();
  await db.schema.dropTable('campaign_registrations').execute();
  await db.schema.dropTable('brand_registrations').execute();
  await db.schema.dropTable('sender_submissions').execute();
  await db.schema.dropTable('rcs_agent_launches').execute();
}
