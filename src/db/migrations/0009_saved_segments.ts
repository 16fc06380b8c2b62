// Saved segments: POST /v1/segments/resolve stores the query it evaluated and answers its id, the `segmentId`
// that blasts take. One row per distinct query (canonical JSON, SHA-256) per organization: the unique index is
// the upsert's conflict target, so the same query always finds the same row and id. The query is kept, not the
// matching ids: a blast evaluates it again when sending starts.
// No index on last_used_at: every resolve touches it, and an indexed column would make each of those updates a
// non-HOT one; the daily purge (src/jobs/contacts.ts) scans this small table (one row per distinct query) instead.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('saved_segments')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // Hex SHA-256 of the canonical JSON of `query`.
    .addColumn('query_hash', 'text', (c) => c.notNull())
    .addColumn('query', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index saved_segments_org_query_idx on saved_segments (organization_id, query_hash)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('saved_segments').execute();
}
