// Webhook payloads for message events (openapi/schemas/webhook-event-data.yaml: MessageStatusWebhookData). Provider
// names and provider message ids never appear.
import type { components } from '../../../generated/api.d.ts';
import type { MessageRow } from '../../db/queries/messages/messages.ts';
import type { NewEvent } from '../webhooks/events.ts';
import { toMoney } from './pricing.ts';

type MessageStatusData = components['schemas']['MessageStatusWebhookData'];

const iso = (d: Date | null) => d?.toISOString() ?? null;

/**
 * `heldUntil` as documented: set while the message is `held`, null otherwise. The stored value outlives the hold
 * (a message held at acceptance or at dispatch keeps it once sent), so the status decides.
 */
export const heldUntilOf = (m: Pick<MessageRow, 'status' | 'held_until'>): string | null =>
  m.status === 'held' ? iso(m.held_until) : null;

function messageEventData(m: MessageRow, sender: { id: string }): MessageStatusData {
  return {
    messageId: m.id,
    senderIdId: sender.id,
    contactId: m.contact_id,
    contactPhone: m.contact_phone,
    conversationId: m.conversation_id,
    blastId: null,
    direction: 'outbound',
    status: m.status,
    messageType: m.message_type ?? 'MARKETING',
    requestedChannel: m.requested_channel ?? m.planned_channel ?? 'SMS',
    channel: m.channel,
    fallbackUsed: m.fallback_used,
    fallbackReason: m.fallback_reason,
    segments: m.segments,
    price: m.cost_units === null ? null : toMoney(m.cost_units),
    error: m.error_code ? { code: m.error_code, description: m.error_message ?? m.error_code } : null,
    heldUntil: heldUntilOf(m),
    queuedAt: m.created_at.toISOString(),
    sentAt: iso(m.sent_at),
    deliveredAt: iso(m.delivered_at),
    readAt: iso(m.read_at),
    failedAt: iso(m.failed_at),
    revokedAt: iso(m.revoked_at),
    occurredAt: new Date().toISOString(),
  } as MessageStatusData;
}

export type MessageEventName =
  'message.queued' | 'message.held' | 'message.sent' | 'message.delivered' | 'message.read' | 'message.failed' | 'message.revoked';

/** The event for a message's new status (the row's status matches the event name by construction). */
export function messageEvent(type: MessageEventName, m: MessageRow, sender: { id: string }): NewEvent {
  return { organizationId: m.organization_id, type, data: messageEventData(m, sender) } as NewEvent;
}
