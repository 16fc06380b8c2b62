// Public sign-ups (the enrollment endpoint, landing pages tied to a campaign) could be forged at will: each one
// created or changed a contact, recorded MARKETING consent and sent a billed text. Now:
//  - a campaign says whether public sign-ups are confirmed by the handset (confirmed_opt_in, on for every
//    campaign, existing ones included), which destination countries it takes (allowed_countries; null: the
//    sender's country) and how many public sign-ups an hour it takes (max_signups_per_hour);
//  - a public sign-up that needs the handset's YES, and any public sign-up of a phone that is already a contact,
//    waits in acquisition_pending_enrollments until the YES reply to the sender that asked (sender_id) or its
//    expiry (expires_at, 24 h; then an hourly job removes it). It keeps what the sign-up said, applied only then.
// A pending row refers to its campaign by (organization_id, campaign_id), a unique pair of acquisition_campaigns
// (added here), so the cascade of a campaign delete is a prefix of the unique key on every PostgreSQL version
// (see 0039) and a row cannot name another organization's campaign.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table acquisition_campaigns
      add column confirmed_opt_in boolean not null default true,
      add column allowed_countries text[] check (cardinality(allowed_countries) between 1 and 250),
      add column max_signups_per_hour integer not null default 1000 check (max_signups_per_hour between 1 and 100000)`.execute(db);
  await sql`create unique index if not exists acquisition_campaigns_org_id_key on acquisition_campaigns (organization_id, id)`.execute(db);
  await sql`
    create table acquisition_pending_enrollments (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      campaign_id uuid not null,
      contact_id uuid not null,
      phone text not null,
      sender_id uuid not null,
      contact_created boolean not null,
      name text check (length(name) <= 100),
      attributes jsonb not null default '{}'::jsonb,
      tag_ids uuid[] not null default '{}',
      consent_text text not null,
      ip text,
      user_agent text,
      confirmation_message_id uuid,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      constraint acquisition_pending_enrollments_campaign_fkey foreign key (organization_id, campaign_id)
        references acquisition_campaigns (organization_id, id) on delete cascade,
      constraint acquisition_pending_enrollments_campaign_phone_key unique (organization_id, campaign_id, phone)
    )`.execute(db);
  // The inbound YES looks up the live sign-ups of one phone on one sender.
  await sql`create index acquisition_pending_enrollments_phone_idx on acquisition_pending_enrollments (organization_id, phone, sender_id)`.execute(
    db,
  );
  // The hourly purge of expired rows, across organizations.
  await sql`create index acquisition_pending_enrollments_expiry_idx on acquisition_pending_enrollments (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists acquisition_pending_enrollments`.execute(db);
  await sql`drop index if exists acquisition_campaigns_org_id_key`.execute(db);
  await sql`alter table acquisition_campaigns drop column if exists confirmed_opt_in, drop column if exists allowed_countries, drop column if exists max_signups_per_hour`.execute(
    db,
  );
}
