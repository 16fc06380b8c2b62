// SQL for running bot flows: sessions per conversation, the conversation's handler, trigger cool-downs, and what
// a flow reads (contact attributes, intents).
import { sql, type Selectable } from 'kysely';
import type { BotSessionsTable } from '../../tables/bots.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { abandonOpenVisits } from './visits.ts';

export type BotSessionRow = Selectable<BotSessionsTable>;

export function activeSession(db: TenantDb, orgId: string, conversationId: string): Promise<BotSessionRow | undefined> {
  return tenant(db.selectFrom('bot_sessions'), orgId)
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('status', '=', 'ACTIVE')
    .forUpdate()
    .executeTakeFirst();
}

/** Ends any running session of the conversation (its open visit: `abandoned`), then starts one. */
export async function startSession(
  db: TenantDb,
  orgId: string,
  s: {
    botId: string;
    botVersion: number | null;
    conversationId: string;
    contactId: string;
    flow: unknown;
    variables: Record<string, string>;
  },
): Promise<BotSessionRow> {
  await abandonOpenVisits(db, orgId, s.conversationId);
  await tenant(db.updateTable('bot_sessions'), orgId)
    .set({ status: 'ENDED', updated_at: sql`now()` })
    .where('conversation_id', '=', s.conversationId)
    .where('status', '=', 'ACTIVE')
    .execute();
  return db
    .insertInto('bot_sessions')
    .values({
      organization_id: orgId,
      bot_id: s.botId,
      bot_version: s.botVersion,
      conversation_id: s.conversationId,
      contact_id: s.contactId,
      flow: JSON.stringify(s.flow),
      variables: JSON.stringify(s.variables),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function saveSession(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { nodeId: string | null; variables: Record<string, string>; status: string; lastInboundMessageId?: string; misses?: number },
): Promise<void> {
  await tenant(db.updateTable('bot_sessions'), orgId)
    .set({
      node_id: change.nodeId,
      variables: JSON.stringify(change.variables),
      status: change.status,
      ...(change.lastInboundMessageId ? { last_inbound_message_id: change.lastInboundMessageId } : {}),
      misses: change.misses ?? 0,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .execute();
}

/** The conversation is the bot's (handoff to a bot) or a human's again (a HANDOFF node). */
export async function setConversationHandler(db: TenantDb, orgId: string, conversationId: string, botId: string | null): Promise<void> {
  await tenant(db.updateTable('conversations'), orgId)
    .set({ handled_by: botId ? 'bot' : 'human', bot_id: botId })
    .where('id', '=', conversationId)
    .execute();
}

/** A bot's HANDOFF: a human holds the conversation, `bot_id` kept as the last bot (Conversation.botId). */
export async function handToHuman(db: TenantDb, orgId: string, conversationId: string, botId: string): Promise<void> {
  await tenant(db.updateTable('conversations'), orgId)
    .set({ handled_by: 'human', bot_id: botId })
    .where('id', '=', conversationId)
    .execute();
}

export function contactAttributes(db: TenantDb, orgId: string, contactId: string) {
  return tenant(db.selectFrom('contacts'), orgId)
    .select(['id', 'name', 'phone', 'attributes'])
    .where('id', '=', contactId)
    .executeTakeFirst();
}

/** The organization's variable definitions a capture checks its answer against (type, list items). */
export async function variableTypes(db: TenantDb, orgId: string): Promise<Map<string, { type: string; items: string[] | null }>> {
  const rows = await tenant(db.selectFrom('variable_definitions'), orgId).select(['name', 'type', 'items']).execute();
  return new Map(rows.map((r) => [r.name, { type: r.type, items: r.items }]));
}

export async function intentsByText(db: TenantDb, orgId: string): Promise<Array<{ value: string; label: string }>> {
  return tenant(db.selectFrom('intents'), orgId).select(['value', 'label']).where('active', '=', true).execute();
}

export async function lastFire(
  db: TenantDb,
  orgId: string,
  botId: string,
  triggerId: string,
  contactId: string,
): Promise<Date | undefined> {
  const r = await tenant(db.selectFrom('bot_trigger_fires'), orgId)
    .select('fired_at')
    .where('bot_id', '=', botId)
    .where('trigger_id', '=', triggerId)
    .where('contact_id', '=', contactId)
    .forUpdate()
    .executeTakeFirst();
  return r?.fired_at;
}

export async function recordFire(
  db: TenantDb,
  orgId: string,
  botId: string,
  triggerId: string,
  contactId: string,
  at: Date,
): Promise<void> {
  await db
    .insertInto('bot_trigger_fires')
    .values({ organization_id: orgId, bot_id: botId, trigger_id: triggerId, contact_id: contactId, fired_at: at })
    .onConflict((oc) => oc.columns(['organization_id', 'bot_id', 'trigger_id', 'contact_id']).doUpdateSet({ fired_at: at }))
    .execute();
}

/** Published bots of the organization that have at least one trigger. */
export function triggeredBots(db: TenantDb, orgId: string) {
  return tenant(db.selectFrom('bots'), orgId)
    .selectAll()
    .where('published_flow', 'is not', null)
    .where(sql<boolean>`jsonb_array_length(triggers) > 0`)
    .orderBy('created_at')
    .execute();
}

/** Conversations the bot was handling go back to a human (the bot is being deleted; its sessions go with it). */
export async function releaseConversations(db: TenantDb, orgId: string, botId: string): Promise<void> {
  await tenant(db.updateTable('conversations'), orgId)
    .set({ handled_by: 'human', bot_id: null })
    .where('bot_id', '=', botId)
    .where('handled_by', '=', 'bot')
    .execute();
}

/**
 * Published bots that may answer an inbound message to `senderId`: those with inbound triggers on that sender (or on
 * no sender), and the sender's default bot; oldest first (the first created wins a tie).
 */
export function inboundBots(db: TenantDb, orgId: string, senderId: string) {
  return tenant(db.selectFrom('bots'), orgId)
    .selectAll()
    .where('published_flow', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('default_for_sender', '=', true), eb('sender_id', '=', senderId)]),
        eb.and([
          sql<boolean>`jsonb_array_length(inbound_triggers) > 0`,
          eb.or([eb('sender_id', '=', senderId), eb('sender_id', 'is', null)]),
        ]),
      ]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
