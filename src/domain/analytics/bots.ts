// A bot's lifetime summary (GET /v1/analytics/bots/{id}): sessions, contacts, messages, completions (sessions that
// ended on an End node), handoffs to a human, average session duration and the most tapped intent values.
import { botLifetime, botMessages, botOf, botTopIntents } from '../../db/queries/analytics/bots.ts';
import { found } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

/** How many intent values the summary lists. */
export const BOT_TOP_INTENTS = 5;

export async function getBotSummary(tenant: Tenant, botId: string) {
  const bot = found(await botOf(tenant.db, tenant.organizationId, botId), 'Bot');
  const [life, messages, topIntents] = await Promise.all([
    botLifetime(tenant.db, tenant.organizationId, bot.id),
    botMessages(tenant.db, tenant.organizationId, bot.id),
    botTopIntents(tenant.db, tenant.organizationId, bot.id, BOT_TOP_INTENTS),
  ]);
  return { bot, life, messages, topIntents };
}

export type BotSummary = Awaited<ReturnType<typeof getBotSummary>>;
