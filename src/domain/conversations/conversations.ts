// Conversations: one per contact and sender, created by whatever started it (an API send, an inbound message,
// a blast, a bot, an event or an acquisition enrollment) and reused afterwards. Reading them, their messages,
// their 24-hour session window and their source; sending inside one; handing them to a human or a bot.
import type { components } from '../../../generated/api.d.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import * as q from '../../db/queries/conversations/conversations.ts';
import * as messages from '../../db/queries/messages/messages.ts';
import { emitEvent } from '../webhooks/events.ts';
import { found } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { inTenantTransaction, queueOf } from '../messaging/context.ts';
import { handOffToBot } from '../bots/runtime.ts';
import { SESSION_HOURS } from '../messaging/conversation.ts';
import { send } from '../messaging/send.ts';

export function listConversations(tenant: Tenant, filter: q.ConversationFilter, page: PageRequest): Promise<Page<q.ConversationView>> {
  return q.listConversations(tenant.db, tenant.organizationId, filter, page);
}

export async function getConversation(tenant: Tenant, id: string): Promise<q.ConversationView> {
  return found(await q.getConversation(tenant.db, tenant.organizationId, id), 'Conversation');
}

/** A page of the conversation's messages, newest first; 404 when the conversation is not the organization's. */
export async function listConversationMessages(tenant: Tenant, id: string, page: PageRequest): Promise<Page<messages.MessageRow>> {
  await getConversation(tenant, id);
  return messages.listConversationMessages(tenant.db, tenant.organizationId, id, page);
}

export type Session = {
  conversation: q.ConversationView;
  state: 'active' | 'expired' | 'none';
  expiresAt: Date | null;
};

/** The 24-hour window opened by the last inbound message: none before any, expired once it has passed. */
export async function conversationSession(tenant: Tenant, id: string, now = new Date()): Promise<Session> {
  const conversation = await getConversation(tenant, id);
  const expiresAt = conversation.last_inbound_at ? new Date(conversation.last_inbound_at.getTime() + SESSION_HOURS * 3600_000) : null;
  const state = !expiresAt ? 'none' : expiresAt.getTime() > now.getTime() ? 'active' : 'expired';
  return { conversation, state, expiresAt };
}

type HandoffRequest = components['schemas']['ConversationHandoffRequest'];

/**
 * Hands the conversation to a human (idempotent: `conversation.handed_off` is raised once, by the change).
 * To a bot: the published bot of the organization takes the conversation and its flow starts at once
 * (src/domain/bots/runtime.ts); an unknown or unpublished `botId` answers 404 naming `body.botId`.
 */
export function handoffConversation(
  tenant: Tenant,
  services: Services,
  id: string,
  body: HandoffRequest,
  now = new Date(),
): Promise<q.ConversationView> {
  return inTenantTransaction(tenant, async (t) => {
    const c = await getConversation(t, id);
    if (body.to === 'bot') {
      await handOffToBot(t, services, c, body.botId); // 404 naming body.botId unless a published bot of the organization
      return getConversation(t, c.id);
    }
    const changed = await q.handOffToHuman(t.db, t.organizationId, c.id);
    if (changed) {
      await emitEvent(t.db, queueOf(services), {
        organizationId: t.organizationId,
        type: 'conversation.handed_off',
        data: {
          conversationId: c.id,
          senderIdId: c.sender_id,
          contactId: c.contact_id,
          contactPhone: c.contact_phone,
          channel: c.session_channel ?? 'SMS',
          botId: c.bot_id,
          initiatedBy: 'API',
          reason: body.note ?? null,
          handedOffAt: now.toISOString(),
        },
      });
    }
    return getConversation(t, c.id);
  });
}

type ConversationSendMessageRequest = components['schemas']['ConversationSendMessageRequest'];

/**
 * A message inside a conversation: to its contact, from its sender. The body names no id: an unknown or another
 * organization's conversation is the path's plain 404, and no body field is blamed.
 */
export async function sendConversationMessage(
  tenant: Tenant,
  services: Services,
  conversationId: string,
  body: ConversationSendMessageRequest,
): Promise<messages.MessageRow> {
  // Reads, then the send's one write (send): no transaction of its own is needed.
  const conversation = await getConversation(tenant, conversationId);
  return send(tenant, services, {
    ...body,
    contactId: conversation.contact_id,
    senderId: conversation.sender_id,
    // A conversation whose contact wrote by chat-app (its session, open or closed) and an approved template go by
    // chat-app (the send refuses a closed session's free-form message: CHATAPP_SESSION_CLOSED); otherwise RCS with fallback.
    channelType: conversation.session_channel === 'CHATAPP' || body.content.type === 'template' ? 'CHATAPP' : 'RCS',
    origin: 'conversation',
  });
}
