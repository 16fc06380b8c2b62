// Accepting one outbound message: the single path every sender uses (direct sends, conversations, keyword
// replies; later blasts, bots and events). Validate → compliance gate → channel plan → price → persist →
// enqueue dispatch, all in the caller's transaction, so an accepted message and its dispatch job commit
// together (pg-boss enqueues through the same transaction) and a rejected one leaves nothing behind.
import { fromKysely } from 'pg-boss';
import type { Selectable } from 'kysely';
import type { components } from '../../../generated/api.d.ts';
import type { AppContext } from '../../app-context.ts';
import type { Tx } from '../../db/database.ts';
import type { ContactsTable } from '../../db/tables/contacts.ts';
import { tenant } from '../../db/tenant.ts';
import { ApiError, notFound } from '../errors.ts';
import { evaluateCompliance } from '../compliance/gate.ts';
import { emitEvent } from '../webhooks/events.ts';
import { toMoney } from './pricing.ts';
import { channelAccepts, fallbackChannelFor, render, type Channel, type SendContent } from './render.ts';
import { resolveSender, type SenderRow } from './senders.ts';
import { DISPATCH_QUEUE } from './dispatch.ts';
import { upsertConversation, type ConversationSource } from './conversations.ts';
import { messageEvent } from './events.ts';

export type MessageType = components['schemas']['MessageType'];
export type SendResult = components['schemas']['MessageSendResult'];
export type ContactRow = Selectable<ContactsTable>;

export type SendRequest = {
  organizationId: string;
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
  now?: Date;
};

export type ChannelPlan = {
  requested: Channel;
  planned: Channel;
  fallbackUsed: boolean;
  fallbackReason: components['schemas']['FallbackReason'];
};

const GATE_CODES = new Set(['DNC_LISTED', 'OPTED_OUT', 'NO_CONSENT', 'CONTENT_BLOCKED']);

/** Plain text of the content, for content rules. */
export function textOf(content: SendContent): string {
  if (content.type === 'carousel') return content.cards.map((c) => [c.title, c.text].filter(Boolean).join('\n')).join('\n');
  if (content.type === 'card') return [content.title, content.text].filter(Boolean).join('\n');
  return content.text ?? '';
}

/** The channel to use first, given what is known now about the handset (null = unknown: RCS is tried). */
export function planChannel(requested: Channel, content: SendContent, rcsCapable: boolean | null, fallbackAllowed: boolean, chatSessionOpen: boolean): ChannelPlan | undefined {
  if (requested === 'SMS' || requested === 'MMS') return { requested, planned: requested, fallbackUsed: false, fallbackReason: null };
  const fallback = (reason: ChannelPlan['fallbackReason']): ChannelPlan | undefined =>
    fallbackAllowed ? { requested, planned: fallbackChannelFor(content), fallbackUsed: true, fallbackReason: reason } : undefined;
  if (requested === 'CHATAPP') return chatSessionOpen ? { requested, planned: 'CHATAPP', fallbackUsed: false, fallbackReason: null } : fallback('RCS_NOT_SUPPORTED');
  if (rcsCapable === false) return fallback('RCS_NOT_SUPPORTED');
  return { requested, planned: 'RCS', fallbackUsed: false, fallbackReason: null };
}

export async function acceptMessage(app: AppContext, tx: Tx, req: SendRequest): Promise<SendResult> {
  const now = req.now ?? new Date();
  const requested = req.channelType ?? 'RCS';
  const messageType = req.messageType ?? 'MARKETING';
  const fallbackAllowed = req.fallbackToSms ?? true;

  const contact = await tenant(tx.selectFrom('contacts'), req.organizationId).selectAll().where('id', '=', req.contactId).executeTakeFirst();
  if (!contact) throw notFound('Contact');
  const sender: SenderRow = await resolveSender(tx, req.organizationId, req.senderId);
  if (!channelAccepts(requested, req.content)) {
    throw new ApiError(400, 'VALIDATION_ERROR', `channelType ${requested} cannot carry a ${req.content.type} message.`, {
      details: [{ field: 'body.content.type', message: `not allowed with channelType ${requested}` }],
    });
  }

  let heldUntil: Date | null = null;
  if (!req.skipComplianceGate) {
    const verdict = await evaluateCompliance({ db: tx, organizationId: req.organizationId, contact, messageType, content: textOf(req.content), now });
    if (verdict.decision === 'block') {
      const reason = verdict.reasons.find((r) => GATE_CODES.has(r.code)) ?? verdict.reasons[0]!;
      throw new ApiError(422, reason.code as 'DNC_LISTED', reason.message);
    }
    if (verdict.decision === 'hold') heldUntil = verdict.until;
  }

  const conversation = await upsertConversation(tx, {
    organizationId: req.organizationId,
    contactId: contact.id,
    senderId: sender.id,
    source: req.conversationSource ?? { type: 'api' },
  });
  const chatSessionOpen =
    conversation.session_channel === 'CHATAPP' && conversation.last_inbound_at !== null && now.getTime() - conversation.last_inbound_at.getTime() < 24 * 3600_000;
  const plan = planChannel(requested, req.content, contact.rcs_capable, fallbackAllowed, chatSessionOpen);
  if (!plan) {
    throw new ApiError(422, 'NO_CHANNEL_AVAILABLE', requested === 'CHATAPP'
      ? 'No chat-app session is open with this contact and fallbackToSms is false.'
      : "The contact's handset cannot receive RCS and fallbackToSms is false.");
  }
  const rendering = render(plan.planned, req.content);
  const status = heldUntil ? 'held' : 'queued';

  const message = await tx
    .insertInto('messages')
    .values({
      organization_id: req.organizationId,
      conversation_id: conversation.id,
      contact_id: contact.id,
      contact_phone: contact.phone,
      sender_id: sender.id,
      direction: 'outbound',
      requested_channel: plan.requested,
      planned_channel: plan.planned,
      fallback_used: plan.fallbackUsed,
      fallback_reason: plan.fallbackReason,
      fallback_allowed: fallbackAllowed,
      message_type: messageType,
      status,
      content: JSON.stringify(req.content),
      segments: rendering.segments,
      encoding: rendering.encoding,
      estimated_cost_units: rendering.costUnits,
      held_until: heldUntil,
      origin: req.origin,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

  await tenant(tx.updateTable('conversations'), req.organizationId)
    .set({
      last_message_at: message.created_at,
      last_outbound_at: message.created_at,
      last_message_preview: (rendering.body ?? rendering.title ?? req.content.type).slice(0, 200),
      first_message_id: conversation.first_message_id ?? message.id,
      status: 'open',
      updated_at: now,
    })
    .where('id', '=', conversation.id)
    .execute();

  if (!app.queue) throw new Error('acceptMessage needs the job queue');
  await app.queue.send(DISPATCH_QUEUE, { messageId: message.id }, { db: fromKysely(tx), startAfter: heldUntil ?? undefined });
  await emitEvent(tx, app.queue!, messageEvent(heldUntil ? 'message.held' : 'message.queued', message, sender));

  return {
    messageId: message.id,
    conversationId: conversation.id,
    contactId: contact.id,
    senderId: sender.id,
    status: status,
    requestedChannel: plan.requested,
    plannedChannel: plan.planned,
    fallbackUsed: plan.fallbackUsed,
    fallbackReason: plan.fallbackReason,
    messageType,
    segments: rendering.segments,
    encoding: rendering.encoding,
    estimatedCost: toMoney(rendering.costUnits),
    heldUntil: heldUntil?.toISOString() ?? null,
    createdAt: message.created_at.toISOString(),
  };
}
