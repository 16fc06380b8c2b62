// Chat-app templates registered by the organization (issue 33 item 10): the Templates section kept a canned
// catalogue in the carrier simulator, the same for every sender. A template is now registered for one CHATAPP_BUSINESS
// sender, submitted to its provider, and reviewed there; the review's answer (APPROVED, REJECTED with a reason,
// later PAUSED) comes back through the provider callback route. Only an APPROVED template of the very sender may be
// sent (the `template` content of a send), which is how a chat-app message reaches a contact outside the session.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table chatapp_templates (
    id uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations(id) on delete cascade,
    sender_id uuid not null references sender_ids(id) on delete cascade,
    name text not null check (name ~ '^[a-z0-9_]+$' and length(name) <= 512),
    language text not null check (length(language) between 2 and 15),
    category text not null check (category in ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
    status text not null check (status in ('PENDING', 'APPROVED', 'REJECTED', 'PAUSED')),
    components jsonb not null,
    variables jsonb not null,
    provider_template_id text,
    rejection_reason text check (length(rejection_reason) <= 1000),
    approved_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  // One template per sender, name and language (the platforms' own key); also the list's order.
  await sql`create unique index chatapp_templates_sender_name_idx on chatapp_templates (organization_id, sender_id, name, language)`.execute(
    db,
  );
}
