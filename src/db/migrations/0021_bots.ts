// Bots section: bots (draft and published flows, event triggers), their revisions (one per draft version) and
// testers. Flows are jsonb; the status is kept by the service's transition table (src/domain/bots/state.ts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table bots (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100),
      description text check (length(description) <= 500),
      channel text not null check (channel in ('RCS', 'SMS', 'MMS', 'CHATAPP')),
      sender_id uuid,
      status text not null default 'DRAFT' check (status in ('DRAFT', 'PUBLISHED', 'MODIFIED')),
      version integer not null default 1 check (version >= 1),
      published_version integer,
      draft_flow jsonb not null,
      published_flow jsonb,
      triggers jsonb not null default '[]'::jsonb,
      published_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint bots_org_id_key unique (organization_id, id)
    )`.execute(db);
  await sql`create index bots_org_updated_idx on bots (organization_id, updated_at desc, id desc)`.execute(db);

  await sql`
    create table bot_revisions (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      bot_id uuid not null,
      version integer not null check (version >= 1),
      flow jsonb not null,
      created_at timestamptz not null default now(),
      published_at timestamptz,
      constraint bot_revisions_bot_fkey foreign key (organization_id, bot_id) references bots (organization_id, id) on delete cascade,
      constraint bot_revisions_bot_version_key unique (bot_id, version)
    )`.execute(db);

  await sql`
    create table bot_testers (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      bot_id uuid not null,
      contact_id uuid not null,
      phone text not null,
      rcs_invite_status text not null,
      rcs_invite_sent_at timestamptz,
      rcs_invite_error text,
      created_at timestamptz not null default now(),
      constraint bot_testers_bot_fkey foreign key (organization_id, bot_id) references bots (organization_id, id) on delete cascade,
      constraint bot_testers_bot_contact_key unique (bot_id, contact_id)
    )`.execute(db);

  // One running flow per conversation: the published flow it started with, the node it waits at, captured variables.
  await sql`
    create table bot_sessions (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      bot_id uuid not null,
      conversation_id uuid not null,
      contact_id uuid not null,
      flow jsonb not null,
      node_id text,
      variables jsonb not null default '{}'::jsonb,
      status text not null default 'ACTIVE' check (status in ('ACTIVE', 'ENDED', 'HANDED_OFF')),
      last_inbound_message_id uuid,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint bot_sessions_bot_fkey foreign key (organization_id, bot_id) references bots (organization_id, id) on delete cascade
    )`.execute(db);
  await sql`create unique index bot_sessions_active_key on bot_sessions (organization_id, conversation_id) where status = 'ACTIVE'`.execute(
    db,
  );

  // When an event trigger last started a flow for a contact (the per-contact cool-down).
  await sql`
    create table bot_trigger_fires (
      organization_id uuid not null references organizations (id) on delete cascade,
      bot_id uuid not null,
      trigger_id text not null,
      contact_id uuid not null,
      fired_at timestamptz not null,
      constraint bot_trigger_fires_pkey primary key (organization_id, bot_id, trigger_id, contact_id),
      constraint bot_trigger_fires_bot_fkey foreign key (organization_id, bot_id) references bots (organization_id, id) on delete cascade
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists bot_trigger_fires`.execute(db);
  await sql`drop table if exists bot_sessions`.execute(db);
  await sql`drop table if exists bot_testers`.execute(db);
  await sql`drop table if exists bot_revisions`.execute(db);
  await sql`drop table if exists bots`.execute(db);
}
