// Sender IDs section, protocols and voice forwarding: stored rows → the document's shapes.
import type { components } from '../../../generated/api.d.ts';
import type { SenderProtocolRow } from '../../db/queries/sender-ids/protocols.ts';
import type { VoiceForwardingRow } from '../../db/queries/sender-ids/voice-forwarding.ts';

type SenderProtocol = components['schemas']['SenderProtocol'];
type VoiceForwarding = components['schemas']['VoiceForwarding'];

/** A protocol row as `SenderProtocol`; its config carries every key that applies to the protocol. */
export function toSenderProtocol(row: SenderProtocolRow): SenderProtocol {
  return {
    type: row.type as SenderProtocol['type'],
    status: row.status as SenderProtocol['status'],
    config: { ...row.config },
    statusReason: row.status_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toVoiceForwarding(row: VoiceForwardingRow): VoiceForwarding {
  return {
    senderIdId: row.sender_id,
    enabled: row.enabled,
    destination: row.destination,
    syncedAt: row.synced_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
