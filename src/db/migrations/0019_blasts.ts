// Blasts section: the blast (settings, content source, audience definition, state) and its recipients. A
// recipient row is the idempotency unit of sending: one row per (blast, contact), claimed (FOR UPDATE SKIP
// LOCKED) in the same transaction that accepts its message, so a retried or concurrent batch never sends twice.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table blasts (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 200),
      status text not null check (status in ('DRAFT', 'SCHEDULED', 'SENDING', 'DISPATCHED', 'SENT', 'FAILED', 'CANCELLED')),
      message_type text not null,
      sender_id uuid not null,
      fallback_to_sms boolean not null,
      content_source text not null check (content_source in ('bot', 'content', 'variants')),
      bot_id uuid,
      content_json jsonb,
      variants jsonb,
      segment_id uuid,
      contact_ids jsonb not null default '[]',
      recipient_count integer,
      scheduled_at timestamptz,
      launched_at timestamptz,
      dispatched_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz,
      failure_reason jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint blasts_org_id_key unique (organization_id, id)
    )`.execute(db);
  await sql`create index blasts_org_created_idx on blasts (organization_id, created_at desc, id desc)`.execute(db);
  await sql`create index blasts_segment_idx on blasts (segment_id) where segment_id is not null`.execute(db);

  await sql`
    create table blast_recipients (
      organization_id uuid not null,
      blast_id uuid not null,
      contact_id uuid not null,
      batch integer not null,
      variant_key text,
      status text not null check (status in ('pending', 'accepted', 'skipped', 'cancelled')),
      skip_reason text,
      message_id uuid,
      updated_at timestamptz not null default now(),
      primary key (blast_id, contact_id),
      constraint blast_recipients_blast_fkey foreign key (organization_id, blast_id) references blasts (organization_id, id) on delete cascade
    )`.execute(db);
  await sql`create index blast_recipients_batch_idx on blast_recipients (blast_id, batch) where status = 'pending'`.execute(db);
  await sql`create index blast_recipients_message_idx on blast_recipients (message_id) where message_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists blast_recipients`.execute(db);
  await sql`drop table if exists blasts`.execute(db);
}
