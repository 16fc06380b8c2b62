// Contacts, tags and the consent records every send depends on. Indexed for a million contacts per
// organization: list by created_at / name / phone, substring search (pg_trgm), tag filter, RCS capability.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);

  await db.schema
    .createTable('contacts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('phone_country', 'text')
    .addColumn('attributes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('rcs_capable', 'boolean')
    .addColumn('rcs_checked_at', 'timestamptz')
    .addColumn('time_zone', 'text')
    .addColumn('quiet_hours_start', 'text')
    .addColumn('quiet_hours_end', 'text')
    .addColumn('consent_type', 'text', (c) => c.notNull().defaultTo('NONE'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('contacts_org_phone_key', ['organization_id', 'phone'])
    .execute();
  await sql`create index contacts_org_created_idx on contacts (organization_id, created_at desc, id desc)`.execute(db);
  await sql`create index contacts_org_name_idx on contacts (organization_id, lower(name), id)`.execute(db);
  await sql`create index contacts_org_rcs_idx on contacts (organization_id, rcs_capable)`.execute(db);
  await sql`create index contacts_search_trgm_idx on contacts using gin ((coalesce(name, '') || ' ' || phone) gin_trgm_ops)`.execute(db);
  await sql`create index contacts_attributes_idx on contacts using gin (attributes jsonb_path_ops)`.execute(db);

  await db.schema
    .createTable('tags')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index tags_org_name_key on tags (organization_id, lower(name))`.execute(db);

  // Deleting a tag or a contact removes the link (ON DELETE CASCADE).
  await db.schema
    .createTable('contact_tags')
    .addColumn('organization_id', 'uuid', (c) => c.notNull())
    .addColumn('contact_id', 'uuid', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('tag_id', 'uuid', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('contact_tags_pkey', ['contact_id', 'tag_id'])
    .execute();
  await sql`create index contact_tags_org_tag_idx on contact_tags (organization_id, tag_id, contact_id)`.execute(db);

  await db.schema
    .createTable('consent_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid') // no FK: the audit trail outlives the contact
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('consent_type', 'text')
    .addColumn('keyword', 'text')
    .addColumn('channel', 'text')
    .addColumn('message_id', 'uuid')
    .addColumn('actor', 'text')
    .addColumn('reason', 'text')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index consent_events_org_contact_idx on consent_events (organization_id, contact_id, created_at desc, id desc)`.execute(
    db,
  );
  await sql`create index consent_events_org_phone_idx on consent_events (organization_id, phone, created_at desc)`.execute(db);
  await sql`create index consent_events_org_created_idx on consent_events (organization_id, created_at)`.execute(db);

  await db.schema
    .createTable('opt_outs')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('opted_out_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('keyword', 'text')
    .addPrimaryKeyConstraint('opt_outs_pkey', ['organization_id', 'phone'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['opt_outs', 'consent_events', 'contact_tags', 'tags', 'contacts']) await db.schema.dropTable(t).execute();
}
