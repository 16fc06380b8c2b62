// What a bot blast sends (issue 33 item 2): the opening of the bot's published flow, one message for every
// recipient. A blast batch is one set statement with one content per key (messaging/send.ts BatchOrder), so the
// opening must be the same message for everyone and exactly one message:
// - START's default edge leads to the first node, which must send something: a QUESTION (the session waits there
//   for the reply), a MESSAGE whose edges all wait for a reply (intent or condition edges), or an END (a one-off
//   message; the session ends at once).
// - Refused with 422 BOT_NOT_BLASTABLE, saying which node and why: a first node with nothing to send (a QUESTION
//   without content waits for a reply nobody was asked for), a CONDITION (it depends on the recipient), a HANDOFF
//   (a blast that hands every recipient to a human is a plain blast), a MESSAGE with a default edge (a second message
//   would follow without waiting), and `{{…}}` placeholders (a blast sends one text to everyone; the flow
//   personalizes after the first reply, when each session has its variables).
// - A bot never published (or deleted) is 422 BOT_NOT_PUBLISHED.
// The flow is read when each batch sends: a republish between batches is sent from then on, and each session keeps
// the flow it started with, as every session does.
import type { BotRow } from '../../db/queries/bots/bots.ts';
import { ApiError } from '../errors.ts';
import type { SendContent } from '../messaging/render.ts';
import type { BotFlow, BotNode } from './flow.ts';
import { nodeContent } from './runtime.ts';

export type BlastOpening = {
  botId: string;
  botVersion: number | null;
  flow: BotFlow;
  startNodeId: string;
  node: BotNode;
  content: SendContent;
  /** ACTIVE: the session waits at `node` for the reply; ENDED: the opening was the whole flow. */
  status: 'ACTIVE' | 'ENDED';
};

const PLACEHOLDER = /\{\{\s*[A-Za-z0-9_.-]+\s*\}\}/;

const notBlastable = (message: string) => new ApiError(422, 'BOT_NOT_BLASTABLE', `The bot cannot open a blast: ${message}`);

/** The opening a blast sends for `bot`, or the 422 that says why it cannot send one. */
export function blastOpening(bot: BotRow | undefined): BlastOpening {
  if (!bot || bot.published_flow === null)
    throw new ApiError(422, 'BOT_NOT_PUBLISHED', 'The blast sends a bot that has no published flow; publish the bot first.');
  const flow = bot.published_flow as BotFlow;
  const start = flow.nodes.find((n) => n.type === 'START');
  const isDefault = (e: BotFlow['edges'][number]) => !e.intent && !e.condition;
  const first = start && flow.edges.find((e) => e.source === start.id && isDefault(e));
  const node = first && flow.nodes.find((n) => n.id === first.target);
  if (!start || !node) throw notBlastable('its START node leads to no node.');
  const edges = flow.edges.filter((e) => e.source === node.id);
  if (node.type === 'CONDITION' || node.type === 'HANDOFF' || node.type === 'START')
    throw notBlastable(`its first node "${node.id}" is a ${node.type}; a blast opens with a QUESTION, a MESSAGE or an END.`);
  if (node.type === 'MESSAGE' && edges.some(isDefault))
    throw notBlastable(
      `its first node "${node.id}" is followed by another message without waiting for a reply; a blast sends one message.`,
    );
  const content = nodeContent(node, {});
  if (!content)
    throw notBlastable(`its first node "${node.id}" has nothing to send; give it a message that asks for the reply it waits for.`);
  if (PLACEHOLDER.test(JSON.stringify(node.content)))
    throw notBlastable(`its first node "${node.id}" has {{…}} placeholders, and a blast sends one message to every recipient.`);
  const waits = node.type === 'QUESTION' || (node.type === 'MESSAGE' && edges.length > 0);
  return {
    botId: bot.id,
    botVersion: bot.published_version,
    flow,
    startNodeId: start.id,
    node,
    content,
    status: waits ? 'ACTIVE' : 'ENDED',
  };
}
