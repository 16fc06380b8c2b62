// Events section: recorded business events (POST /v1/events, /v1/events/batch), acquisition campaigns and their
// enrollments. An enrollment is unique per campaign and phone (enrollment is idempotent per phone and campaign);
// it keeps the consent wording, client IP and user agent it was given with (the consent_events row is the audit
// log entry; this row holds what the audit log has no column for).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100),
      contact_id uuid not null,
      contact_created boolean not null default false,
      properties jsonb not null default '{}'::jsonb,
      message_type text not null,
      occurred_at timestamptz not null,
      received_at timestamptz not null default now(),
      outcomes jsonb not null default '[]'::jsonb
    )`.execute(db);
  await sql`create index events_org_name_idx on events (organization_id, name, received_at desc)`.execute(db);
  await sql`create index events_org_contact_idx on events (organization_id, contact_id, received_at desc)`.execute(db);

  await sql`
    create table acquisition_campaigns (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100),
      description text check (length(description) <= 500),
      type text not null check (type in ('KEYWORD', 'QR_CODE', 'WEB_FORM', 'LINK')),
      status text not null check (status in ('DRAFT', 'ACTIVE', 'PAUSED', 'ENDED')),
      list_id uuid not null,
      keyword text check (keyword ~ '^[A-Z0-9]{1,20}$'),
      shortcode text,
      sender_id uuid,
      welcome_message text,
      consent_text text not null,
      redirect_url text,
      starts_at timestamptz,
      ends_at timestamptz,
      qr_code_generated_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((type = 'KEYWORD') = (keyword is not null and shortcode is not null))
    )`.execute(db);
  await sql`create index acquisition_campaigns_org_idx on acquisition_campaigns (organization_id, created_at desc)`.execute(db);
  // One live campaign per keyword and short code (ENDED ones release it; a deleted one is gone).
  await sql`create unique index acquisition_campaigns_keyword_key on acquisition_campaigns (organization_id, shortcode, keyword) where keyword is not null and status <> 'ENDED'`.execute(
    db,
  );

  await sql`
    create table acquisition_enrollments (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      campaign_id uuid not null references acquisition_campaigns (id) on delete cascade,
      contact_id uuid,
      phone text not null,
      contact_created boolean not null,
      welcome_message_id uuid,
      consent_text text not null,
      consent_event_id uuid,
      via text not null check (via in ('api', 'public', 'keyword')),
      ip text,
      user_agent text,
      created_at timestamptz not null default now(),
      constraint acquisition_enrollments_campaign_phone_key unique (organization_id, campaign_id, phone)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists acquisition_enrollments`.execute(db);
  await sql`drop table if exists acquisition_campaigns`.execute(db);
  await sql`drop table if exists events`.execute(db);
}
