// Contacts section: RCS lookups (billing records), bulk tag jobs, import jobs and their stored uploads, and the
// list index 0002 lacks (name descending with unnamed contacts last).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // `sortBy=name&sortOrder=desc` puts contacts without a name last: a backward scan of the ascending index
  // would put them first, so descending order needs its own index.
  await sql`create index contacts_org_name_desc_idx on contacts (organization_id, lower(name) desc nulls last, id desc)`.execute(db);
  // `rcsCap` with the default order (newest first) at a million contacts: 0002's (organization_id, rcs_capable)
  // finds the rows but not in order.
  await sql`create index contacts_org_rcs_created_idx on contacts (organization_id, rcs_capable, created_at desc, id desc)`.execute(db);

  // One row per fresh completed RCS capability lookup: the billable record (cached and failed lookups write none).
  // No foreign key to contacts: billing records outlive the contact.
  await db.schema
    .createTable('contact_rcs_lookups')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('rcs_capable', 'boolean', (c) => c.notNull())
    .addColumn('price', sql`numeric(12, 4)`, (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index contact_rcs_lookups_org_created_idx on contact_rcs_lookups (organization_id, created_at)`.execute(db);

  await db.schema
    .createTable('contact_bulk_tag_jobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('tag_ids', sql`uuid[]`, (c) => c.notNull())
    // Distinct requested ids, in request order; the worker walks them in chunks from `processed`.
    .addColumn('contact_ids', sql`uuid[]`, (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tagged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('already_tagged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('not_found', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .execute();
  await sql`create index contact_bulk_tag_jobs_org_completed_idx on contact_bulk_tag_jobs (organization_id, completed_at)`.execute(db);

  await db.schema
    .createTable('contact_import_jobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('file_name', 'text')
    // Target of each CSV column, by position (checked when the upload was accepted).
    .addColumn('columns', 'jsonb', (c) => c.notNull())
    .addColumn('default_country', 'text')
    .addColumn('tag_ids', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'::uuid[]`))
    .addColumn('actor', 'text')
    .addColumn('total_rows', 'integer')
    .addColumn('processed_rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('imported_rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped_rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    // Last CSV line whose outcome is committed: a re-delivered job resumes after it.
    .addColumn('lines_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .execute();
  await sql`create index contact_import_jobs_org_completed_idx on contact_import_jobs (organization_id, completed_at)`.execute(db);

  // The uploaded CSV, in PostgreSQL so a worker in another process can read it; deleted when the job ends.
  await db.schema
    .createTable('contact_import_files')
    .addColumn('job_id', 'uuid', (c) => c.primaryKey().references('contact_import_jobs.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['contact_import_files', 'contact_import_jobs', 'contact_bulk_tag_jobs', 'contact_rcs_lookups']) {
    await db.schema.dropTable(t).execute();
  }
  await sql`drop index if exists contacts_org_rcs_created_idx`.execute(db);
  await sql`drop index if exists contacts_org_name_desc_idx`.execute(db);
}
