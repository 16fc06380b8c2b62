// SQL for the deprecated channels view (sender_channels, rcs_channel_senders, rcs_test_devices; migration 0016).
// Tenant-scoped through tenant(). Sender data is never stored here: a channel row binds a sender ID.
import { sql, type Selectable } from 'kysely';
import type { RcsChannelSendersTable, RcsTestDevicesTable, SenderChannelsTable } from '../../tables/channels.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { Channel, RcsTestDeviceStatus } from '../../tables/enums.ts';

export type ChannelRow = Selectable<SenderChannelsTable>;
export type RcsChannelSenderRow = Selectable<RcsChannelSendersTable>;
export type RcsTestDeviceRow = Selectable<RcsTestDevicesTable>;

/** Every channel of the organization, oldest first (legacy: not paginated). */
export function listChannels(db: TenantDb, organizationId: string): Promise<ChannelRow[]> {
  return tenant(db.selectFrom('sender_channels'), organizationId).selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

export function getChannel(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ChannelRow | undefined> {
  const q = tenant(db.selectFrom('sender_channels'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function insertChannel(
  db: TenantDb,
  organizationId: string,
  channel: { sender_id: string; type: Channel; name: string },
): Promise<ChannelRow> {
  return db
    .insertInto('sender_channels')
    .values({ ...channel, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateChannel(
  db: TenantDb,
  organizationId: string,
  id: string,
  patch: { sender_id: string; name: string },
): Promise<ChannelRow | undefined> {
  return tenant(db.updateTable('sender_channels'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the channel; its RCS sender bindings go with it (on delete cascade). False when there was none. */
export async function deleteChannel(db: TenantDb, organizationId: string, id: string): Promise<boolean> {
  const res = await tenant(db.deleteFrom('sender_channels'), organizationId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The RCS senders of one channel, oldest first. */
export function listRcsChannelSenders(db: TenantDb, organizationId: string, channelId: string): Promise<RcsChannelSenderRow[]> {
  return tenant(db.selectFrom('rcs_channel_senders'), organizationId)
    .selectAll()
    .where('channel_id', '=', channelId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

export function getRcsChannelSender(
  db: TenantDb,
  organizationId: string,
  channelId: string,
  senderName: string,
): Promise<RcsChannelSenderRow | undefined> {
  return tenant(db.selectFrom('rcs_channel_senders'), organizationId)
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('sender_name', '=', senderName)
    .executeTakeFirst();
}

/** Undefined when the name is already taken in the channel. */
export function insertRcsChannelSender(
  db: TenantDb,
  organizationId: string,
  row: { channel_id: string; sender_id: string; sender_name: string },
): Promise<RcsChannelSenderRow | undefined> {
  return db
    .insertInto('rcs_channel_senders')
    .values({ ...row, organization_id: organizationId })
    .onConflict((oc) => oc.columns(['organization_id', 'channel_id', 'sender_name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Test devices of one agent (sender ID), newest first. */
export function listRcsTestDevices(db: TenantDb, organizationId: string, senderId: string): Promise<RcsTestDeviceRow[]> {
  return tenant(db.selectFrom('rcs_test_devices'), organizationId)
    .selectAll()
    .where('sender_id', '=', senderId)
    .orderBy('invited_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Number of test devices per agent. */
export async function countRcsTestDevices(
  db: TenantDb,
  organizationId: string,
  senderIds: readonly string[],
): Promise<Map<string, number>> {
  if (senderIds.length === 0) return new Map();
  const rows = await tenant(db.selectFrom('rcs_test_devices'), organizationId)
    .select(['sender_id', sql<string>`count(*)`.as('n')])
    .where('sender_id', 'in', [...senderIds])
    .groupBy('sender_id')
    .execute();
  return new Map(rows.map((r) => [r.sender_id, Number(r.n)]));
}

/** Undefined when the phone is already registered on the agent. */
export function insertRcsTestDevice(
  db: TenantDb,
  organizationId: string,
  row: { sender_id: string; phone: string; status: RcsTestDeviceStatus; invited_at: Date; accepted_at: Date | null },
): Promise<RcsTestDeviceRow | undefined> {
  return db
    .insertInto('rcs_test_devices')
    .values({ ...row, organization_id: organizationId })
    .onConflict((oc) => oc.columns(['organization_id', 'sender_id', 'phone']).doNothing())
    .returningAll()
    .executeTakeFirst();
}
