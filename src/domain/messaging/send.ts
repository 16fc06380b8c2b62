// Accepting outbound messages: the single path every sender uses (direct sends, conversations, keyword replies,
// blasts, bots and events). Validate → compliance gate → channel plan → price → persist, with the message row as
// its own dispatch outbox, all in one transaction of the tenant (the caller's when it is in one, e.g. the
// Idempotency-Key's), so an accepted message is dispatchable exactly when it commits and a refused one leaves
// nothing behind. The per-recipient work is one SQL statement over a set of recipients (acceptSet): a direct
// send is the set of one (acceptMessage), a blast batch the set of its pending recipients — one implementation.
import type { components } from '../../../generated/api.d.ts';
import { schemaBound } from '../../contract/schema-bounds.ts';
import * as accept from '../../db/queries/messages/accept.ts';
import type * as messages from '../../db/queries/messages/messages.ts';
import {
  gateNeeds,
  gateOf,
  prepareGate,
  QUIET_DEFAULTS,
  recipientsOf,
  refusalMessage,
  type GateQuestion,
  type PreparedGate,
  type Recipients,
} from '../compliance/gate.ts';
import { badRequest, bodyField, notFound, unknownReference, unprocessable, type ErrorCode } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { emitEvents, subscribesToAny } from '../webhooks/events.ts';
import { inTenantTransaction, queueOf } from './context.ts';
import { handledByOf, SESSION_HOURS, type ConversationSource } from './conversation.ts';
import { nudgeDispatchWorkers, wakeDispatch, wakeInsertOf } from './dispatch.ts';
import { messageEvent } from './message-events.ts';
import { channelAccepts, fallbackChannelFor, render, type Channel, type SendContent } from './render.ts';
import { chosenSender, type SenderRow } from './senders.ts';
import { availabilityOf, channelAvailability } from '../sender-ids/protocols.ts';
import { resolveContentAssets } from '../assets/media.ts';
import { clampText } from '../../lib/characters.ts';

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
   * Where the request named `contactId` and `senderId` (`body.contactId`), for the 404 of an unknown one
   * (`unknownReference`). Absent when the ids come from stored data (a conversation, an inbound message).
   */
  fields?: { contactId?: string; senderId?: string };
  now?: Date;
};

/** Conversation.lastMessagePreview maxLength (100): a longer stored preview would fail every read of the conversation. */
const MAX_PREVIEW_CHARACTERS = schemaBound('Conversation', ['lastMessagePreview'], 'maxLength');
/** The preview of media without a caption (Conversation.lastMessagePreview). */
export const MEDIA_PREVIEW = '[media]';
/** A conversation's `lastMessagePreview` of a message's text: its first characters, as many as the document allows. */
export const previewOf = (text: string): string => clampText(text, MAX_PREVIEW_CHARACTERS);

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

/** Why the plan (routeSql) found no channel, for the 422 NO_CHANNEL_AVAILABLE. */
function noChannelMessage(
  requested: Channel,
  content: SendContent,
  fallbackAllowed: boolean,
  usable: (channel: Channel) => boolean,
): string {
  if ((requested === 'SMS' || requested === 'MMS') && !usable(requested)) return `The sender's ${requested} protocol is not active.`;
  const fallbackChannel = fallbackChannelFor(content);
  const first =
    requested === 'CHATAPP'
      ? usable('CHATAPP')
        ? 'No chat-app session is open with this contact'
        : "The sender's CHATAPP protocol is not active"
      : usable('RCS')
        ? "The contact's handset cannot receive RCS"
        : "The sender's RCS protocol is not active";
  if (!fallbackAllowed) return `${first} and fallbackToSms is false.`;
  return `${first} and the sender's ${fallbackChannel} protocol, the fallback, is not active.`;
}

/** The contents of a set send by key (a blast variant's key; '' for a single content). */
export type KeyedContents = ReadonlyMap<string, SendContent>;

/** A send to a set of recipients: what every recipient shares. */
export type AcceptSetRequest = {
  sender: SenderRow;
  requested: Channel;
  messageType: MessageType;
  fallbackAllowed: boolean;
  contents: KeyedContents;
  recipients: Recipients;
  origin: SendRequest['origin'];
  conversationSource: ConversationSource;
  skipComplianceGate?: boolean;
  /** A blast batch: its recipient rows are marked accepted or skipped (with the reason) in the same statement. */
  blast?: { id: string; batch: number };
  now: Date;
};

const billingOf = (channel: Channel, content: SendContent): accept.Billing => {
  const r = render(channel, content);
  return {
    segments: r.segments,
    encoding: r.encoding,
    costUnits: r.costUnits,
    preview: previewOf(r.body ?? r.title ?? (content.type === 'media' ? MEDIA_PREVIEW : content.type)),
  };
};

const gateQuestionOf = (req: AcceptSetRequest): GateQuestion => ({
  messageType: req.messageType,
  now: req.now,
  ...(req.skipComplianceGate ? { skip: true } : {}),
  texts: new Map([...req.contents].map(([key, content]) => [key, textOf(content)])),
});

/**
 * The set statement's inputs: what does not depend on the recipient, computed once — each content rendered on the
 * requested and on the fallback channel (segments, price, preview), whether the sender may use each channel, the
 * prepared gate (content rules per distinct text, quiet hours per distinct group).
 */
function planSet(req: AcceptSetRequest, usable: (channel: Channel) => boolean, gate: PreparedGate): accept.AcceptSet {
  const contents = [...req.contents].map(([key, content]): accept.AcceptContent => {
    const fallbackChannel = fallbackChannelFor(content);
    return {
      key,
      content: JSON.stringify(content),
      fallbackChannel,
      // A closed fallback channel means no fallback.
      fallbackOk: req.fallbackAllowed && usable(fallbackChannel),
      primary: billingOf(req.requested, content),
      fallback: billingOf(fallbackChannel, content),
    };
  });
  const source = req.conversationSource;
  return {
    senderId: req.sender.id,
    requested: req.requested,
    requestedUsable: usable(req.requested),
    messageType: req.messageType,
    origin: req.origin,
    source: {
      type: source.type,
      blastId: source.blastId ?? null,
      botId: source.botId ?? null,
      campaignId: source.campaignId ?? null,
      handledBy: handledByOf(source),
    },
    sessionHours: SESSION_HOURS,
    contents,
    gate,
    recipients: req.recipients,
    ...(req.blast ? { blastId: req.blast.id } : {}),
  };
}

/** `message.queued` / `message.held` for each accepted message (only when an endpoint subscribes: events.ts). */
async function announce(tenant: Tenant, services: Services, sender: SenderRow, accepted: MessageRow[]): Promise<void> {
  await emitEvents(
    tenant.db,
    queueOf(services),
    accepted.map((m) => messageEvent(m.status === 'held' ? 'message.held' : 'message.queued', m, sender)),
  );
}

/**
 * Accepts a send for a whole set of recipients in the caller's transaction, with no round trip per recipient:
 * gate, channel plan, price, conversation, message (its own dispatch outbox) and, for a blast, the recipient rows
 * marked — one statement. Answers how many were accepted and skipped.
 */
export async function acceptSet(tenant: Tenant, services: Services, req: AcceptSetRequest): Promise<{ accepted: number; skipped: number }> {
  const { db, organizationId } = tenant;
  // The sender's protocols (none stored: every channel, as always).
  const usable = await channelAvailability(db, organizationId, req.sender.id);
  const gate = await prepareGate(db, organizationId, { ...gateQuestionOf(req), recipients: req.recipients });
  const set = planSet(req, usable, gate);
  const withEvents = !req.blast || (await subscribesToAny(tenant.db, tenant.organizationId, ['message.queued', 'message.held']));
  const result = await accept.acceptAll(tenant.db, tenant.organizationId, set, withEvents);
  await announce(tenant, services, req.sender, result.messages);
  if (result.accepted > 0) {
    // One wake job for the whole set: the dispatcher claims its due rows and wakes again for the held ones.
    const scope = req.blast
      ? { blast: { organizationId: tenant.organizationId, blastId: req.blast.id, batch: req.blast.batch, senderId: req.sender.id } }
      : { messageIds: result.messages.map((m) => m.id) };
    await wakeDispatch(queueOf(services), scope, { db: tenant.db });
  }
  return { accepted: result.accepted, skipped: result.skipped };
}

/**
 * Accepts a message: the stored row (queued, or held for quiet hours), its dispatch (the row itself, and its wake
 * job) and its event. Round trips: one read of everything the send depends on (contact, sender, its protocols,
 * content rules, the contact's quiet group, webhook subscribers), then the set statement, which also inserts the
 * wake job. That statement is the whole write: atomic on its own, so outside a caller's transaction it needs none
 * (a READ COMMITTED transaction would give the read no other snapshot than its own); only when an endpoint
 * subscribes do the message and its event rows commit together in one. Inside a caller's transaction (an
 * Idempotency-Key's, a conversation's) everything runs in that one.
 */
export async function acceptMessage(tenant: Tenant, services: Services, req: SendRequest): Promise<MessageRow> {
  const { db, organizationId } = tenant;
  req = { ...req, content: await resolveContentAssets(tenant, services, req.content) }; // assetId → signed media link
  const requested = req.channelType ?? 'RCS';
  const fallbackAllowed = req.fallbackToSms ?? true;
  const recipients = recipientsOf([req.contactId], ['']);
  const setRequest: Omit<AcceptSetRequest, 'sender'> = {
    requested,
    messageType: req.messageType ?? 'MARKETING',
    fallbackAllowed,
    contents: new Map([['', req.content]]),
    recipients,
    origin: req.origin,
    conversationSource: req.conversationSource ?? { type: 'api' },
    ...(req.skipComplianceGate ? { skipComplianceGate: true } : {}),
    now: req.now ?? new Date(),
  };
  const question = gateQuestionOf(setRequest as AcceptSetRequest);
  const needs = gateNeeds(question);
  const [facts, wake] = await Promise.all([
    accept.loadSendFacts(db, organizationId, {
      contactId: req.contactId,
      senderId: req.senderId,
      messageType: question.messageType,
      rules: needs.rules,
      quiet: needs.quietGroups ? { recipients, defaults: QUIET_DEFAULTS } : null,
      eventTypes: ['message.queued', 'message.held'],
    }),
    wakeInsertOf(queueOf(services)),
  ]);
  if (!facts.contactFound) throw req.fields?.contactId ? unknownReference(req.fields.contactId, 'contact') : notFound('Contact');
  const sender = chosenSender(facts.sender, req.senderId, req.fields?.senderId);
  assertChannelAccepts(requested, req.content);
  // The sender's protocols (none stored: every channel, as always).
  const usable = availabilityOf(facts.protocols);
  const gate = await gateOf(question, facts.rules, facts.quietGroups);
  const set = planSet({ ...setRequest, sender }, usable, gate);
  const write = async (t: Tenant): Promise<MessageRow> => {
    // In a transaction the wake job's NOTIFY goes with its commit (as pg-boss's own send); on its own, the statement
    // commits at once and the workers are nudged after it, coalesced with other sends (nudgeDispatchWorkers).
    const own = !t.db.isTransaction;
    const [outcome] = await accept.acceptEach(t.db, organizationId, set, own ? { ...wake, notify: null } : wake);
    if (own && outcome?.id) nudgeDispatchWorkers(queueOf(services), wake);
    if (!outcome) throw req.fields?.contactId ? unknownReference(req.fields.contactId, 'contact') : notFound('Contact'); // deleted meanwhile
    const refusal = outcome.recipient_skip_reason;
    if (refusal === 'NO_CHANNEL_AVAILABLE')
      throw unprocessable('NO_CHANNEL_AVAILABLE', noChannelMessage(requested, req.content, fallbackAllowed, usable));
    if (refusal) throw unprocessable(refusal as ErrorCode, refusalMessage(gate, '', refusal));
    const message = outcome as MessageRow;
    if (facts.subscribed) await announce(t, services, sender, [message]);
    return message;
  };
  return facts.subscribed ? inTenantTransaction(tenant, write) : write(tenant);
}

type SendMessageRequest = components['schemas']['SendMessageRequest'];

/** POST /v1/messages/send: an unknown `contactId` or `senderId` answers 404 naming it. */
export function sendMessage(tenant: Tenant, services: Services, body: SendMessageRequest): Promise<MessageRow> {
  return acceptMessage(tenant, services, {
    ...body,
    origin: 'api',
    fields: { contactId: bodyField('contactId'), senderId: bodyField('senderId') },
  });
}
