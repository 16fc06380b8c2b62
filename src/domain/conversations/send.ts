// Accepting one outbound message: the single path every sender uses (direct sends, conversations, keyword
// replies; later blasts, bots and events). Validate → compliance gate → channel plan → price → persist →
// enqueue dispatch, all in one transaction of the tenant (the caller's when it is in one, e.g. the
// Idempotency-Key's), so an accepted message and its dispatch job commit together (pg-boss enqueues through
// the same transaction) and a refused one leaves nothing behind.
import { fromKysely } from 'pg-boss';
import type { components } from '../../../generated/api.d.ts';
import * as contacts from '../../db/queries/conversations/contacts.ts';
import * as conversations from '../../db/queries/conversations/conversations.ts';
import * as messages from '../../db/queries/conversations/messages.ts';
import { evaluateCompliance } from '../compliance/gate.ts';
import { badRequest, bodyField, notFound, unknownReference, unprocessable, type ErrorCode } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { emitEvent } from '../webhooks/events.ts';
import { inTenantTransaction, queueOf } from './context.ts';
import { getConversation, openConversation, SESSION_HOURS, type ConversationSource } from './conversations.ts';
import { DISPATCH_QUEUE } from './dispatch.ts';
import { messageEvent } from './message-events.ts';
import { channelAccepts, fallbackChannelFor, render, type Channel, type SendContent } from './render.ts';
import { resolveSender } from './senders.ts';
import { channelAvailability } from '../sender-ids/protocols.ts';

export type MessageType = components['schemas']['MessageType'];
export type MessageRow = messages.MessageRow;

export type SendRequest = {
  contactId: string;
  senderId?: string;
  channelType?: Channel;
  messageType?: MessageType;
  fallbackToSms?: boolean;
  content: SendContent;
  origin: 'api' | 'conversation' | 'keyword_reply' | 'blast' | 'bot' | 'event';
  conversationSource?: ConversationSource;
  /** Keyword replies (STOP/HELP confirmations) must reach even an opted-out number: they skip the gate. */
  skipComplianceGate?: boolean;
  /**
   * A blast's test send goes now, inside the recipient's quiet hours too (testBlast's documented rule); every
   * other rule of the gate (DNC, opt-out, consent, content) still applies.
   */
  ignoreQuietHours?: boolean;
  /**
   * Where the request named `contactId` and `senderId` (`body.contactId`), for the 404 of an unknown one
   * (`unknownReference`). Absent when the ids come from stored data (a conversation, an inbound message).
   */
  fields?: { contactId?: string; senderId?: string };
  now?: Date;
};

export type ChannelPlan = {
  requested: Channel;
  planned: Channel;
  fallbackUsed: boolean;
  fallbackReason: components['schemas']['FallbackReason'];
};

const GATE_CODES = new Set(['DNC_LISTED', 'OPTED_OUT', 'NO_CONSENT', 'CONTENT_BLOCKED']);
const MAX_PREVIEW_CHARACTERS = 200;

/** Plain text of the content, for content rules. */
export function textOf(content: SendContent): string {
  if (content.type === 'carousel') return content.cards.map((c) => [c.title, c.text].filter(Boolean).join('\n')).join('\n');
  if (content.type === 'card') return [content.title, content.text].filter(Boolean).join('\n');
  return content.text ?? '';
}

/** 400 when `channelType: SMS|MMS` cannot carry this content type (the contract's table). */
export function assertChannelAccepts(requested: Channel, content: SendContent): void {
  if (!channelAccepts(requested, content)) {
    throw badRequest(`channelType ${requested} cannot carry a ${content.type} message.`, [
      { field: 'body.content.type', message: `not allowed with channelType ${requested}` },
    ]);
  }
}

/** The channel to use first, given what is known now about the handset (null = unknown: RCS is tried). */
export function planChannel(
  requested: Channel,
  content: SendContent,
  rcsCapable: boolean | null,
  fallbackAllowed: boolean,
  chatSessionOpen: boolean,
  /** Whether the sender's protocols let it use a channel (channelAvailability); every channel when omitted. */
  usable: (channel: Channel) => boolean = () => true,
): ChannelPlan | undefined {
  if (requested === 'SMS' || requested === 'MMS') return usable(requested) ? { requested, planned: requested, fallbackUsed: false, fallbackReason: null } : undefined;
  const fallbackChannel = fallbackChannelFor(content);
  const fallback = (reason: ChannelPlan['fallbackReason']): ChannelPlan | undefined =>
    fallbackAllowed && usable(fallbackChannel) ? { requested, planned: fallbackChannel, fallbackUsed: true, fallbackReason: reason } : undefined;
  if (requested === 'CHATAPP') return chatSessionOpen && usable('CHATAPP') ? { requested, planned: 'CHATAPP', fallbackUsed: false, fallbackReason: null } : fallback('RCS_NOT_SUPPORTED');
  if (rcsCapable === false || !usable('RCS')) return fallback('RCS_NOT_SUPPORTED');
  return { requested, planned: 'RCS', fallbackUsed: false, fallbackReason: null };
}

/** Why planChannel found no channel, for the 422 NO_CHANNEL_AVAILABLE. */
function noChannelMessage(requested: Channel, content: SendContent, fallbackAllowed: boolean, usable: (channel: Channel) => boolean): string {
  if ((requested === 'SMS' || requested === 'MMS') && !usable(requested)) return `The sender's ${requested} protocol is not active.`;
  const fallbackChannel = fallbackChannelFor(content);
  const first =
    requested === 'CHATAPP'
      ? usable('CHATAPP') ? 'No chat-app session is open with this contact' : "The sender's CHATAPP protocol is not active"
      : usable('RCS') ? "The contact's handset cannot receive RCS" : "The sender's RCS protocol is not active";
  if (!fallbackAllowed) return `${first} and fallbackToSms is false.`;
  return `${first} and the sender's ${fallbackChannel} protocol, the fallback, is not active.`;
}

/** Accepts a message: the stored row (queued, or held for quiet hours), its dispatch job and its event. */
export function acceptMessage(tenant: Tenant, services: Services, req: SendRequest): Promise<MessageRow> {
  return inTenantTransaction(tenant, async ({ db, organizationId }) => {
    const now = req.now ?? new Date();
    const requested = req.channelType ?? 'RCS';
    const messageType = req.messageType ?? 'MARKETING';
    const fallbackAllowed = req.fallbackToSms ?? true;

    const contact = await contacts.getContact(db, organizationId, req.contactId);
    if (!contact) throw req.fields?.contactId ? unknownReference(req.fields.contactId, 'contact') : notFound('Contact');
    const sender = await resolveSender(db, organizationId, req.senderId, req.fields?.senderId);
    assertChannelAccepts(requested, req.content);
    // The sender's protocols (none stored: every channel, as always); a closed fallback channel means no fallback.
    const usable = await channelAvailability(db, organizationId, sender.id);
    const fallbackStored = fallbackAllowed && usable(fallbackChannelFor(req.content));

    let heldUntil: Date | null = null;
    if (!req.skipComplianceGate) {
      const verdict = await evaluateCompliance({ db, organizationId, contact, messageType, content: textOf(req.content), now });
      if (verdict.decision === 'block') {
        const reason = verdict.reasons.find((r) => GATE_CODES.has(r.code)) ?? verdict.reasons[0]!;
        throw unprocessable(reason.code as ErrorCode, reason.message);
      }
      if (verdict.decision === 'hold' && !req.ignoreQuietHours) heldUntil = verdict.until;
    }

    const conversation = await openConversation(db, organizationId, contact.id, sender.id, req.conversationSource ?? { type: 'api' });
    const chatSessionOpen =
      conversation.session_channel === 'CHATAPP' && conversation.last_inbound_at !== null && now.getTime() - conversation.last_inbound_at.getTime() < SESSION_HOURS * 3600_000;
    const plan = planChannel(requested, req.content, contact.rcs_capable, fallbackAllowed, chatSessionOpen, usable);
    if (!plan) throw unprocessable('NO_CHANNEL_AVAILABLE', noChannelMessage(requested, req.content, fallbackAllowed, usable));
    const rendering = render(plan.planned, req.content);

    const message = await messages.insertMessage(db, organizationId, {
      conversation_id: conversation.id,
      contact_id: contact.id,
      contact_phone: contact.phone,
      sender_id: sender.id,
      direction: 'outbound',
      requested_channel: plan.requested,
      planned_channel: plan.planned,
      fallback_used: plan.fallbackUsed,
      fallback_reason: plan.fallbackReason,
      fallback_allowed: fallbackStored,
      message_type: messageType,
      status: heldUntil ? 'held' : 'queued',
      content: JSON.stringify(req.content),
      segments: rendering.segments,
      encoding: rendering.encoding,
      estimated_cost_units: rendering.costUnits,
      held_until: heldUntil,
      origin: req.origin,
    });
    await conversations.recordOutbound(db, organizationId, conversation.id, {
      at: message.created_at,
      preview: (rendering.body ?? rendering.title ?? req.content.type).slice(0, MAX_PREVIEW_CHARACTERS),
      firstMessageId: conversation.first_message_id ?? message.id,
      now,
    });

    const queue = queueOf(services);
    await queue.send(DISPATCH_QUEUE, { messageId: message.id }, { db: fromKysely(db), startAfter: heldUntil ?? undefined });
    await emitEvent(db, queue, messageEvent(heldUntil ? 'message.held' : 'message.queued', message, sender));
    return message;
  });
}

type SendMessageRequest = components['schemas']['SendMessageRequest'];
type ConversationSendMessageRequest = components['schemas']['ConversationSendMessageRequest'];

/** POST /v1/messages/send: an unknown `contactId` or `senderId` answers 404 naming it. */
export function sendMessage(tenant: Tenant, services: Services, body: SendMessageRequest): Promise<MessageRow> {
  return acceptMessage(tenant, services, { ...body, origin: 'api', fields: { contactId: bodyField('contactId'), senderId: bodyField('senderId') } });
}

/**
 * A message inside a conversation: to its contact, from its sender. The body names no id: an unknown or another
 * organization's conversation is the path's plain 404, and no body field is blamed.
 */
export function sendConversationMessage(tenant: Tenant, services: Services, conversationId: string, body: ConversationSendMessageRequest): Promise<MessageRow> {
  return inTenantTransaction(tenant, async (t) => {
    const conversation = await getConversation(t, conversationId);
    return acceptMessage(t, services, {
      ...body,
      contactId: conversation.contact_id,
      senderId: conversation.sender_id,
      // Inside an active chat-app session the reply goes by chat-app; otherwise RCS with fallback.
      channelType: conversation.session_channel === 'CHATAPP' ? 'CHATAPP' : 'RCS',
      origin: 'conversation',
    });
  });
}
