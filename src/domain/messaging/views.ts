// Rows → public shapes. Provider names and provider message ids are never part of them.
import type { Selectable } from 'kysely';
import type { components } from '../../../generated/api.d.ts';
import type { MessagesTable } from '../../db/tables/messaging.ts';
import type { ConversationView } from '../../db/queries/conversations.ts';
import { toMoney } from './pricing.ts';

type S = components['schemas'];
const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toMessage(m: Selectable<MessagesTable>): S['Message'] {
  return {
    id: m.id,
    conversationId: m.conversation_id,
    contactId: m.contact_id,
    contactPhone: m.contact_phone,
    senderId: m.sender_id,
    direction: m.direction as S['Direction'],
    requestedChannel: (m.requested_channel as S['Channel'] | null) ?? null,
    channel: (m.channel as S['Channel'] | null) ?? null,
    fallbackUsed: m.fallback_used,
    fallbackReason: m.fallback_reason as S['FallbackReason'],
    messageType: (m.message_type as S['MessageType'] | null) ?? null,
    status: m.status as S['MessageStatus'],
    content: m.content as S['MessageContent'],
    segments: m.segments,
    cost: m.cost_units === null || m.direction === 'inbound' ? null : toMoney(m.cost_units),
    error: m.error_code ? { code: m.error_code, message: m.error_message ?? m.error_code } : null,
    heldUntil: iso(m.held_until),
    createdAt: m.created_at.toISOString(),
    sentAt: iso(m.sent_at),
    deliveredAt: iso(m.delivered_at),
    readAt: iso(m.read_at),
    revokedAt: iso(m.revoked_at),
  };
}

export function toConversation(c: ConversationView): S['Conversation'] {
  return {
    id: c.id,
    contactId: c.contact_id,
    contactPhone: c.contact_phone,
    senderId: c.sender_id,
    status: c.status as 'open' | 'closed',
    handledBy: c.handled_by as 'bot' | 'human',
    botId: c.bot_id,
    source: c.source_type as S['ConversationSourceType'],
    lastMessageAt: iso(c.last_message_at),
    lastMessagePreview: c.last_message_preview,
    unreadCount: Number(c.unread_count),
    createdAt: c.created_at.toISOString(),
  };
}
