// The send pipeline's one entry: every outbound message goes through send() — direct API sends, conversation
// sends, keyword replies, blast batches and blast test sends, bot turns, event triggers and acquisition messages.
// An order names its recipients (one contact, or a blast batch's pending recipients), its contents (by key: a blast
// variant's, '' for one content), its sender (named, or the organization's default), the message type, the
// requested channel and whether the SMS/MMS fallback is allowed, its origin and the source a conversation it opens
// records. send() resolves the contents' assets, reads everything the send depends on in one round trip
// (loadSendFacts; a direct send's loadDirectSendFacts, shared with the direct sends ready meanwhile: send-reads.ts —
// the sender, its protocols, the content rules, the recipients' quiet-hours groups, whether an endpoint subscribes
// to the message events, the contact), and writes with one statement over the set of
// recipients: gate → channel plan → price → conversation → message (its own dispatch outbox) → the dispatcher's
// wake job, and for a blast batch its recipient rows marked (src/db/queries/messages/accept.ts). Everything runs in
// the tenant's transaction when it is in one (an Idempotency-Key's, a blast batch's), so an accepted message is
// dispatchable exactly when it commits and a refused one leaves nothing behind.
//
// A refusal (unknown contact or sender, a sender not ACTIVE or not send-ready, an asset not ready, a channel that
// cannot carry the content, the gate's DNC_LISTED / OPTED_OUT / NO_CONSENT / CONTENT_BLOCKED, NO_CHANNEL_AVAILABLE)
// throws for one contact, as the request's 4xx; for a blast batch it is recorded on each recipient's row (skipped,
// with the code as its reason), whether it concerns one recipient or all of them.
import type { components } from '../../../generated/api.d.ts';
import { pendingBatch, settlePendingBatch } from '../../db/queries/blasts/blasts.ts';
import * as accept from '../../db/queries/messages/accept.ts';
import type * as messages from '../../db/queries/messages/messages.ts';
import {
  gateNeeds,
  gateOf,
  QUIET_DEFAULTS,
  recipientsOf,
  refusalMessage,
  type GateQuestion,
  type PreparedGate,
  type Recipients,
} from '../compliance/gate.ts';
import { contactByPhone } from '../contacts/by-phone.ts';
import { ApiError, badRequest, bodyField, notFound, unknownReference, unprocessable, type ErrorCode } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { emitEvents } from '../webhooks/events.ts';
import { inTenantTransaction, queueOf } from './context.ts';
import { handledByOf, previewOfRendering, SESSION_HOURS, type ConversationSource } from './conversation.ts';
import { acceptDirectSend } from './direct-batches.ts';
import { readDirectSendFacts } from './send-reads.ts';
import { nudgeDispatchWorkers, wakeInsertOf } from './dispatch.ts';
import { messageEvent } from './message-events.ts';
import { notReadyText } from './fallback.ts';
import { channelAccepts, fallbackChannelFor, render, templateText, type Channel, type RenderSettings, type SendContent } from './render.ts';
import { assertTemplateSender, resolveTemplateContent } from '../templates/content.ts';
import { chosenSender, defaultChannelOf, type SenderRow } from './senders.ts';
import {
  decideSending,
  fallbackCarrier,
  TYPE_CHANNELS,
  type FallbackCarrier,
  type FallbackSenderFacts,
  type NotReady,
  type SenderProgram,
  type SendingDecision,
} from '../sender-ids/sending-rule.ts';
import type { SenderOfProvider } from '../../providers/provider.ts';
import { resolveContentAssets } from '../assets/media.ts';
import { trackedContent } from '../links/rewrite.ts';

export type MessageType = components['schemas']['MessageType'];
export type MessageRow = messages.MessageRow;

/** The contents of a send by key (a blast variant's key; '' for a single content). */
type KeyedContents = ReadonlyMap<string, SendContent>;

/** Contents resolved (assets, templates), with the sender each `template` content was approved for, by key. */
type Resolved = { contents: KeyedContents; templateSenders: ReadonlyMap<string, string> };

/** What every order names, whoever its recipients. */
type OrderBase = {
  /** The sender; absent, the organization's default: its oldest ACTIVE, send-ready sender. */
  senderId?: string | undefined;
  /** The requested channel; absent, the sender's own (defaultChannelOf: CHATAPP for a chat-app sender, else RCS). */
  channelType?: Channel;
  /** MARKETING when absent. */
  messageType?: MessageType;
  /** Whether the SMS/MMS fallback is allowed; true when absent. */
  fallbackToSms?: boolean;
  /** Stored as the message's `origin`. */
  origin: 'api' | 'conversation' | 'keyword_reply' | 'blast' | 'bot' | 'event';
  /** The bot trigger (its id) whose event started the flow that sends this message: stored with the message. */
  eventTriggerId?: string;
  /** What a conversation the send opens records as its source; `{ type: 'api' }` when absent. */
  conversationSource?: ConversationSource;
  /** Whether the URLs of the contents become tracked links (src/domain/links/rewrite.ts); false when absent. */
  trackLinks?: boolean;
  /** Keyword replies (STOP/HELP confirmations) must reach even an opted-out number: they skip the gate. */
  skipComplianceGate?: boolean;
  now?: Date;
};

/** To one contact: a refusal throws, and the message is answered. */
export type OneOrder = OrderBase & {
  contactId: string;
  content: SendContent;
  /**
   * Where the request named `contactId` and `senderId` (`body.contactId`), for the 404 of an unknown one
   * (`unknownReference`). Absent when the ids come from stored data (a conversation, an inbound message).
   */
  fields?: { contactId?: string; senderId?: string };
};

/** To a blast batch's pending recipients, each the content of its key: every refusal is recorded on the recipients' rows. */
export type BatchOrder = OrderBase & {
  blastBatch: { blastId: string; batch: number };
  contents: KeyedContents;
};

/** Plain text of the content, for content rules. */
export function textOf(content: SendContent): string {
  if (content.type === 'carousel') return content.cards.map((c) => [c.title, c.text].filter(Boolean).join('\n')).join('\n');
  if (content.type === 'card') return [content.title, content.text].filter(Boolean).join('\n');
  if (content.type === 'template') return templateText(content);
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
  senderType: string,
  carrier: FallbackCarrier | undefined,
): string {
  const carries = TYPE_CHANNELS[senderType] ?? [];
  const unusable = carrier?.senderId === null ? carrier.unusable : null;
  const cannot = (channel: Channel) => `A ${senderType} sender cannot carry ${channel} (it carries ${carries.join(', ')})`;
  if ((requested === 'SMS' || requested === 'MMS') && !usable(requested))
    return carries.includes(requested) ? `The sender's ${requested} protocol is not active.` : `${cannot(requested)}.`;
  const fallbackChannel = fallbackChannelFor(content);
  if (fallbackAllowed && !carries.includes(fallbackChannel) && usable(requested))
    return `The contact's handset cannot receive RCS, and ${
      unusable ??
      `${cannot(fallbackChannel)}; name a fallbackSenderIdId on its RCS protocol, attach a FALLBACK sender to its program, or send from a number`
    }.`;
  // A chat-app sender whose channel is usable but whose session is closed answers CHATAPP_SESSION_CLOSED instead (noRouteOf).
  const first =
    requested === 'CHATAPP'
      ? "The sender's CHATAPP protocol is not active"
      : usable('RCS')
        ? "The contact's handset cannot receive RCS"
        : "The sender's RCS protocol is not active";
  if (!fallbackAllowed) return `${first} and fallbackToSms is false.`;
  return `${first} and the sender's ${fallbackChannel} protocol, the fallback, is not active.`;
}

const billingOf = (channel: Channel, content: SendContent, settings: RenderSettings): accept.Billing => {
  const r = render(channel, content, settings);
  return {
    segments: r.segments,
    encoding: r.encoding,
    costUnits: r.costUnits,
    preview: previewOfRendering(r, content),
  };
};

/** `message.queued` / `message.held` for each accepted message (only when an endpoint subscribes: events.ts). */
async function announce(tenant: Tenant, services: Services, accepted: MessageRow[]): Promise<void> {
  await emitEvents(
    tenant.db,
    queueOf(services),
    // Each message's own sender: a fallback carried by another sender goes from it.
    accepted.map((m) => messageEvent(m.status === 'held' ? 'message.held' : 'message.queued', m, { id: m.sender_id })),
  );
}

/** The webhook events an accepted message raises (announce). */
const MESSAGE_EVENTS = ['message.queued', 'message.held'];

/** What a send is made of once read: its sender, and the set statement's inputs. */
type Prepared = {
  sender: SenderRow;
  /** The channel asked for: the order's `channelType`, else the sender's own (defaultChannelOf). */
  requested: Channel;
  usable: (channel: Channel) => boolean;
  /** Whether this send falls back to SMS/MMS (the request's, else the RCS protocol's fallbackToSms). */
  fallbackAllowed: boolean;
  /** Who carries each fallback channel asked about (fallbackCarrier). */
  carriers: ReadonlyMap<Channel, FallbackCarrier>;
  gate: PreparedGate;
  set: accept.AcceptSet;
  subscribed: boolean;
};

/**
 * The one loader: reads everything the send depends on in one round trip (loadSendFacts, or a direct send's shared
 * read: send-reads.ts) and checks the order
 * against it — the contact (one contact only), the sender (chosenSender), the channel's content (one contact) — then
 * makes the gate ready (content rules matched once per distinct text, quiet-hours holds once per distinct group)
 * and the set statement's inputs: what does not depend on the recipient, computed once — each content rendered on
 * the requested and on the fallback channel (segments, price, preview), whether the sender may use each channel.
 */
const NO_REVIEWS: ReadonlySet<string> = new Set();

async function prepare(
  tenant: Tenant,
  services: Services,
  order: OneOrder | BatchOrder,
  { contents, templateSenders }: Resolved,
  recipients: Recipients,
): Promise<Prepared> {
  const one = 'contactId' in order ? order : undefined;
  const question: GateQuestion = {
    messageType: order.messageType ?? 'MARKETING',
    now: order.now ?? new Date(),
    ...(order.skipComplianceGate ? { skip: true } : {}),
    texts: new Map([...contents].map(([key, content]) => [key, textOf(content)])),
  };
  const needs = gateNeeds(question);
  const query = { senderId: order.senderId, messageType: question.messageType, rules: needs.rules, eventTypes: MESSAGE_EVENTS };
  const facts = one
    ? await readDirectSendFacts(
        queueOf(services),
        tenant.db,
        tenant.organizationId,
        { ...query, quiet: needs.quietGroups ? { defaults: QUIET_DEFAULTS } : null },
        one.contactId,
      )
    : await accept.loadSendFacts(tenant.db, tenant.organizationId, {
        ...query,
        quiet: needs.quietGroups ? { recipients, defaults: QUIET_DEFAULTS } : null,
      });
  if (!facts) throw contactNotFound(one!);
  const sender = chosenSender(facts.sender, order.senderId, one?.fields?.senderId);
  const requested = order.channelType ?? defaultChannelOf(sender);
  if (one) assertChannelAccepts(requested, one.content);
  for (const templateSender of templateSenders.values()) assertTemplateSender(templateSender, sender.id);
  const reviewedHere = (s: SenderOfProvider) => services.providers.forSender(s).registry?.kinds ?? NO_REVIEWS;
  const plan = channelPlanOf(facts, sender, requested, order.fallbackToSms, reviewedHere);
  const { decision, fallbackAllowed, carrierOf, carriers } = plan;
  const { usable, settings, notReady } = decision;
  if (notReady) throw senderNotReady(notReady, one?.fields?.senderId);
  const gate = await gateOf(question, facts.rules, facts.quietGroups);
  const source = order.conversationSource ?? { type: 'api' };
  const set: accept.AcceptSet = {
    senderId: sender.id,
    requested,
    requestedUsable: usable(requested),
    messageType: question.messageType,
    origin: order.origin,
    source: {
      type: source.type,
      blastId: source.blastId ?? null,
      botId: source.botId ?? null,
      campaignId: source.campaignId ?? null,
      handledBy: handledByOf(source),
    },
    // The origin ids the message records: the bot and acquisition campaign named by the source the send opens with.
    origins: {
      botId: source.type === 'bot' ? (source.botId ?? null) : null,
      eventTriggerId: order.eventTriggerId ?? null,
      acquisitionCampaignId: source.type === 'acquisition' ? (source.campaignId ?? null) : null,
    },
    sessionHours: SESSION_HOURS,
    contents: [...contents].map(([key, asked]): accept.AcceptContent => {
      // The gate judged the content as asked; what is sent, priced and stored carries the tracked links.
      const tracked = order.trackLinks ? trackedContent(asked, services.config.assetBaseUrl) : null;
      const content = tracked?.content ?? asked;
      const fallbackChannel = fallbackChannelFor(content);
      const carrier = carrierOf(fallbackChannel);
      return {
        key,
        content: JSON.stringify(content),
        fallbackChannel,
        // No carrier for the fallback channel means no fallback.
        fallbackOk: fallbackAllowed && carrier.senderId !== null,
        // An approved template is what a chat-app platform takes outside the customer's session.
        sessionFree: content.type === 'template',
        primary: billingOf(requested, content, settings),
        // Rendered with the settings of the sender that carries it (its SMS protocol's smartEncoding).
        fallback: billingOf(fallbackChannel, content, carrier.senderId !== null ? carrier.settings : settings),
        fallbackSenderId: fallbackAllowed && carrier.senderId !== sender.id ? plan.fallbackSenderId : null,
        links: tracked && { placeholder: tracked.placeholder, urlsJson: JSON.stringify(tracked.urls) },
      };
    }),
    gate,
    recipients,
    noRoute: noRouteOf(requested, usable, fallbackAllowed, carriers),
    ...('blastBatch' in order ? { blastId: order.blastBatch.blastId } : {}),
  };
  return { sender, requested, usable, gate, set, subscribed: facts.subscribed, fallbackAllowed, carriers };
}

/**
 * A recipient's refusal when the plan finds no channel: a chat-app sender's closed session (CHATAPP_SESSION_CLOSED:
 * free-form chat-app messages need the contact to have written in the last SESSION_HOURS; a `template` needs not),
 * the fallback sender's refusal, else NO_CHANNEL_AVAILABLE.
 */
function noRouteOf(
  requested: Channel,
  usable: (channel: Channel) => boolean,
  fallbackAllowed: boolean,
  carriers: ReadonlyMap<Channel, FallbackCarrier>,
): accept.AcceptSet['noRoute'] {
  if (requested === 'CHATAPP' && usable('CHATAPP')) return 'CHATAPP_SESSION_CLOSED';
  return fallbackAllowed && fallbackRefusal(carriers) ? 'SENDER_NOT_READY' : 'NO_CHANNEL_AVAILABLE';
}

/** 422 CHATAPP_SESSION_CLOSED's message (the send's; a blast records the code on the recipient). */
const SESSION_CLOSED = `No chat-app session is open with this contact: the contact has not written to this sender in the last ${SESSION_HOURS} hours. Outside the session the chat-app platforms take only an approved template (content type \`template\`).`;

/** The fallback sender's refusal, when one was named and may not send. */
const fallbackRefusal = (carriers: ReadonlyMap<Channel, FallbackCarrier>): NotReady | null =>
  [...carriers.values()].map((c) => (c.senderId === null ? c.refusal : null)).find((r) => r !== null) ?? null;

/** How a send to `requested` plans its channels (channelPlanOf). */
export type ChannelPlan = {
  /** The sending rule's answer for the sender. */
  decision: SendingDecision;
  /** Whether it falls back to SMS/MMS: the order's fallbackToSms, else the RCS protocol's. */
  fallbackAllowed: boolean;
  /** Who carries each fallback channel (fallbackCarrier), memoised in `carriers`. */
  carrierOf: (channel: Channel) => FallbackCarrier;
  carriers: ReadonlyMap<Channel, FallbackCarrier>;
  /** The other sender named to carry the fallback (fallbackCarrier's candidate), whether or not it may send now. */
  fallbackSenderId: string | null;
};

/**
 * The channel plan of a send, from what loadSendFacts read: the sending rule for the sender, whether it falls back,
 * and who carries each fallback channel — the sender itself, or (an RCS request only) its fallback sender. The send,
 * the preview and a blast's estimate all plan with it, so they agree.
 */
export function channelPlanOf(
  facts: accept.SendFacts,
  sender: SenderRow,
  requested: Channel,
  fallbackToSms: boolean | undefined,
  reviewedHere: (sender: SenderOfProvider) => ReadonlySet<string>,
): ChannelPlan {
  const decision = decideSending({
    sender,
    protocols: facts.protocols,
    program: facts.program as SenderProgram | null, // the loader's JSON is the rule's ProgramState (senderProgramSql)
    recipientIsTestDevice: facts.testDevice,
    reviewedHere: reviewedHere(sender),
  });
  const fallbackFacts = requested === 'RCS' ? (facts.fallback as FallbackSenderFacts | null) : null;
  const carriers = new Map<Channel, FallbackCarrier>();
  const carrierOf = (channel: Channel): FallbackCarrier => {
    let c = carriers.get(channel);
    if (!c) carriers.set(channel, (c = fallbackCarrier({ senderId: sender.id, decision }, fallbackFacts, reviewedHere, channel)));
    return c;
  };
  return {
    decision,
    fallbackAllowed: fallbackToSms ?? decision.settings.fallbackToSms,
    carrierOf,
    carriers,
    fallbackSenderId: fallbackFacts?.sender.id ?? null,
  };
}

/**
 * 422 SENDER_NOT_READY: the sender may not send this message now; the message says why and `details` names the
 * missing action (its `code` is the program's `nextAction.code`, or the sender's own action).
 */
const senderNotReady = (n: NotReady, field?: string) =>
  new ApiError(422, 'SENDER_NOT_READY', notReadyText(n), {
    details: [{ field: field ?? 'body.senderId', message: n.action.message, code: n.action.code }],
  });

const contactNotFound = (order: OneOrder) =>
  order.fields?.contactId ? unknownReference(order.fields.contactId, 'contact') : notFound('Contact');

/**
 * Each content with its assets resolved (assetId → signed media link) and a `template` filled with its parameters
 * (templates/content.ts), before it is rendered and priced.
 */
async function resolveContents(tenant: Tenant, services: Services, contents: KeyedContents): Promise<Resolved> {
  const resolved = await Promise.all(
    [...contents].map(async ([key, c]) => {
      const r = await resolveTemplateContent(tenant, await resolveContentAssets(tenant, services, c));
      return { key, ...r };
    }),
  );
  return {
    contents: new Map(resolved.map((r) => [r.key, r.content])),
    templateSenders: new Map(resolved.flatMap((r) => (r.templateSenderId === null ? [] : [[r.key, r.templateSenderId] as const]))),
  };
}

/**
 * The entry. For one contact: answers the accepted message (queued, or held for quiet hours), or throws the refusal.
 * Round trips: one read (prepare), then the set statement, which also inserts the wake job. That statement is the
 * whole write: atomic on its own, so outside a caller's transaction it needs none (a READ COMMITTED transaction
 * would give the read no other snapshot than its own); only when an endpoint subscribes do the message and its
 * event rows commit together in one. For a blast batch: in the caller's transaction (one of its own otherwise), its
 * pending recipients, locked, are accepted or skipped with the reason; the gate's inputs are read once per batch,
 * and one wake job covers the batch.
 */
export function send(tenant: Tenant, services: Services, order: OneOrder): Promise<MessageRow>;
export function send(tenant: Tenant, services: Services, order: BatchOrder): Promise<void>;
export async function send(tenant: Tenant, services: Services, order: OneOrder | BatchOrder): Promise<MessageRow | void> {
  if ('blastBatch' in order) return inTenantTransaction(tenant, (t) => sendBatch(t, services, order));
  const resolved = await resolveContents(tenant, services, new Map([['', order.content]]));
  const content = resolved.contents.get('')!;
  const [p, insert] = await Promise.all([
    prepare(tenant, services, { ...order, content }, resolved, recipientsOf([order.contactId], [''])),
    wakeInsertOf(queueOf(services)),
  ]);
  const write = async (t: Tenant): Promise<MessageRow> => {
    // In a transaction the wake job's NOTIFY goes with its commit (as pg-boss's own send); on its own, the statement
    // commits at once and the workers are nudged after it, coalesced with other sends (nudgeDispatchWorkers).
    const own = !t.db.isTransaction;
    const wake = { ...insert, ...(own ? { notify: null } : {}), scope: 'each' as const };
    // On its own, the statement is shared with the direct sends ready meanwhile (direct-batches.ts).
    const outcome = own
      ? await acceptDirectSend(queueOf(services), t.db, t.organizationId, p.set, order.contactId, wake)
      : (await accept.acceptEach(t.db, t.organizationId, p.set, order.contactId, wake))[0];
    if (own && outcome?.id) nudgeDispatchWorkers(queueOf(services), insert);
    if (!outcome) throw contactNotFound(order); // deleted meanwhile
    const refusal = outcome.recipient_skip_reason;
    const fallbackNotReady = fallbackRefusal(p.carriers);
    if (refusal === 'SENDER_NOT_READY' && fallbackNotReady) throw senderNotReady(fallbackNotReady, order.fields?.senderId);
    if (refusal === 'CHATAPP_SESSION_CLOSED') throw unprocessable('CHATAPP_SESSION_CLOSED', SESSION_CLOSED);
    if (refusal === 'NO_CHANNEL_AVAILABLE')
      throw unprocessable(
        'NO_CHANNEL_AVAILABLE',
        noChannelMessage(p.requested, content, p.fallbackAllowed, p.usable, p.sender.type, p.carriers.get(fallbackChannelFor(content))),
      );
    if (refusal) throw unprocessable(refusal as ErrorCode, refusalMessage(p.gate, '', refusal));
    const message = outcome as MessageRow;
    if (p.subscribed) await announce(t, services, [message]);
    return message;
  };
  return p.subscribed ? inTenantTransaction(tenant, write) : write(tenant);
}

/** A blast batch (in its transaction): a refusal of the whole batch — before any recipient is looked at — skips every pending recipient with its code. */
async function sendBatch(tenant: Tenant, services: Services, order: BatchOrder): Promise<void> {
  const { db, organizationId } = tenant;
  const { blastId, batch } = order.blastBatch;
  let p: Prepared;
  try {
    const contents = await resolveContents(tenant, services, order.contents);
    p = await prepare(tenant, services, order, contents, pendingBatch(organizationId, blastId, batch));
  } catch (e) {
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    return settlePendingBatch(db, organizationId, blastId, batch, { status: 'skipped', reason: e.code });
  }
  const insert = await wakeInsertOf(queueOf(services));
  // One wake job for the whole batch: the dispatcher drains it at the sender's rate and wakes again for the held ones.
  const scope = { blast: { organizationId, blastId, batch, senderId: p.sender.id } };
  const result = await accept.acceptAll(db, organizationId, p.set, p.subscribed, { ...insert, scope });
  await announce(tenant, services, result.messages);
}

type SendMessageRequest = components['schemas']['SendMessageRequest'];

/**
 * POST /v1/messages/send: an unknown `contactId` or `senderId` answers 404 naming it. A recipient named by `to` is
 * the organization's contact with that phone, created when missing, in the send's transaction: a refused send
 * leaves no contact behind.
 */
export function sendMessage(tenant: Tenant, services: Services, body: SendMessageRequest): Promise<MessageRow> {
  const { to, contactId, ...rest } = body;
  const order = { ...rest, origin: 'api' as const, fields: { contactId: bodyField('contactId'), senderId: bodyField('senderId') } };
  if (to === undefined) return send(tenant, services, { ...order, contactId: contactId! });
  return inTenantTransaction(tenant, async (t) =>
    send(t, services, { ...order, contactId: (await contactByPhone(t, to, bodyField('to'))).id }),
  );
}
