// Deprecated channels view and RCS agent details (Sender IDs section, migration 0016).
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp, TimestampDefault } from './columns.ts';
import type { Channel, RcsTestDeviceStatus } from './enums.ts';

/** A channel: one sender ID bound to one message channel under a name (the legacy /v1/channels view). */
export interface SenderChannelsTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  type: Channel;
  name: string;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** An RCS_AGENT sender's agent details, one row per sender. */
export interface RcsAgentProfilesTable {
  sender_id: string;
  organization_id: string;
  display_name: string;
  description: string | null;
  brand_color: string | null;
  logo_url: string | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** An RCS sender: an RCS_AGENT sender ID bound under an RCS channel by `sender_name`. */
export interface RcsChannelSendersTable {
  id: Generated<string>;
  organization_id: string;
  channel_id: string;
  sender_id: string;
  sender_name: string;
  created_at: CreatedAt;
}

/** A tester invite of an RCS agent (the sender ID). */
export interface RcsTestDevicesTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  phone: string;
  status: RcsTestDeviceStatus;
  invited_at: Timestamp;
  accepted_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface ChannelsTables {
  sender_channels: SenderChannelsTable;
  rcs_agent_profiles: RcsAgentProfilesTable;
  rcs_channel_senders: RcsChannelSendersTable;
  rcs_test_devices: RcsTestDevicesTable;
}
