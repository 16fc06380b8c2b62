// Deprecated channels view: stored rows → the document's shapes (openapi/schemas/sender-id-channels.yaml `LegacyChannel`,
// `ChannelHealth`, `RcsSender`, `RcsTestDevice`). Agent details and phase come from the RCS_AGENT sender ID itself.
import type { components } from '../../../generated/api.d.ts';
import type { ChannelRow, RcsChannelSenderRow, RcsTestDeviceRow } from '../../db/queries/sender-ids/channels.ts';
import type { RcsAgentProfileRow, SenderRow } from '../../db/queries/sender-ids/senders.ts';

type S = components['schemas'];

export type ChannelHealthView = S['ChannelHealth'];

/** An RCS sender as the service loads it: the binding, its RCS_AGENT sender, the agent details, the devices. */
export type RcsSenderView = {
  binding: RcsChannelSenderRow;
  sender: SenderRow;
  profile: RcsAgentProfileRow | null;
  testDeviceCount: number;
};

export function toLegacyChannel(row: ChannelRow): S['LegacyChannel'] {
  return {
    id: row.id,
    type: row.type as S['LegacyChannel']['type'],
    name: row.name,
    senderIdId: row.sender_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toLegacyChannelWithHealth({
  channel,
  health,
}: {
  channel: ChannelRow;
  health: ChannelHealthView;
}): S['LegacyChannelWithHealth'] {
  return { ...toLegacyChannel(channel), health };
}

export function toRcsSender({ binding, sender, profile, testDeviceCount }: RcsSenderView): S['RcsSender'] {
  return {
    senderName: binding.sender_name,
    channelId: binding.channel_id,
    senderIdId: sender.id,
    displayName: profile?.display_name ?? sender.name.slice(0, 40),
    description: profile?.description ?? null,
    brandColor: profile?.brand_color ?? null,
    logoUrl: profile?.logo_url ?? null,
    phase: (sender.rcs_agent_phase ?? 'TESTING') as S['RcsSender']['phase'],
    testDeviceCount,
    createdAt: binding.created_at.toISOString(),
    updatedAt: new Date(
      Math.max(sender.updated_at.getTime(), profile?.updated_at.getTime() ?? 0, binding.created_at.getTime()),
    ).toISOString(),
  };
}

export function toRcsTestDevice(row: RcsTestDeviceRow): S['RcsTestDevice'] {
  return {
    phone: row.phone,
    status: row.status as S['RcsTestDevice']['status'],
    invitedAt: row.invited_at.toISOString(),
    acceptedAt: row.accepted_at?.toISOString() ?? null,
  };
}

export function toRcsSenderDetail(view: RcsSenderView & { devices: RcsTestDeviceRow[] }): S['RcsSenderDetail'] {
  return { ...toRcsSender(view), testDevices: view.devices.map(toRcsTestDevice) };
}
