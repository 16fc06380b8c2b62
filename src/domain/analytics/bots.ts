// A bot's lifetime summary (GET /v1/analytics/bots/{id}): sessions, contacts, messages, completions (sessions that
// ended on an End node), handoffs to a human, average session duration and the most tapped intent values. And its
// funnel (GET /v1/analytics/bots/{id}/funnel) from the node visits the runtime records (src/domain/bots/runtime.ts):
// the same completions and handoffs, per node and over a range.
import { botLifetime, botMessages, botOf, botTopIntents } from '../../db/queries/analytics/bots.ts';
import { funnelBot, funnelFigures, type FunnelNodeRow, type FunnelTotals } from '../../db/queries/analytics/bot-funnel.ts';
import { flowOrder, type BotFlow, type BotNode } from '../bots/flow.ts';
import { found } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { periodOf, type Period, type RangeQuery } from './figures.ts';

/** How many intent values the summary lists. */
const BOT_TOP_INTENTS = 5;

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

type FunnelStep = {
  node: BotNode;
  position: number;
  figures: Omit<FunnelNodeRow, 'nodeId'>;
  advancedTo: Array<{ nodeId: string; sessions: number }>;
};
export type BotFunnel = { botId: string; version: number | null; period: Period; totals: FunnelTotals; steps: FunnelStep[] };

const NO_VISITS: Omit<FunnelNodeRow, 'nodeId'> = {
  entries: 0,
  contacts: 0,
  stoppedContacts: 0,
  advanced: 0,
  completed: 0,
  handedOff: 0,
  errored: 0,
  abandoned: 0,
  waiting: 0,
};
const NO_TOTALS: FunnelTotals = { sessions: 0, contacts: 0, completions: 0, completedContacts: 0, handoffs: 0 };

/**
 * The funnel of the bot's current published flow over the sessions that started in the range (every published
 * version, matched by node id); a bot never published answers no steps.
 */
export async function getBotFunnel(tenant: Tenant, botId: string, query: RangeQuery): Promise<BotFunnel> {
  const { db, organizationId: orgId } = tenant;
  const bot = found(await funnelBot(db, orgId, botId), 'Bot');
  const period = periodOf(query);
  if (bot.published_flow === null) return { botId: bot.id, version: null, period, totals: NO_TOTALS, steps: [] };
  const { nodes, next, totals } = await funnelFigures(db, orgId, bot.id, period.from, period.to);
  const byNode = new Map(nodes.map(({ nodeId, ...figures }) => [nodeId, figures]));
  const steps = flowOrder(bot.published_flow as BotFlow).map((node, position) => ({
    node,
    position,
    figures: byNode.get(node.id) ?? NO_VISITS,
    advancedTo: next
      .filter((n) => n.nodeId === node.id)
      .sort((a, b) => b.sessions - a.sessions || (a.nextNodeId < b.nextNodeId ? -1 : 1))
      .map((n) => ({ nodeId: n.nextNodeId, sessions: n.sessions })),
  }));
  return { botId: bot.id, version: bot.published_version, period, totals, steps };
}
