// Compliance section: DNC, content rules, keyword rules, consent overrides.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One entry per phone per organization; the gate looks it up by (organization_id, phone) on every send.
  await db.schema
    .createTable('dnc_entries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('actor', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('dnc_entries_org_phone_key', ['organization_id', 'phone'])
    .execute();
  await sql`create index dnc_entries_org_created_idx on dnc_entries (organization_id, created_at desc, id desc)`.execute(db);
  // Phone-substring search (`search=5550188`): trigram index (pg_trgm is created by 0002).
  await sql`create index dnc_entries_phone_trgm_idx on dnc_entries using gin (phone gin_trgm_ops)`.execute(db);

  await db.schema
    .createTable('content_rules')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('pattern', 'text', (c) => c.notNull())
    .addColumn('pattern_type', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('case_sensitive', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('message_types', sql`text[]`, (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index content_rules_org_created_idx on content_rules (organization_id, created_at desc, id desc)`.execute(db);

  // Organization keyword rules; the global ones live in code (src/domain/compliance/keyword-rules.ts).
  await db.schema
    .createTable('keyword_rules')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('keyword', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('reply_text', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('keyword_rules_org_keyword_key', ['organization_id', 'keyword'])
    .execute();

  // 24-hour consent overrides (POST /v1/compliance/override). Each also has its ConsentAuditLog entry.
  await db.schema
    .createTable('compliance_overrides')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('actor', 'uuid', (c) => c.notNull())
    .addColumn('audit_log_id', 'uuid', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index compliance_overrides_contact_idx on compliance_overrides (organization_id, contact_id, expires_at desc)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['compliance_overrides', 'keyword_rules', 'content_rules', 'dnc_entries']) await db.schema.dropTable(t).execute();
}
