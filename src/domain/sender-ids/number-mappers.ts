// Sender IDs section, numbers: stored rows and inventory rows → the document's shapes.
import type { components } from '../../../generated/api.d.ts';
import type { NumberRow } from '../../db/queries/sender-ids/numbers.ts';
import type { SenderRow } from '../../db/queries/sender-ids/senders.ts';
import type { InventoryNumber } from '../../providers/provider.ts';

type S = components['schemas'];

export const PENDING_REASON = 'Waiting for the upstream campaign to reach REGISTERED.';

const money = (amount: string | null): S['Money'] | null => (amount === null ? null : { amount, currency: 'USD' });

export function toSenderIdNumber(row: NumberRow): S['SenderIdNumber'] {
  return {
    id: row.id,
    number: row.number,
    numberKey: row.number_key,
    inventoryType: row.inventory_type as S['SenderIdInventoryType'],
    provider: row.provider as S['SenderIdProvider'],
    source: row.source as S['SenderIdNumber']['source'],
    status: row.status as S['SenderIdNumberStatus'],
    senderIdId: row.sender_id,
    countryCode: row.country_code,
    region: row.region,
    locality: row.locality,
    capabilities: row.capabilities as S['SenderIdNumberCapability'][],
    monthlyCost: money(row.monthly_cost),
    billingStartedAt: row.billing_started_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    releasedAt: row.released_at?.toISOString() ?? null,
  };
}

/** The sender a purchase or import just made PENDING: not send-ready, no protocols yet, backed by `lease`. */
export function toPendingSender(sender: SenderRow, lease: NumberRow): S['SenderId'] {
  return {
    id: sender.id,
    type: sender.type as S['SenderIdType'],
    status: sender.status as S['SenderIdStatus'],
    provider: (sender.provider ?? lease.provider) as S['SenderIdProvider'],
    name: sender.name,
    address: sender.phone_number ?? lease.number,
    countryCode: sender.country_code ?? lease.country_code,
    sendReady: false,
    rcsAgentPhase: null,
    numberId: lease.id,
    protocols: [],
    statusReason: sender.status_reason ?? PENDING_REASON,
    suspendedBy: null,
    createdAt: sender.created_at.toISOString(),
    updatedAt: sender.updated_at.toISOString(),
    activatedAt: null,
    suspendedAt: null,
    deactivatedAt: null,
  };
}

export function toAvailableNumber(row: InventoryNumber, proof: { proof: string; expiresAt: Date } | null): S['SenderIdAvailableNumber'] {
  return {
    numberKey: row.numberKey,
    number: row.number,
    inventoryType: row.inventoryType,
    provider: row.provider,
    countryCode: row.countryCode,
    region: row.region,
    locality: row.locality,
    capabilities: row.capabilities,
    monthlyCost: money(row.monthlyCost),
    purchasable: row.purchasable,
    selectionProof: proof?.proof ?? null,
    selectionProofExpiresAt: proof?.expiresAt.toISOString() ?? null,
  };
}
