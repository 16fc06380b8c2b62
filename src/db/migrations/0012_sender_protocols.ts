// Sender IDs, protocols and voice forwarding (openapi/schemas/sender-id-protocols.yaml `SenderProtocol`, `VoiceForwarding`).
// sender_protocols: at most one row per sender and protocol type; a DISABLED row keeps its config. A sender with
// no rows at all sends as before this migration (src/domain/sender-ids/protocols.ts, `channelAvailability`).
// sender_voice_forwardings: one row per sender once forwarding was configured (kept, enabled false, after DELETE).
// simulator_voice_forwardings: what the carrier simulator was told to apply (its voice side), system handle only.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sender_protocols')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('sender_ids.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('SMS', 'MMS', 'RCS', 'CHATAPP')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('PENDING', 'ACTIVE', 'FAILED', 'DISABLED')`))
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index sender_protocols_sender_type_idx on sender_protocols (organization_id, sender_id, type)`.execute(db);

  await db.schema
    .createTable('sender_voice_forwardings')
    .addColumn('sender_id', 'uuid', (c) => c.primaryKey().references('sender_ids.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('synced_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('simulator_voice_forwardings')
    .addColumn('sender_id', 'uuid', (c) => c.primaryKey())
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('number', 'text')
    .addColumn('destination', 'text')
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['simulator_voice_forwardings', 'sender_voice_forwardings', 'sender_protocols']) await db.schema.dropTable(t).execute();
}
