// Sender IDs section tables (protocols and voice forwarding; migration 0012). The sender_ids table itself is in core.ts.
import type { Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp } from './columns.ts';
import type { SenderProtocolStatus, SenderProtocolType } from './enums.ts';

/** Stored protocol config: every key that applies to the protocol, defaults filled in on enable. */
export type StoredProtocolConfig = {
  smartEncoding?: boolean;
  mmsTranscoding?: boolean;
  validityPeriodSeconds?: number;
  fallbackToSms?: boolean;
  fallbackSenderIdId?: string | null;
};

/** One protocol (SMS, MMS, RCS, CHATAPP) enabled, or formerly enabled, on a sender: at most one row per type. */
export interface SenderProtocolsTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  type: SenderProtocolType;
  status: SenderProtocolStatus;
  config: Json<StoredProtocolConfig>;
  status_reason: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Inbound-call forwarding of a number sender (one row per sender, kept with enabled false after a DELETE). */
export interface SenderVoiceForwardingsTable {
  sender_id: string;
  organization_id: string;
  enabled: boolean;
  destination: string;
  synced_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** The carrier simulator's voice side: the forwarding it was told to apply, per sender (system handle only). */
interface SimulatorVoiceForwardingsTable {
  sender_id: string;
  organization_id: string;
  provider: string;
  number: string | null;
  destination: string | null;
  enabled: boolean;
  updated_at: Timestamp;
}

export interface SenderIdsTables {
  sender_protocols: SenderProtocolsTable;
  sender_voice_forwardings: SenderVoiceForwardingsTable;
  simulator_voice_forwardings: SimulatorVoiceForwardingsTable;
}
