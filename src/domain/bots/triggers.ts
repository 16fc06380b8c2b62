// A bot's triggers: what starts its published flow. Event triggers (`triggers`, issue 16) and inbound triggers
// (`inboundTriggers`: a keyword or an intent on an inbound message; `defaultForSender`: the sender's greeter) both
// live in the bot's definition and are run from here.
//
// Event triggers live in the bot's definition (`triggers`, issue 16). This module checks them on write and is the
// bots' trigger runner for POST /v1/events (events.ts calls runBotTriggers): for every active trigger of a published bot
// whose event name and conditions match, the published flow starts for the event's contact through the send entry (messaging/send.ts),
// unless the contact is inside the trigger's per-contact cool-down (FREQUENCY_CAPPED) or the compliance gate
// refuses (DNC_LISTED, OPTED_OUT, NO_CONSENT, CONTENT_BLOCKED).
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/api.d.ts';
import * as s from '../../db/queries/bots/sessions.ts';
import { openConversation } from '../messaging/conversation.ts';
import { resolveSender } from '../messaging/senders.ts';
import { ApiError, bodyField, invalidField } from '../errors.ts';
import { normalizeInboundText } from '../compliance/keyword-engine.ts';
import type { TriggeredEvent, TriggerOutcome } from '../events/trigger-sources.ts';
import type { Services, Tenant } from '../tenant.ts';
import { MissingProperty, startFlow, type TurnResult } from './runtime.ts';

export type BotTrigger = components['schemas']['BotTrigger'];
export type BotInboundTrigger = components['schemas']['BotInboundTrigger'];
type Condition = components['schemas']['BotTriggerCondition'];

/** Trigger ids unique within the bot (400 naming the second one); answers the list with defaults filled. */
export function assertTriggers(triggers: BotTrigger[] | undefined): BotTrigger[] | undefined {
  if (triggers === undefined) return undefined;
  const ids = new Set<string>();
  return triggers.map((t, i) => {
    const id = t.id ?? randomUUID();
    if (ids.has(id)) throw invalidField(bodyField('triggers', i, 'id'), `duplicate trigger id "${t.id}"`);
    ids.add(id);
    return {
      id,
      name: t.name ?? null,
      eventName: t.eventName,
      conditions: t.conditions ?? [],
      messageType: t.messageType ?? 'MARKETING',
      cooldownSeconds: t.cooldownSeconds ?? 0,
      active: t.active ?? true,
    };
  });
}

/** Inbound trigger ids unique within the bot (400 naming the second one); keywords stored upper case. */
export function assertInboundTriggers(triggers: BotInboundTrigger[] | undefined): BotInboundTrigger[] | undefined {
  if (triggers === undefined) return undefined;
  const ids = new Set<string>();
  return triggers.map((t, i) => {
    const id = t.id ?? randomUUID();
    if (ids.has(id)) throw invalidField(bodyField('inboundTriggers', i, 'id'), `duplicate trigger id "${t.id}"`);
    ids.add(id);
    return {
      id,
      name: t.name ?? null,
      type: t.type,
      ...(t.type === 'keyword' ? { keywords: [...new Set((t.keywords ?? []).map(normalizeInboundText))] } : {}),
      ...(t.type === 'intent' ? { intent: t.intent!.trim().toLowerCase() } : {}),
      active: t.active ?? true,
    };
  });
}

function conditionHolds(c: Condition, properties: Record<string, unknown>): boolean {
  const raw = properties[c.property];
  const present = raw !== undefined && raw !== null;
  const v = present ? (typeof raw === 'object' ? JSON.stringify(raw) : String(raw as string | number | boolean)) : undefined;
  switch (c.operator) {
    case 'exists':
      return present;
    case 'notExists':
      return !present;
    case 'equals':
      return v !== undefined && v === (c.value ?? '');
    case 'notEquals':
      return v === undefined || v !== (c.value ?? '');
    case 'contains':
      return v !== undefined && v.includes(c.value ?? '');
    default:
      return false;
  }
}

function triggerMatches(t: BotTrigger, event: Pick<TriggeredEvent, 'name' | 'properties'>): boolean {
  return (t.active ?? true) && t.eventName === event.name && (t.conditions ?? []).every((c) => conditionHolds(c, event.properties));
}

// A chat-app bot's closed session is the recipient's refusal too (the send's session window).
const GATE = new Set(['DNC_LISTED', 'OPTED_OUT', 'NO_CONSENT', 'CONTENT_BLOCKED', 'NO_CHANNEL_AVAILABLE', 'CHATAPP_SESSION_CLOSED']);

type MessageType = NonNullable<BotTrigger['messageType']>;
/** Consent each class needs, strictest last: MARKETING needs marketing consent and quiet hours. */
const STRICTNESS: readonly MessageType[] = ['SERVICE', 'TRANSACTIONAL', 'MARKETING'];

/**
 * The class an event's messages go out as: the stricter of the request's `messageType` (when sent) and the
 * trigger's (EventTriggerRequest.messageType). A MARKETING event under a TRANSACTIONAL trigger is MARKETING: it
 * was sent without consent before.
 */
function stricterClass(request: MessageType | undefined, trigger: MessageType): MessageType {
  if (!request) return trigger;
  return STRICTNESS.indexOf(request) > STRICTNESS.indexOf(trigger) ? request : trigger;
}

/** Runs the organization's matching bot triggers for one event (inside the event's transaction). */
export async function runBotTriggers(tenant: Tenant, services: Services, event: TriggeredEvent): Promise<TriggerOutcome[]> {
  const { db, organizationId: orgId } = tenant;
  const outcomes: TriggerOutcome[] = [];
  for (const bot of await s.triggeredBots(db, orgId)) {
    for (const trigger of (bot.triggers as BotTrigger[]) ?? []) {
      if (!triggerMatches(trigger, event)) continue;
      const triggerId = trigger.id!;
      const last = await s.lastFire(db, orgId, bot.id, triggerId, event.contactId);
      const cooldown = (trigger.cooldownSeconds ?? 0) * 1000;
      // Server time: `occurredAt` is the client's claim, for reporting only (an event dated +2 h escaped the cool-down).
      const now = new Date();
      if (last && cooldown > 0 && now.getTime() - last.getTime() < cooldown) {
        outcomes.push({
          triggerId,
          name: trigger.name ?? triggerId,
          messageIds: [],
          skipped: [
            { reason: 'FREQUENCY_CAPPED', message: `The contact got this trigger's flow less than ${trigger.cooldownSeconds} s ago.` },
          ],
        });
        continue;
      }
      try {
        const sender = await resolveSender(db, orgId, bot.sender_id ?? undefined);
        const conversation = await openConversation(db, orgId, event.contactId, sender.id, { type: 'event' });
        const turn = await startFlow(
          tenant,
          services,
          bot,
          { conversationId: conversation.id, contactId: event.contactId, senderId: sender.id },
          {
            messageType: stricterClass(event.messageType, trigger.messageType ?? 'MARKETING'),
            origin: 'event',
            eventTriggerId: triggerId,
            properties: event.properties,
          },
        );
        if (turn.status === 'ACTIVE') await s.setConversationHandler(db, orgId, conversation.id, bot.id);
        await s.recordFire(db, orgId, bot.id, triggerId, event.contactId, now);
        outcomes.push({ triggerId, name: trigger.name ?? triggerId, messageIds: turn.messageIds, skipped: [] });
      } catch (error) {
        if (error instanceof MissingProperty) {
          outcomes.push({
            triggerId,
            name: trigger.name ?? triggerId,
            messageIds: [],
            skipped: [{ reason: 'MISSING_PROPERTY', message: error.message }],
          });
          continue;
        }
        if (!(error instanceof ApiError) || !GATE.has(error.code)) throw error;
        outcomes.push({
          triggerId,
          name: trigger.name ?? triggerId,
          messageIds: [],
          skipped: [{ reason: error.code, message: error.message }],
        });
      }
    }
  }
  return outcomes;
}

type InboundConversation = { id: string; contact_id: string; sender_id: string; handled_by: string; bot_id: string | null };
type InboundText = { id: string; text: string | null; postback: string | null };

/** Handed to a human after a bot held it (a HANDOFF node, or a handoff to `human`): it stays human until handed back. */
const heldByHuman = (c: InboundConversation): boolean => c.handled_by === 'human' && c.bot_id !== null;

/**
 * Starts a bot for an inbound message that no flow consumed. `phase: 'keyword'` tries only keyword triggers (they
 * restart a conversation a bot session holds: "DEMO" starts over); `phase: 'idle'` (no bot session holds the
 * conversation) tries intent triggers, then the sender's default bot. A human-held conversation is never taken.
 * Answers the turn that started, or undefined. A refusal of the first message (the gate, no channel) is logged
 * and leaves the inbound message stored, as a keyword reply's refusal does.
 */
export async function runInboundTriggers(
  tenant: Tenant,
  services: Services,
  conversation: InboundConversation,
  message: InboundText,
  phase: 'keyword' | 'idle',
): Promise<TurnResult | undefined> {
  if (heldByHuman(conversation)) return undefined;
  const { db, organizationId: orgId } = tenant;
  const bots = await s.inboundBots(db, orgId, conversation.sender_id);
  if (bots.length === 0) return undefined;
  const triggersOf = (b: (typeof bots)[number]) => ((b.inbound_triggers as BotInboundTrigger[]) ?? []).filter((t) => t.active ?? true);
  let bot: (typeof bots)[number] | undefined;
  if (phase === 'keyword') {
    const text = message.text ? normalizeInboundText(message.text) : '';
    if (text)
      bot = bots.find(
        (b) =>
          (b.sender_id === null || b.sender_id === conversation.sender_id) &&
          triggersOf(b).some((t) => t.type === 'keyword' && (t.keywords ?? []).includes(text)),
      );
  } else {
    const intents = await s.intentsByText(db, orgId);
    const said = message.postback ? message.postback.trim().toLowerCase() : message.text ? message.text.trim().toLowerCase() : '';
    const intent = said ? intents.find((i) => i.value === said || i.label.trim().toLowerCase() === said)?.value : undefined;
    if (intent) bot = bots.find((b) => triggersOf(b).some((t) => t.type === 'intent' && t.intent === intent));
    bot ??= bots.find((b) => b.default_for_sender && b.sender_id === conversation.sender_id);
  }
  if (!bot) return undefined;
  try {
    const turn = await startFlow(
      tenant,
      services,
      bot,
      { conversationId: conversation.id, contactId: conversation.contact_id, senderId: conversation.sender_id },
      { inboundMessageId: message.id },
    );
    if (turn.status === 'ACTIVE') await s.setConversationHandler(db, orgId, conversation.id, bot.id);
    return turn;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    services.log.warn({ conversationId: conversation.id, botId: bot.id, code: error.code, reason: error.message }, 'bot greeting not sent');
    return undefined;
  }
}
