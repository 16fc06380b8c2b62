// Deprecated channels view and RCS agent details (openapi/paths/v1/channels…,
// openapi/schemas/sender-id-channels.yaml `LegacyChannel`, `RcsSender`; sender-ids.yaml `RcsAgentDetails`).
// No second store of senders: a channel is a named binding of one sender ID to one message channel, an RCS sender
// is a named binding of an RCS_AGENT sender ID under an RCS channel. What belongs to the sender lives on it:
// - rcs_agent_profiles: an RCS_AGENT's display name, description, colour and logo, one row per sender (written by
//   createSenderId/updateSenderId `rcsAgent` and by the deprecated createRcsSender alike);
// - rcs_test_devices: the agent's tester invites (kept when a channel binding is deleted).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sender_channels')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('RCS', 'SMS', 'MMS', 'CHATAPP')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index sender_channels_org_created_idx on sender_channels (organization_id, created_at, id)`.execute(db);

  await db.schema
    .createTable('rcs_agent_profiles')
    .addColumn('sender_id', 'uuid', (c) => c.primaryKey().references('sender_ids.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('brand_color', 'text')
    .addColumn('logo_url', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('rcs_channel_senders')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('channel_id', 'uuid', (c) => c.notNull().references('sender_channels.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('sender_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index rcs_channel_senders_name_idx on rcs_channel_senders (organization_id, channel_id, sender_name)`.execute(db);

  await db.schema
    .createTable('rcs_test_devices')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('INVITED', 'ACCEPTED', 'DECLINED', 'FAILED')`))
    .addColumn('invited_at', 'timestamptz', (c) => c.notNull())
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index rcs_test_devices_sender_phone_idx on rcs_test_devices (organization_id, sender_id, phone)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['rcs_test_devices', 'rcs_channel_senders', 'rcs_agent_profiles', 'sender_channels'])
    await db.schema.dropTable(t).execute();
}
