// Conversations section: stored rows → the document's shapes. Provider names and provider message ids are
// never part of them.
import type { components } from '../../../generated/api.d.ts';
import type { ConversationView } from '../../db/queries/conversations/conversations.ts';
import type { MessageRow } from '../../db/queries/messages/messages.ts';
import type { Session } from './conversations.ts';
import type { StatusChange } from '../messaging/message-detail.ts';
import type { Preview } from '../messaging/preview.ts';
import { heldUntilOf } from '../messaging/message-events.ts';
import { toMoney } from '../messaging/pricing.ts';
import type { Rendering } from '../messaging/render.ts';

type S = components['schemas'];
const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toMessage(m: MessageRow): S['Message'] {
  return {
    id: m.id,
    conversationId: m.conversation_id,
    contactId: m.contact_id,
    contactPhone: m.contact_phone,
    senderId: m.sender_id,
    direction: m.direction,
    requestedChannel: m.requested_channel,
    channel: m.channel,
    fallbackUsed: m.fallback_used,
    fallbackReason: m.fallback_reason,
    messageType: m.message_type,
    status: m.status,
    content: m.content as S['MessageContent'],
    segments: m.segments,
    cost: m.cost_units === null || m.direction === 'inbound' ? null : toMoney(m.cost_units),
    error: m.error_code ? { code: m.error_code, message: m.error_message ?? m.error_code } : null,
    heldUntil: heldUntilOf(m),
    createdAt: m.created_at.toISOString(),
    sentAt: iso(m.sent_at),
    deliveredAt: iso(m.delivered_at),
    readAt: iso(m.read_at),
    revokedAt: iso(m.revoked_at),
  };
}

/** One message with its status history (getMessage). */
export function toMessageDetail(m: MessageRow, history: StatusChange[]): S['MessageDetail'] {
  return { ...toMessage(m), statusHistory: history.map((h) => ({ status: h.status, at: h.at.toISOString() })) };
}

/** An accepted outbound message (sendMessage, sendConversationMessage). */
export function toSendResult(m: MessageRow): S['MessageSendResult'] {
  return {
    messageId: m.id,
    conversationId: m.conversation_id,
    contactId: m.contact_id,
    senderId: m.sender_id,
    status: m.status,
    requestedChannel: m.requested_channel as S['Channel'],
    plannedChannel: m.planned_channel as S['Channel'],
    fallbackUsed: m.fallback_used,
    fallbackReason: m.fallback_reason,
    messageType: m.message_type as S['MessageType'],
    segments: m.segments,
    encoding: m.encoding,
    estimatedCost: toMoney(m.estimated_cost_units ?? 0),
    heldUntil: heldUntilOf(m),
    createdAt: m.created_at.toISOString(),
  };
}

export function toRevokeResult(m: MessageRow): S['RevokeMessageResult'] {
  return { messageId: m.id, status: 'revoked', revokedAt: m.revoked_at!.toISOString() };
}

function toPreviewRendering(r: Rendering, role: 'primary' | 'fallback'): S['MessagePreviewRendering'] {
  return {
    channel: r.channel,
    role,
    body: r.body,
    title: r.title,
    mediaUrl: r.mediaUrl,
    actions: r.actions,
    replies: r.replies,
    segments: r.segments,
    encoding: r.encoding,
    characters: r.characters,
    cost: toMoney(r.costUnits),
    warnings: r.warnings,
  };
}

export function toMessagePreview(p: Preview): S['MessagePreview'] {
  return {
    requestedChannel: p.requestedChannel,
    plannedChannel: p.plannedChannel,
    renderings: p.renderings.map(({ rendering, role }) => toPreviewRendering(rendering, role)),
    warnings: p.warnings,
  };
}

export function toConversation(c: ConversationView): S['Conversation'] {
  return {
    id: c.id,
    contactId: c.contact_id,
    contactPhone: c.contact_phone,
    senderId: c.sender_id,
    status: c.status,
    handledBy: c.handled_by,
    botId: c.bot_id,
    source: c.source_type,
    lastMessageAt: iso(c.last_message_at),
    lastMessagePreview: c.last_message_preview,
    unreadCount: Number(c.unread_count),
    createdAt: c.created_at.toISOString(),
  };
}

export function toConversationSession({ conversation: c, state, expiresAt }: Session): S['ConversationSession'] {
  return {
    conversationId: c.id,
    channel: c.session_channel,
    state,
    startedAt: iso(c.session_started_at),
    expiresAt: iso(expiresAt),
    lastInboundAt: iso(c.last_inbound_at),
  };
}

export function toConversationSource(c: ConversationView): S['ConversationSource'] {
  return {
    conversationId: c.id,
    type: c.source_type,
    blastId: c.source_blast_id,
    botId: c.source_bot_id,
    campaignId: c.source_campaign_id,
    firstMessageId: c.first_message_id ?? c.id,
    startedAt: c.created_at.toISOString(),
  };
}
