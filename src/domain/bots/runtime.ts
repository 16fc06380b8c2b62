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
import { matchKeyword } from '../compliance/keyword-engine.ts';
import { effectiveKeywordRules, orgKeywordRules } from '../compliance/keyword-rules.ts';
import type { Services, Tenant } from '../tenant.ts';
import { cardsOf, type BotCard, type BotEdge, type BotFlow, type BotNode } from './flow.ts';
import { MAX_ATTRIBUTE_VALUE_CHARACTERS } from '../contacts/attribute-limits.ts';
import { clampText } from '../../lib/characters.ts';

type SendContent = components['schemas']['SendMessageContent'];
type Channel = components['schemas']['Channel'];

/**
 * A captured reply keeps its first this many characters (BotVariableCapture): the bound of the other values `{{…}}`
 * fills (contact attributes, event properties). The handset decides how long a reply is; cutting keeps the answer
 * where refusing would lose it, and a session's variables stay bounded.
 */
const MAX_CAPTURED_CHARACTERS = MAX_ATTRIBUTE_VALUE_CHARACTERS;

/** Most nodes one turn walks through without waiting (a guard against default-edge cycles). */
export const MAX_STEPS_PER_TURN = 50;

export type TurnResult = { messageIds: string[]; status: 'ACTIVE' | 'ENDED' | 'HANDED_OFF' };

const norm = (v: string) => v.trim().toLowerCase();

/** `{{name}}` from the variables (captured values, event properties, contact attributes), else empty. */
export function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_m, name: string) => vars[name] ?? vars[name.toLowerCase()] ?? '');
}

/** Variables a flow starts with: the contact's attributes (and name), then `extra` (event properties) over them. */
export async function startVariables(
  tenant: Tenant,
  contactId: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, string>> {
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

function toSendContent(node: BotNode, vars: Record<string, string>): SendContent | undefined {
  const c = node.content;
  if (!c) return undefined;
  const replies = (node.buttons ?? [])
    .filter((b) => b.type === 'reply' && b.intent)
    .map((b) => ({ text: b.text, postback: norm(b.intent!) }));
  const actions = (node.buttons ?? []).filter((b) => b.type === 'openUrl' && b.url).map((b) => ({ text: b.text, url: b.url! }));
  const extra = { ...(replies.length ? { replies } : {}), ...(actions.length ? { actions } : {}) };
  const cardOf = (k: BotCard) => ({
    type: 'card' as const,
    title: fill(k.title ?? k.description ?? ' ', vars),
    ...(k.description && k.title ? { text: fill(k.description, vars) } : {}),
    ...(k.mediaUrl ? { mediaUrl: k.mediaUrl } : {}),
    ...(k.assetId ? { assetId: k.assetId } : {}),
  });
  switch (c.type) {
    case 'text':
      return { type: 'text', text: fill(c.text ?? '', vars), ...extra } as SendContent;
    case 'media':
      return {
        type: 'media',
        ...(c.assetId ? { assetId: c.assetId } : { mediaUrl: c.mediaUrl! }),
        ...(c.text ? { text: fill(c.text, vars) } : {}),
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
};

async function sendNode(ctx: Ctx, node: BotNode, vars: Record<string, string>): Promise<string | undefined> {
  const content = toSendContent(node, vars);
  if (!content) return undefined;
  const channelType: Channel = ctx.bot.channel === 'CHATAPP' ? 'CHATAPP' : (ctx.bot.channel as Channel);
  const row = await send(ctx.tenant, ctx.services, {
    contactId: ctx.contactId,
    ...(ctx.senderId ? { senderId: ctx.senderId } : {}),
    channelType,
    messageType: ctx.messageType,
    content,
    origin: ctx.origin,
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
        await s.setConversationHandler(ctx.tenant.db, ctx.tenant.organizationId, ctx.conversationId, null);
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
  opts: { messageType?: MessageType; origin?: 'bot' | 'event'; properties?: Record<string, unknown> } = {},
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
  };
  const start = flow.nodes.find((n) => n.type === 'START');
  const ids: string[] = [];
  const trail: VisitStep[] = [];
  let end: { nodeId: string | null; status: TurnResult['status'] };
  try {
    end = await walk(ctx, flow, start?.id, vars, ids, trail);
  } catch (error) {
    await s.saveSession(tenant.db, tenant.organizationId, session.id, { nodeId: null, variables: vars, status: 'ENDED' });
    leave(trail, 'errored');
    await recordVisits(tenant.db, tenant.organizationId, visits, { trail });
    throw error;
  }
  await s.saveSession(tenant.db, tenant.organizationId, session.id, { nodeId: end.nodeId, variables: vars, status: end.status });
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
  // A compliance keyword (STOP, HELP …) is the keyword engine's, never a reply to the bot.
  if (!content.postback && content.text && matchKeyword(effectiveKeywordRules(await orgKeywordRules(db, orgId)), content.text))
    return undefined;
  const intent = intentOf(node, content, await s.intentsByText(db, orgId));
  const vars = { ...(session.variables ?? {}) };
  if (node.capture)
    vars[norm(node.capture.variable)] =
      node.capture.from === 'intent' ? (intent ?? '') : clampText(content.text ?? content.postback ?? '', MAX_CAPTURED_CHARACTERS);
  const edges = flow.edges.filter((e) => e.source === node.id);
  const next =
    (intent ? edges.find((e) => e.intent && norm(e.intent) === intent) : undefined) ?? edges.find((e) => !e.intent && !e.condition);
  if (!next) {
    await s.saveSession(db, orgId, session.id, { nodeId: node.id, variables: vars, status: 'ACTIVE', lastInboundMessageId: message.id });
    return { messageIds: [], status: 'ACTIVE' };
  }
  const ctx: Ctx = {
    tenant,
    services,
    bot,
    conversationId: conversation.id,
    contactId: conversation.contact_id,
    senderId: conversation.sender_id,
    messageType: 'SERVICE',
    origin: 'bot',
  };
  const ids: string[] = [];
  const trail: VisitStep[] = [];
  let end: { nodeId: string | null; status: TurnResult['status'] };
  try {
    end = await walk(ctx, flow, next.target, vars, ids, trail);
  } catch (error) {
    // A refusal (ApiError: the gate, no channel …) is checked in code: the transaction is intact, the inbound
    // message stands and the bot waits where it was. Anything else fails the ingestion (the carrier retries).
    if (!(error instanceof ApiError)) throw error;
    services.log.warn({ conversationId: conversation.id, code: error.code, reason: error.message }, 'bot reply not sent');
    end = { nodeId: node.id, status: 'ACTIVE' };
    leave(trail, 'errored');
    trail.push({ nodeId: node.id, nodeType: node.type, exit: null, nextNodeId: null }); // waits at its node again
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
