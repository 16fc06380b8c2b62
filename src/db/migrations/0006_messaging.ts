// Conversations, messages and Idempotency-Key records. Messages are indexed for a conversation's history,
// the message report (millions of rows per organization: by created_at, status, channel), receipts (by the
// provider's message id) and the dispatcher (by status).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open'))
    .addColumn('handled_by', 'text', (c) => c.notNull().defaultTo('human'))
    .addColumn('bot_id', 'uuid')
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('source_blast_id', 'uuid')
    .addColumn('source_bot_id', 'uuid')
    .addColumn('source_campaign_id', 'uuid')
    .addColumn('first_message_id', 'uuid')
    .addColumn('last_message_at', 'timestamptz')
    .addColumn('last_message_preview', 'text')
    .addColumn('last_inbound_at', 'timestamptz')
    .addColumn('last_outbound_at', 'timestamptz')
    .addColumn('session_channel', 'text')
    .addColumn('session_started_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('conversations_org_contact_sender_key', ['organization_id', 'contact_id', 'sender_id'])
    .execute();
  await sql`create index conversations_org_last_idx on conversations (organization_id, last_message_at desc nulls last, id desc)`.execute(
    db,
  );

  await db.schema
    .createTable('messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('conversation_id', 'uuid', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid', (c) => c.notNull())
    .addColumn('contact_phone', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'uuid', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('requested_channel', 'text')
    .addColumn('planned_channel', 'text')
    .addColumn('channel', 'text')
    .addColumn('fallback_used', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('fallback_reason', 'text')
    .addColumn('fallback_allowed', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('message_type', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('content', 'jsonb', (c) => c.notNull())
    .addColumn('segments', 'integer', (c) => c.notNull())
    .addColumn('encoding', 'text')
    .addColumn('cost_units', 'integer')
    .addColumn('estimated_cost_units', 'integer')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('held_until', 'timestamptz')
    .addColumn('provider', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('read_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('receipt_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index messages_conversation_idx on messages (organization_id, conversation_id, created_at desc, id desc)`.execute(db);
  await sql`create index messages_org_created_idx on messages (organization_id, created_at desc, id desc)`.execute(db);
  await sql`create index messages_org_status_idx on messages (organization_id, status, created_at desc)`.execute(db);
  await sql`create unique index messages_provider_id_key on messages (provider, provider_message_id) where provider_message_id is not null`.execute(
    db,
  );

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['organization_id', 'key'])
    .execute();
  await sql`create index idempotency_keys_created_idx on idempotency_keys (created_at)`.execute(db);

  // Messages per second a sender may hand to its provider (carriers' per-number or per-campaign limits).
  await sql`alter table sender_ids add column throughput_per_second integer not null default 100`.execute(db);
  // rate-limiter-flexible's PostgreSQL store (its own table layout; infrastructure, keyed by sender id).
  await sql`create table rate_limits (key varchar(255) primary key, points integer not null default 0, expire bigint)`.execute(db);

  // A number belongs to one sender: inbound messages are routed by it.
  await sql`create unique index sender_ids_phone_key on sender_ids (phone_number) where phone_number is not null`.execute(db);

  // Process-wide settings shared by every API and worker process (e.g. the carrier simulator's signing secret).
  await db.schema
    .createTable('service_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  // The carrier simulator's own records, as a carrier sandbox keeps them: one row per message it accepted
  // (unique dedupe key, so a repeated send never reaches the handset twice), plus a count of send calls.
  await db.schema
    .createTable('simulator_messages')
    .addColumn('provider_message_id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to_phone', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('send_calls', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('revoked', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('accepted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sender_ids drop column throughput_per_second`.execute(db);
  await sql`drop index if exists sender_ids_phone_key`.execute(db);
  for (const t of ['rate_limits', 'simulator_messages', 'service_settings', 'idempotency_keys', 'messages', 'conversations'])
    await db.schema.dropTable(t).execute();
}
