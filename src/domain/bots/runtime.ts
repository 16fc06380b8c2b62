// The flow engine: a published bot converses. A session (bot_sessions) per conversation holds the published flow
// it started with, the node it waits at and the captured variables. Every message goes through the send entry (the
// one send path: compliance gate, channel plan, pricing). An inbound message advances a session at most once:
// ingestion stores each provider message once (a redelivery stops before the bot), and the session row is
// locked while it advances. Every node a session enters is recorded (bot_node_visits, the funnel) with how the
// session left it, in the same transaction as the step.
import * as q from '../../db/queries/bots/bots.ts';
import * as s from '../../db/queries/bots/sessions.ts';
import { recordVisits, type VisitExit, type VisitSession, type VisitStep } from '../../db/queries/bots/visits.ts';
import type { components } from '../../../generated/api.d.ts';
import { send, type MessageType } from '../messaging/send.ts';
import { ApiError, bodyField, unknownReference } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { cardsOf, CONTACT_FIELDS, type BotCard, type BotEdge, type BotFlow, type BotNode } from './flow.ts';
import { MAX_ATTRIBUTE_VALUE_CHARACTERS } from '../contacts/attribute-limits.ts';
import { clampText } from '../../lib/characters.ts';
import { parsePhone } from '../phone.ts';

type SendContent = components['schemas']['SendMessageContent'];
type Channel = components['schemas']['Channel'];

/**
 * A captured reply keeps its first this many characters (BotVariableCapture): the bound of the other values `{{…}}`
 * fills (contact attributes, event properties). The handset decides how long a reply is; cutting keeps the answer
 * where refusing would lose it, and a session's variables stay bounded.
 */
const MAX_CAPTURED_CHARACTERS = MAX_ATTRIBUTE_VALUE_CHARACTERS;

/** Most nodes one turn walks through without waiting (a guard against default-edge cycles). */
const MAX_STEPS_PER_TURN = 50;

/**
 * Most messages one turn sends (BotFlow): publish validation refuses a cycle that never waits (LOOP_WITHOUT_WAIT),
 * and this bounds what any flow, one published before that check included, bills per inbound message or event.
 * One event once sent 50 messages to one contact; `events/batch` of 20 sent 980.
 */
const MAX_MESSAGES_PER_TURN = 5;

/** Misses (replies matching no edge) before the flow's fallback hands the conversation to a human (BotFlowFallback). */
const DEFAULT_MAX_MISSES = 3;

export type TurnResult = { messageIds: string[]; status: 'ACTIVE' | 'ENDED' | 'HANDED_OFF' };

const norm = (v: string) => v.trim().toLowerCase();

/**
 * `{{name}}` from the variables (captured values, event properties, contact attributes), else empty; a name with
 * no value is added to `missing` when given (an event's message reports MISSING_PROPERTY instead of "Hi , …").
 */
function fill(text: string, vars: Record<string, string>, missing?: Set<string>): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_m, name: string) => {
    const v = vars[name] ?? vars[name.toLowerCase()];
    // The contact's own fields may be empty (a contact without a name); anything else is the event's to carry.
    if ((v === undefined || v === '') && !CONTACT_FIELDS.has(name.toLowerCase())) missing?.add(name);
    return v ?? '';
  });
}

/** An event's message names a placeholder that neither the event's properties nor the contact fill (MISSING_PROPERTY). */
export class MissingProperty extends Error {
  readonly names: string[];
  constructor(names: string[]) {
    super(`The message needs ${names.map((n) => `{{${n}}}`).join(', ')}, which neither the event's properties nor the contact carry.`);
    this.names = names;
  }
}

/** Variables a flow starts with: the contact's attributes (and name), then `extra` (event properties) over them. */
async function startVariables(tenant: Tenant, contactId: string, extra: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const c = await s.contactAttributes(tenant.db, tenant.organizationId, contactId);
  const vars: Record<string, string> = {};
  const put = (k: string, v: unknown) => {
    if (v === null || v === undefined || typeof v === 'object') return;
    vars[k.toLowerCase()] = String(v);
  };
  if (c) {
    for (const [k, v] of Object.entries(c.attributes ?? {})) put(k, v);
    if (c.name) {
      put('name', c.name);
      if (vars.first_name === undefined) put('first_name', c.name.split(/\s+/)[0]);
    }
    put('phone', c.phone);
  }
  for (const [k, v] of Object.entries(extra)) {
    put(k, v);
    put(`event.${k}`, v); // the Events section's `{{event.<key>}}` form
  }
  return vars;
}

/** A node's message with `{{…}}` filled from `vars` (names without a value added to `missing`); undefined when it sends nothing. */
export function nodeContent(node: BotNode, vars: Record<string, string>, missing?: Set<string>): SendContent | undefined {
  const c = node.content;
  if (!c) return undefined;
  const replies = (node.buttons ?? [])
    .filter((b) => b.type === 'reply' && b.intent)
    .map((b) => ({ text: b.text, postback: norm(b.intent!) }));
  const actions = (node.buttons ?? []).filter((b) => b.type === 'openUrl' && b.url).map((b) => ({ text: b.text, url: b.url! }));
  const extra = { ...(replies.length ? { replies } : {}), ...(actions.length ? { actions } : {}) };
  const cardOf = (k: BotCard) => ({
    type: 'card' as const,
    title: fill(k.title ?? k.description ?? ' ', vars, missing),
    ...(k.description && k.title ? { text: fill(k.description, vars, missing) } : {}),
    ...(k.mediaUrl ? { mediaUrl: k.mediaUrl } : {}),
    ...(k.assetId ? { assetId: k.assetId } : {}),
  });
  switch (c.type) {
    case 'text':
      return { type: 'text', text: fill(c.text ?? '', vars, missing), ...extra } as SendContent;
    case 'media':
      return {
        type: 'media',
        ...(c.assetId ? { assetId: c.assetId } : { mediaUrl: c.mediaUrl! }),
        ...(c.text ? { text: fill(c.text, vars, missing) } : {}),
        ...extra,
      } as SendContent;
    case 'card':
      return { ...cardOf(cardsOf(c)[0]!), ...(replies.length ? { replies: replies.slice(0, 4) } : {}) } as SendContent;
    case 'carousel':
      return {
        type: 'carousel',
        cards: cardsOf(c).map((k) => {
          const { type: _t, ...rest } = cardOf(k);
          return rest;
        }),
      } as unknown as SendContent;
    default:
      return undefined;
  }
}

type Ctx = {
  tenant: Tenant;
  services: Services;
  bot: { id: string; channel: string; sender_id: string | null };
  conversationId: string;
  contactId: string;
  senderId: string | null;
  messageType: MessageType;
  origin: 'bot' | 'event';
  /** The event trigger that started the flow (recorded on its messages). */
  eventTriggerId?: string;
  /** Messages this turn sent so far (MAX_MESSAGES_PER_TURN). */
  sent: number;
  /** The last node this turn completed (its message, if any, accepted): where a refusal later in the turn leaves the session. */
  progress?: string;
};

/** The turn reached MAX_MESSAGES_PER_TURN: it stops before sending more. */
class TurnCapReached extends Error {}

async function sendNode(ctx: Ctx, node: BotNode, vars: Record<string, string>): Promise<string | undefined> {
  const missing = new Set<string>();
  const content = nodeContent(node, vars, missing);
  if (!content) return undefined;
  if (ctx.origin === 'event' && missing.size > 0) throw new MissingProperty([...missing]);
  if (ctx.sent >= MAX_MESSAGES_PER_TURN) throw new TurnCapReached();
  ctx.sent++;
  const channelType: Channel = ctx.bot.channel === 'CHATAPP' ? 'CHATAPP' : (ctx.bot.channel as Channel);
  const row = await send(ctx.tenant, ctx.services, {
    contactId: ctx.contactId,
    ...(ctx.senderId ? { senderId: ctx.senderId } : {}),
    channelType,
    messageType: ctx.messageType,
    content,
    origin: ctx.origin,
    ...(ctx.eventTriggerId ? { eventTriggerId: ctx.eventTriggerId } : {}),
    conversationSource: { type: 'bot', botId: ctx.bot.id },
  });
  return row.id;
}

function holds(cond: NonNullable<BotEdge['condition']>, vars: Record<string, string>): boolean {
  const v = vars[norm(cond.variable)];
  switch (cond.operator) {
    case 'exists':
      return v !== undefined && v !== '';
    case 'notExists':
      return v === undefined || v === '';
    case 'equals':
      return v !== undefined && norm(v) === norm(cond.value ?? '');
    case 'notEquals':
      return v === undefined || norm(v) !== norm(cond.value ?? '');
    case 'contains':
      return v !== undefined && norm(v).includes(norm(cond.value ?? ''));
    default:
      return false;
  }
}

/** The session enters `node`: the node it was in is left for it. */
function enter(trail: VisitStep[], node: BotNode): void {
  const last = trail.at(-1);
  if (last && last.exit === null) Object.assign(last, { exit: 'advanced', nextNodeId: node.id });
  trail.push({ nodeId: node.id, nodeType: node.type, exit: null, nextNodeId: null });
}

/** The session leaves the node it is in without entering another. */
function leave(trail: VisitStep[], exit: VisitExit): void {
  const last = trail.at(-1);
  if (last && last.exit === null) last.exit = exit;
}

/**
 * Walks from `nodeId` (whose messages were not sent yet), sending each node's content, until a node waits for a
 * reply, hands off or ends. Answers where it stopped; `trail` gets every node entered (the last one open when the
 * session waits there, or when a send throws: the caller decides).
 */
async function walk(
  ctx: Ctx,
  flow: BotFlow,
  fromEdgeTarget: string | undefined,
  vars: Record<string, string>,
  ids: string[],
  trail: VisitStep[],
): Promise<{ nodeId: string | null; status: TurnResult['status'] }> {
  const nodes = new Map(flow.nodes.map((n) => [n.id, n]));
  const out = (id: string) => flow.edges.filter((e) => e.source === id);
  let current = fromEdgeTarget ? nodes.get(fromEdgeTarget) : undefined;
  for (let step = 0; current && step < MAX_STEPS_PER_TURN; step++) {
    const node: BotNode = current;
    enter(trail, node);
    const edges = out(node.id);
    const dflt = edges.find((e) => !e.intent && !e.condition);
    switch (node.type) {
      case 'START':
        current = dflt ? nodes.get(dflt.target) : undefined;
        continue;
      case 'CONDITION': {
        const next = edges.find((e) => e.condition && holds(e.condition, vars)) ?? dflt;
        current = next ? nodes.get(next.target) : undefined;
        continue;
      }
      case 'MESSAGE': {
        const id = await sendNode(ctx, node, vars);
        if (id) ids.push(id);
        ctx.progress = node.id; // sent: a refusal further on never sends it again
        if (dflt) {
          current = nodes.get(dflt.target);
          continue;
        }
        if (edges.length === 0) leave(trail, 'errored'); // a dead end (publish validation refuses one)
        return { nodeId: node.id, status: edges.length > 0 ? 'ACTIVE' : 'ENDED' };
      }
      case 'QUESTION': {
        const id = await sendNode(ctx, node, vars);
        if (id) ids.push(id);
        return { nodeId: node.id, status: 'ACTIVE' };
      }
      case 'HANDOFF': {
        const id = await sendNode(ctx, node, vars);
        if (id) ids.push(id);
        // A human holds it now, the bot kept as the last one (Conversation.botId): no trigger takes it back.
        await s.handToHuman(ctx.tenant.db, ctx.tenant.organizationId, ctx.conversationId, ctx.bot.id);
        leave(trail, 'handed_off');
        return { nodeId: node.id, status: 'HANDED_OFF' };
      }
      case 'END': {
        const id = await sendNode(ctx, node, vars);
        if (id) ids.push(id);
        leave(trail, 'completed');
        return { nodeId: node.id, status: 'ENDED' };
      }
    }
  }
  leave(trail, 'errored'); // no edge applies, an unknown target, or the step guard
  return { nodeId: null, status: 'ENDED' };
}

/**
 * Starts the bot's published flow in a conversation: a session on the published flow, the messages of the first
 * nodes through the send entry. Gate refusals (422 DNC_LISTED, OPTED_OUT, NO_CONSENT …) propagate to the caller.
 */
export async function startFlow(
  tenant: Tenant,
  services: Services,
  bot: q.BotRow,
  target: { conversationId: string; contactId: string; senderId: string | null },
  opts: {
    messageType?: MessageType;
    origin?: 'bot' | 'event';
    /** The event trigger starting the flow (its messages record it). */
    eventTriggerId?: string;
    properties?: Record<string, unknown>;
    /** The inbound message that started it (an inbound trigger): it never advances the session it started. */
    inboundMessageId?: string;
  } = {},
): Promise<TurnResult> {
  const flow = bot.published_flow as BotFlow;
  const vars = await startVariables(tenant, target.contactId, opts.properties);
  const session = await s.startSession(tenant.db, tenant.organizationId, {
    botId: bot.id,
    botVersion: bot.published_version,
    conversationId: target.conversationId,
    contactId: target.contactId,
    flow,
    variables: vars,
  });
  const visits: VisitSession = {
    id: session.id,
    botId: bot.id,
    botVersion: bot.published_version,
    conversationId: target.conversationId,
    contactId: target.contactId,
    startedAt: session.created_at,
  };
  const ctx: Ctx = {
    tenant,
    services,
    bot,
    conversationId: target.conversationId,
    contactId: target.contactId,
    senderId: target.senderId,
    messageType: opts.messageType ?? 'SERVICE',
    origin: opts.origin ?? 'bot',
    ...(opts.eventTriggerId ? { eventTriggerId: opts.eventTriggerId } : {}),
    sent: 0,
  };
  const start = flow.nodes.find((n) => n.type === 'START');
  const ids: string[] = [];
  const trail: VisitStep[] = [];
  let end: { nodeId: string | null; status: TurnResult['status'] };
  try {
    end = await walk(ctx, flow, start?.id, vars, ids, trail);
  } catch (error) {
    const refused = error instanceof ApiError || error instanceof TurnCapReached || error instanceof MissingProperty;
    if (refused && ctx.progress) {
      // Messages went out before the refusal: the session waits after the last one sent, so the next reply
      // goes on from there and sends none of them again (issue 33 item 7).
      end = { nodeId: ctx.progress, status: 'ACTIVE' };
      leave(trail, 'errored');
    } else {
      await s.saveSession(tenant.db, tenant.organizationId, session.id, { nodeId: null, variables: vars, status: 'ENDED' });
      leave(trail, 'errored');
      await recordVisits(tenant.db, tenant.organizationId, visits, { trail });
      if (error instanceof TurnCapReached) return { messageIds: ids, status: 'ENDED' };
      throw error;
    }
  }
  await s.saveSession(tenant.db, tenant.organizationId, session.id, {
    nodeId: end.nodeId,
    variables: vars,
    status: end.status,
    ...(opts.inboundMessageId ? { lastInboundMessageId: opts.inboundMessageId } : {}),
  });
  await recordVisits(tenant.db, tenant.organizationId, visits, { trail });
  return { messageIds: ids, status: end.status };
}

/**
 * Handoff of a conversation to a bot (POST /v1/conversations/{id}/handoff, `to: bot`): the bot must be of the
 * organization and published (404 naming body.botId otherwise); the conversation becomes the bot's and the
 * published flow starts at once (its first messages are sent as SERVICE messages: a reply in a conversation).
 */
export async function handOffToBot(
  tenant: Tenant,
  services: Services,
  conversation: { id: string; contact_id: string; sender_id: string },
  botId: string | undefined,
): Promise<void> {
  const bot = botId ? await q.getBot(tenant.db, tenant.organizationId, botId) : undefined;
  if (!bot || bot.published_flow === null) throw unknownReference(bodyField('botId'), 'bot'); // unknown, foreign or never published
  await s.setConversationHandler(tenant.db, tenant.organizationId, conversation.id, bot.id);
  await startFlow(tenant, services, bot, {
    conversationId: conversation.id,
    contactId: conversation.contact_id,
    senderId: conversation.sender_id,
  });
}

type InboundMessage = { id: string; content: unknown };

/** The intent an inbound message carries: a postback, a reply button's text or number, or an intent's value/label. */
function intentOf(
  node: BotNode,
  content: { type?: string; text?: string | null; postback?: string },
  intents: Array<{ value: string; label: string }>,
): string | undefined {
  if (content.postback) return norm(content.postback);
  const text = content.text ? norm(content.text) : '';
  if (!text) return undefined;
  const buttons = (node.buttons ?? []).filter((b) => b.type === 'reply' && b.intent);
  const byText = buttons.find((b) => norm(b.text) === text);
  if (byText) return norm(byText.intent!);
  const n = Number(text);
  if (Number.isInteger(n) && n >= 1 && n <= buttons.length) return norm(buttons[n - 1]!.intent!);
  const intent = intents.find((i) => i.value === text || norm(i.label) === text);
  return intent?.value;
}

/**
 * One turn of a conversation handed to a bot: called by inbound ingestion (in its transaction) for every stored
 * inbound message. Does nothing unless the conversation is the bot's and a session waits at a node. The inbound
 * message advances the session once (`last_inbound_message_id`), following the edge of its intent or the default
 * edge; the next nodes' messages go through the send entry. A refusal of the gate ends the turn without a message.
 */
export async function runBotTurn(
  tenant: Tenant,
  services: Services,
  conversation: { id: string; contact_id: string; sender_id: string; handled_by: string; bot_id: string | null },
  message: InboundMessage,
  /** The message is a compliance keyword that acts (STOP, HELP, START from an opted-out phone): never a reply. */
  isKeyword = false,
): Promise<TurnResult | undefined> {
  if (conversation.handled_by !== 'bot' || !conversation.bot_id) return undefined;
  const { db, organizationId: orgId } = tenant;
  const session = await s.activeSession(db, orgId, conversation.id);
  if (!session || !session.node_id || session.last_inbound_message_id === message.id) return undefined;
  const bot = await q.getBot(db, orgId, session.bot_id);
  if (!bot) return undefined;
  const flow = session.flow as BotFlow;
  const node = flow.nodes.find((n) => n.id === session.node_id);
  if (!node) return undefined;
  const content = (message.content ?? {}) as { type?: string; text?: string | null; postback?: string };
  // A compliance keyword that acts (keyword-engine.ts actingKeyword) is the keyword engine's, never a reply to the bot.
  if (!content.postback && isKeyword) return undefined;
  const intent = intentOf(node, content, await s.intentsByText(db, orgId));
  const vars = { ...(session.variables ?? {}) };
  const ctx: Ctx = {
    tenant,
    services,
    bot,
    conversationId: conversation.id,
    contactId: conversation.contact_id,
    senderId: conversation.sender_id,
    messageType: 'SERVICE',
    origin: 'bot',
    sent: 0,
  };
  let captured = true;
  if (node.capture) {
    const name = norm(node.capture.variable);
    if (node.capture.from === 'intent') vars[name] = intent ?? '';
    else {
      // The variable definition's type decides what a reply may be (a list's items, a number, a date …).
      const value = typedAnswer(
        (await s.variableTypes(db, orgId)).get(name),
        clampText(content.text ?? content.postback ?? '', MAX_CAPTURED_CHARACTERS),
      );
      if (value === undefined) captured = false;
      else vars[name] = value;
    }
  }
  const edges = flow.edges.filter((e) => e.source === node.id);
  const next = !captured
    ? undefined
    : ((intent ? edges.find((e) => e.intent && norm(e.intent) === intent) : undefined) ?? edges.find((e) => !e.intent && !e.condition));
  if (!next) return miss(ctx, session, flow, node, vars, message.id);
  const ids: string[] = [];
  const trail: VisitStep[] = [];
  let end: { nodeId: string | null; status: TurnResult['status'] };
  try {
    end = await walk(ctx, flow, next.target, vars, ids, trail);
  } catch (error) {
    // A refusal (ApiError: the gate, no channel …) is checked in code: the transaction is intact, the inbound
    // message stands. The session waits after the last node whose message was sent (none sent: where it was), so
    // the next reply sends nothing twice. Anything else fails the ingestion (the carrier retries).
    if (!(error instanceof ApiError) && !(error instanceof TurnCapReached)) throw error;
    if (error instanceof ApiError)
      services.log.warn({ conversationId: conversation.id, code: error.code, reason: error.message }, 'bot reply not sent');
    const at = ctx.progress ? (flow.nodes.find((n) => n.id === ctx.progress) ?? node) : node;
    end = { nodeId: at.id, status: 'ACTIVE' };
    leave(trail, 'errored');
    trail.push({ nodeId: at.id, nodeType: at.type, exit: null, nextNodeId: null }); // waits there
  }
  await s.saveSession(db, orgId, session.id, { nodeId: end.nodeId, variables: vars, status: end.status, lastInboundMessageId: message.id });
  const visits: VisitSession = {
    id: session.id,
    botId: bot.id,
    botVersion: session.bot_version,
    conversationId: conversation.id,
    contactId: session.contact_id,
    startedAt: session.created_at,
  };
  const left =
    trail[0]?.nodeId === next.target
      ? { exit: 'advanced' as const, nextNodeId: next.target }
      : { exit: 'errored' as const, nextNodeId: null };
  await recordVisits(db, orgId, visits, { close: left, trail });
  return { messageIds: ids, status: end.status };
}

/**
 * A reply that matched no edge at the node the session waits at (or failed its capture's type): the node's
 * `reprompt` (else its own content) is sent again, and after the flow's `fallback.maxMisses` misses in a row the
 * fallback text is sent and a human holds the conversation (BotFlowFallback).
 */
async function miss(
  ctx: Ctx,
  session: s.BotSessionRow,
  flow: BotFlow,
  node: BotNode,
  vars: Record<string, string>,
  inboundMessageId: string,
): Promise<TurnResult> {
  const { db, organizationId: orgId } = ctx.tenant;
  const misses = session.misses + 1;
  const maxMisses = flow.fallback?.maxMisses ?? DEFAULT_MAX_MISSES;
  const ids: string[] = [];
  let status: TurnResult['status'] = 'ACTIVE';
  try {
    if (misses >= maxMisses) {
      const text = flow.fallback?.text;
      if (text) {
        const id = await sendNode(ctx, { id: node.id, type: 'HANDOFF', content: { type: 'text', text } }, vars);
        if (id) ids.push(id);
      }
      await s.handToHuman(db, orgId, ctx.conversationId, ctx.bot.id);
      status = 'HANDED_OFF';
    } else {
      const again: BotNode = node.reprompt ? { ...node, content: { type: 'text', text: node.reprompt } } : node;
      const id = await sendNode(ctx, again, vars);
      if (id) ids.push(id);
    }
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    ctx.services.log.warn({ conversationId: ctx.conversationId, code: error.code, reason: error.message }, 'bot re-prompt not sent');
  }
  await s.saveSession(db, orgId, session.id, {
    nodeId: node.id,
    variables: vars,
    status,
    lastInboundMessageId: inboundMessageId,
    misses: status === 'ACTIVE' ? misses : 0,
  });
  if (status === 'HANDED_OFF') {
    const visits: VisitSession = {
      id: session.id,
      botId: ctx.bot.id,
      botVersion: session.bot_version,
      conversationId: ctx.conversationId,
      contactId: session.contact_id,
      startedAt: session.created_at,
    };
    await recordVisits(db, orgId, visits, { close: { exit: 'handed_off', nextNodeId: null }, trail: [] });
  }
  return { messageIds: ids, status };
}

/**
 * A captured reply as its variable definition's type reads it, or undefined when it is not one (a re-prompt):
 * `list` one of `items` (case-insensitive, stored as defined), `number` a decimal, `date` a calendar date (stored
 * YYYY-MM-DD), `boolean` yes/no, `email` an address, `phone` a number (stored E.164); `text` (or no definition) any.
 */
function typedAnswer(def: { type: string; items: string[] | null } | undefined, raw: string): string | undefined {
  const v = raw.trim();
  if (!def) return raw;
  switch (def.type) {
    case 'list':
      return (def.items ?? []).find((i) => norm(i) === norm(v));
    case 'number': {
      const n = v.replace(/[\s,](?=\d{3}\b)/g, '');
      return /^[-+]?\d+(\.\d+)?$/.test(n) ? String(Number(n)) : undefined;
    }
    case 'date': {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v) ?? /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(v);
      if (!m) return undefined;
      const [y, mo, d] = m[1]!.length === 4 ? [m[1]!, m[2]!, m[3]!] : [m[3]!, m[1]!, m[2]!]; // US order: M/D/YYYY
      const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
      const iso = date.toISOString().slice(0, 10);
      return iso === `${y}-${mo.padStart(2, '0')}-${d.padStart(2, '0')}` ? iso : undefined;
    }
    case 'boolean':
      return /^(yes|y|true|1)$/i.test(v) ? 'true' : /^(no|n|false|0)$/i.test(v) ? 'false' : undefined;
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? v : undefined;
    case 'phone':
      return parsePhone(v)?.e164;
    default:
      return raw;
  }
}
