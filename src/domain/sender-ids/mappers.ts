// Sender IDs core: stored rows → the document's shapes (openapi/schemas/sender-ids.yaml `SenderId`).
import type { components } from '../../../generated/api.d.ts';
import type { SenderProtocolRow } from '../../db/queries/sender-ids/protocols.ts';
import type { RcsAgentProfileRow, SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { toSenderProtocol } from './protocol-mappers.ts';

type SenderId = components['schemas']['SenderId'];
const PROTOCOL_ORDER = ['SMS', 'MMS', 'RCS', 'CHATAPP'];

/** A sender row with its protocol rows (and an RCS_AGENT's agent details, when loaded), as the service loads it. */
export type SenderWithProtocols = { row: SenderRow; protocols: readonly SenderProtocolRow[]; rcsAgent?: RcsAgentProfileRow | null };

/** An RCS_AGENT's stored agent details → `RcsAgentDetails`. */
function toRcsAgentDetails(profile: RcsAgentProfileRow): components['schemas']['RcsAgentDetails'] {
  return {
    displayName: profile.display_name,
    description: profile.description,
    brandColor: profile.brand_color,
    logoUrl: profile.logo_url,
  };
}

/** One sender with its protocols (any order; answered SMS, MMS, RCS, CHATAPP). */
export function toSenderId({ row, protocols, rcsAgent }: SenderWithProtocols): SenderId {
  return {
    id: row.id,
    type: row.type as SenderId['type'],
    status: row.status as SenderId['status'],
    provider: row.provider as SenderId['provider'],
    name: row.name,
    address: row.phone_number ?? row.address,
    countryCode: row.country_code,
    sendReady: row.send_ready,
    throughputPerSecond: row.throughput_per_second,
    rcsAgentPhase: row.type === 'RCS_AGENT' ? ((row.rcs_agent_phase ?? 'TESTING') as SenderId['rcsAgentPhase']) : null,
    numberId: row.number_id,
    protocols: [...protocols].sort((a, b) => PROTOCOL_ORDER.indexOf(a.type) - PROTOCOL_ORDER.indexOf(b.type)).map(toSenderProtocol),
    statusReason: row.status === 'ACTIVE' ? null : row.status_reason,
    suspendedBy: row.status === 'SUSPENDED' ? (row.suspended_by as SenderId['suspendedBy']) : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    activatedAt: row.activated_at?.toISOString() ?? null,
    suspendedAt: row.status === 'SUSPENDED' ? (row.suspended_at?.toISOString() ?? null) : null,
    deactivatedAt: row.deactivated_at?.toISOString() ?? null,
    rcsAgent: row.type === 'RCS_AGENT' && rcsAgent ? toRcsAgentDetails(rcsAgent) : null,
  };
}
