// Landing pages (Common section): the pages of an organization (slug unique per organization; the public route
// finds a PUBLISHED page by organization and slug) and the submissions of their public form, with the consent evidence
// (the text shown, IP, user agent). Deleting a page deletes its submissions; the contacts they made are kept.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table landing_pages (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100),
      slug text not null check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$'),
      status text not null default 'DRAFT' check (status in ('DRAFT', 'PUBLISHED', 'UNPUBLISHED', 'ARCHIVED')),
      template_id uuid,
      acquisition_campaign_id uuid,
      title text not null,
      headline text not null,
      body text,
      hero_asset_id uuid,
      form_fields jsonb not null,
      consent jsonb not null,
      submit_label text not null,
      success_message text not null,
      redirect_url text,
      tag_ids jsonb not null default '[]',
      theme jsonb not null,
      published_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index landing_pages_org_slug on landing_pages (organization_id, slug)`.execute(db);
  await sql`create index landing_pages_org_created on landing_pages (organization_id, created_at desc, id desc)`.execute(db);

  await sql`
    create table landing_page_submissions (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      landing_page_id uuid not null references landing_pages (id) on delete cascade,
      fields jsonb not null,
      phone text not null,
      contact_id uuid not null,
      contact_action text not null check (contact_action in ('created', 'linked')),
      consent_given boolean not null,
      consent_text text not null,
      consent_message_type text not null,
      ip text,
      user_agent text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index landing_page_submissions_page on landing_page_submissions (organization_id, landing_page_id, created_at desc, id desc)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists landing_page_submissions`.execute(db);
  await sql`drop table if exists landing_pages`.execute(db);
}
