// Analytics exports (POST /v1/analytics/export, asynchronous mode): one row per export; the job analytics.export
// writes the CSV to the object store under `storage_key` and moves `status` pending → complete (or failed, with the
// error). The download link is valid until `expires_at` (one hour after creation).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table analytics_exports (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      type text not null,
      start_date text not null,
      end_date text not null,
      filters jsonb not null default '{}'::jsonb,
      status text not null default 'pending' check (status in ('pending', 'complete', 'failed')),
      storage_key text,
      error_code text,
      error_message text,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      completed_at timestamptz
    )`.execute(db);
  await sql`create index analytics_exports_org_idx on analytics_exports (organization_id, created_at desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists analytics_exports`.execute(db);
}
