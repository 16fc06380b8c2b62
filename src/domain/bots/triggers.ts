// Event triggers live in the bot's definition (`triggers`, issue 16). This module checks them on write and is the
// bots' trigger source for POST /v1/events (registerTriggerSource): for every active trigger of a published bot
// whose event name and conditions match, the published flow starts for the event's contact through the send entry (messaging/send.ts),
// unless the contact is inside the trigger's per-contact cool-down (FREQUENCY_CAPPED) or the compliance gate
// refuses (DNC_LISTED, OPTED_OUT, NO_CONSENT, CONTENT_BLOCKED).
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/api.d.ts';
import * as s from '../../db/queries/bots/sessions.ts';
import { openConversation } from '../messaging/conversation.ts';
import { resolveSender } from '../messaging/senders.ts';
import { ApiError, bodyField, invalidField } from '../errors.ts';
import { registerTriggerSource, type TriggeredEvent, type TriggerOutcome, type TriggerSource } from '../events/trigger-sources.ts';
import type { Services, Tenant } from '../tenant.ts';
import { startFlow } from './runtime.ts';

export type BotTrigger = components['schemas']['BotTrigger'];
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
      eventName: t.eventName,
      conditions: t.conditions ?? [],
      messageType: t.messageType ?? 'MARKETING',
      cooldownSeconds: t.cooldownSeconds ?? 0,
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

export function triggerMatches(t: BotTrigger, event: Pick<TriggeredEvent, 'name' | 'properties'>): boolean {
  return (t.active ?? true) && t.eventName === event.name && (t.conditions ?? []).every((c) => conditionHolds(c, event.properties));
}

const GATE = new Set(['DNC_LISTED', 'OPTED_OUT', 'NO_CONSENT', 'CONTENT_BLOCKED', 'NO_CHANNEL_AVAILABLE']);

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
      if (last && cooldown > 0 && event.occurredAt.getTime() - last.getTime() < cooldown) {
        outcomes.push({
          triggerId,
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
            messageType: trigger.messageType ?? 'MARKETING',
            origin: 'event',
            properties: event.properties,
          },
        );
        if (turn.status === 'ACTIVE') await s.setConversationHandler(db, orgId, conversation.id, bot.id);
        await s.recordFire(db, orgId, bot.id, triggerId, event.contactId, event.occurredAt);
        outcomes.push({ triggerId, messageIds: turn.messageIds, skipped: [] });
      } catch (error) {
        if (!(error instanceof ApiError) || !GATE.has(error.code)) throw error;
        outcomes.push({ triggerId, messageIds: [], skipped: [{ reason: error.code, message: error.message }] });
      }
    }
  }
  return outcomes;
}

export const botTriggerSource: TriggerSource = { run: runBotTriggers };

let registered = false;
/** Registers the bots as a trigger source once (module load of the bots domain). */
export function registerBotTriggers(): void {
  if (registered) return;
  registered = true;
  registerTriggerSource(botTriggerSource);
}
registerBotTriggers();
