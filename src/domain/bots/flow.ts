// Flow types (the document's BotFlow) and the publish validation (BotValidationResult's codes).
import type { components } from '../../../generated/api.d.ts';

export type BotFlow = components['schemas']['BotFlow'];
export type BotNode = components['schemas']['BotNode'];
export type BotEdge = components['schemas']['BotEdge'];
/** A rich card (BotCard). */
export type BotCard = {
  title?: string;
  description?: string;
  mediaUrl?: string;
  assetId?: string;
  buttons?: Array<{ type: string; text: string; intent?: string; url?: string }>;
};
export type BotValidationError = { code: string; message: string; nodeId: string | null };

export const EMPTY_FLOW: BotFlow = { nodes: [{ id: 'start', type: 'START' }], edges: [] };

/** The cards of a content (card or carousel). */
export function cardsOf(c: { card?: unknown; cards?: unknown[] }): BotCard[] {
  return [...(c.card ? [c.card as BotCard] : []), ...((c.cards ?? []) as BotCard[])];
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
/** Placeholders every flow may use without a definition: the contact's own fields (runtime.ts startVariables fills them). */
export const CONTACT_FIELDS: ReadonlySet<string> = new Set(['name', 'first_name', 'phone']);

/** `{{name}}` placeholders of a text. */
function placeholders(text: string | undefined): string[] {
  return text ? [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!.toLowerCase()) : [];
}

/** Every text of a node's content (text, card titles/descriptions). */
function nodeTexts(node: BotNode): string[] {
  const c = node.content;
  if (!c) return [];
  const cards = cardsOf(c);
  return [c.text, ...cards.flatMap((k) => [k.title, k.description])].filter((t): t is string => typeof t === 'string');
}

/** The assets a node's content names (`assetId` of a media content or of its cards). */
export function nodeAssetIds(node: BotNode): string[] {
  const c = node.content;
  if (!c) return [];
  return [c.assetId, ...cardsOf(c).map((k) => k.assetId)].filter((id): id is string => typeof id === 'string');
}

function nodeButtons(node: BotNode) {
  const c = node.content;
  const cards = c ? cardsOf(c) : [];
  return [...(node.buttons ?? []), ...cards.flatMap((k) => k.buttons ?? [])];
}

const CHANNEL_CONTENT: Record<string, ReadonlySet<string>> = {
  RCS: new Set(['text', 'media', 'card', 'carousel']),
  CHATAPP: new Set(['text', 'media', 'card', 'carousel']),
  MMS: new Set(['text', 'media']),
  SMS: new Set(['text']),
};

/** Every publish problem of `flow` for a bot on `channel`, given the organization's active intents and variables. */
export function validateFlow(
  flow: BotFlow,
  channel: string,
  intents: ReadonlySet<string>,
  variables: ReadonlySet<string>,
  blockedBy: (text: string) => string[] = () => [],
  /** Why an asset named by `assetId` cannot be sent (UNKNOWN_ASSET, ASSET_NOT_SENDABLE); null when it can. */
  assetProblem: (assetId: string) => { code: string; message: string } | null = () => null,
): BotValidationError[] {
  const errors: BotValidationError[] = [];
  const err = (code: string, message: string, nodeId: string | null = null) => errors.push({ code, message, nodeId });
  if (flow.nodes.length === 0) {
    err('EMPTY_FLOW', 'The flow has no nodes.');
    return errors;
  }
  const starts = flow.nodes.filter((n) => n.type === 'START');
  if (starts.length === 0) err('MISSING_START_NODE', 'The flow must contain a Start node.');
  if (starts.length > 1)
    for (const s of starts.slice(1)) err('MULTIPLE_START_NODES', 'The flow must contain exactly one Start node.', s.id);

  const nodes = new Map<string, BotNode>();
  for (const n of flow.nodes) {
    if (nodes.has(n.id)) err('DUPLICATE_ID', `Node id "${n.id}" is used more than once.`, n.id);
    else nodes.set(n.id, n);
  }
  const edgeIds = new Set<string>();
  const outgoing = new Map<string, BotEdge[]>();
  for (const e of flow.edges) {
    if (edgeIds.has(e.id)) err('DUPLICATE_ID', `Edge id "${e.id}" is used more than once.`, e.source);
    edgeIds.add(e.id);
    const src = nodes.get(e.source);
    if (!src) err('UNKNOWN_NODE', `Edge "${e.id}" starts at unknown node "${e.source}".`, null);
    if (!nodes.has(e.target)) err('UNKNOWN_NODE', `Edge "${e.id}" ends at unknown node "${e.target}".`, e.source);
    if (!src) continue;
    if (src.type === 'HANDOFF' || src.type === 'END') err('INVALID_EDGE', `Edge "${e.id}" leaves a ${src.type} node.`, e.source);
    if (e.condition && src.type !== 'CONDITION') err('INVALID_EDGE', `Edge "${e.id}" has a condition outside a CONDITION node.`, e.source);
    const list = outgoing.get(e.source) ?? [];
    const intent = e.intent ? e.intent.trim().toLowerCase() : null;
    if (!e.intent && !e.condition && list.some((o) => !o.intent && !o.condition))
      err('INVALID_EDGE', `Node "${e.source}" has two default edges.`, e.source);
    if (intent && list.some((o) => o.intent && o.intent.trim().toLowerCase() === intent))
      err('INVALID_EDGE', `Node "${e.source}" has two edges for intent "${intent}".`, e.source);
    if (intent && !intents.has(intent)) err('UNKNOWN_INTENT', `Intent "${intent}" does not exist or is inactive.`, e.source);
    if (e.condition && !variables.has(e.condition.variable.toLowerCase()))
      err('UNKNOWN_VARIABLE', `Variable "${e.condition.variable}" is not defined.`, e.source);
    list.push(e);
    outgoing.set(e.source, list);
  }

  const allowed = CHANNEL_CONTENT[channel] ?? CHANNEL_CONTENT.SMS!;
  for (const n of nodes.values()) {
    const out = outgoing.get(n.id) ?? [];
    if ((n.type === 'MESSAGE' || n.type === 'QUESTION') && !n.content) err('MISSING_CONTENT', `A ${n.type} node needs content.`, n.id);
    if (n.type === 'QUESTION' && !n.capture) err('MISSING_CAPTURE', 'A QUESTION node needs a capture.', n.id);
    if (n.capture && !variables.has(n.capture.variable.toLowerCase()))
      err('UNKNOWN_VARIABLE', `Variable "${n.capture.variable}" is not defined.`, n.id);
    if (n.content && !allowed.has(n.content.type))
      err('CHANNEL_UNSUPPORTED', `A ${channel} bot cannot send ${n.content.type} content.`, n.id);
    for (const assetId of new Set(nodeAssetIds(n))) {
      const problem = assetProblem(assetId);
      if (problem) err(problem.code, problem.message, n.id);
    }
    for (const rule of new Set(nodeTexts(n).flatMap(blockedBy)))
      err('CONTENT_BLOCKED', `The text matches the blocking content rule "${rule}".`, n.id);
    for (const name of new Set(nodeTexts(n).flatMap(placeholders))) {
      if (!name.startsWith('event.') && !CONTACT_FIELDS.has(name) && !variables.has(name))
        err('UNKNOWN_VARIABLE', `Variable "${name}" is not defined.`, n.id);
    }
    for (const b of nodeButtons(n)) {
      if (b.type !== 'reply' || !b.intent) continue;
      const intent = b.intent.trim().toLowerCase();
      if (!intents.has(intent)) err('UNKNOWN_INTENT', `Intent "${intent}" does not exist or is inactive.`, n.id);
      if (!out.some((e) => e.intent && e.intent.trim().toLowerCase() === intent))
        err('MISSING_TRANSITION', `No edge for the reply button's intent "${intent}".`, n.id);
    }
    if (n.type !== 'HANDOFF' && n.type !== 'END' && out.length === 0)
      err('MISSING_TRANSITION', `Node "${n.id}" has no outgoing edge.`, n.id);
  }

  for (const cycle of cyclesWithoutWait(flow, nodes))
    err(
      'LOOP_WITHOUT_WAIT',
      `Nodes ${cycle.map((id) => `"${id}"`).join(' → ')} form a cycle that never waits for the contact: one message would send the next forever.`,
      cycle[0]!,
    );

  if (starts.length > 0) {
    const seen = new Set<string>([starts[0]!.id]);
    const queue = [starts[0]!.id];
    while (queue.length > 0) {
      for (const e of outgoing.get(queue.shift()!) ?? []) {
        if (nodes.has(e.target) && !seen.has(e.target)) {
          seen.add(e.target);
          queue.push(e.target);
        }
      }
    }
    for (const n of nodes.values())
      if (!seen.has(n.id)) err('UNREACHABLE_NODE', `Node "${n.id}" cannot be reached from the Start node.`, n.id);
  }
  return errors;
}

/**
 * The edges a turn follows without waiting for the contact: a START's and a MESSAGE's default edge (a MESSAGE with
 * one moves on at once), every edge of a CONDITION. A QUESTION waits, and so does a MESSAGE without a default edge
 * (for a tap). A cycle of such edges sends messages without end, billed: START→m1→m2→m1 sent 50 messages per event.
 */
function cyclesWithoutWait(flow: BotFlow, nodes: Map<string, BotNode>): string[][] {
  const next = new Map<string, string[]>();
  for (const e of flow.edges) {
    const src = nodes.get(e.source);
    if (!src || !nodes.has(e.target)) continue;
    const isDefault = !e.intent && !e.condition;
    const passes = src.type === 'CONDITION' || ((src.type === 'START' || src.type === 'MESSAGE') && isDefault);
    if (passes) next.set(src.id, [...(next.get(src.id) ?? []), e.target]);
  }
  // Depth-first search with colours; each back edge closes one cycle (reported once, from where it closes).
  const colour = new Map<string, 'grey' | 'black'>();
  const cycles: string[][] = [];
  const path: string[] = [];
  const visit = (id: string): void => {
    colour.set(id, 'grey');
    path.push(id);
    for (const t of next.get(id) ?? []) {
      if (colour.get(t) === 'grey') cycles.push(path.slice(path.indexOf(t)));
      else if (!colour.has(t)) visit(t);
    }
    path.pop();
    colour.set(id, 'black');
  };
  for (const id of nodes.keys()) if (!colour.has(id)) visit(id);
  return cycles;
}

/**
 * Findings that do not block publishing (BotValidationResult.warnings): `NO_WAY_OUT`, a node waiting for a reply
 * (a QUESTION, a MESSAGE with buttons and no default edge) with no default edge while the flow has no `fallback`
 * text: a reply matching none of its edges is re-prompted, then handed to a human without a word.
 */
export function flowWarnings(flow: BotFlow): BotValidationError[] {
  if (flow.fallback?.text) return [];
  return flow.nodes
    .filter((n) => n.type === 'QUESTION' || n.type === 'MESSAGE')
    .filter((n) => {
      const out = flow.edges.filter((e) => e.source === n.id);
      return out.length > 0 && !out.some((e) => !e.intent && !e.condition) && (n.type === 'QUESTION' || out.some((e) => e.intent));
    })
    .map((n) => ({
      code: 'NO_WAY_OUT',
      message: `A reply to "${n.id}" that matches none of its edges is re-prompted, then handed to a human without a word: add a default edge or a flow fallback text.`,
      nodeId: n.id,
    }));
}

/** Rewrites a token in a flow; answers the new flow and how many references changed. */
export function rewriteFlow(
  flow: BotFlow,
  kind: 'intent' | 'variable',
  from: string,
  to: string,
): { flow: BotFlow; count: number; nodes: Set<string> } {
  let count = 0;
  const nodesTouched = new Set<string>();
  const norm = (s: string) => s.trim().toLowerCase();
  const copy = JSON.parse(JSON.stringify(flow)) as BotFlow;
  const fixButtons = (nodeId: string, buttons: Array<{ intent?: string }> | undefined) => {
    for (const b of buttons ?? [])
      if (b.intent && norm(b.intent) === from) {
        b.intent = to;
        count++;
        nodesTouched.add(nodeId);
      }
  };
  for (const n of copy.nodes) {
    if (kind === 'intent') {
      fixButtons(n.id, n.buttons);
      const c = n.content;
      if (c) for (const k of cardsOf(c)) fixButtons(n.id, k.buttons);
    } else {
      if (n.capture && norm(n.capture.variable) === from) {
        n.capture.variable = to;
        count++;
        nodesTouched.add(n.id);
      }
      const c = n.content;
      const re = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
      const sub = (t: string | undefined) =>
        t?.replace(re, (m, name: string) => {
          if (name.toLowerCase() !== from) return m;
          count++;
          nodesTouched.add(n.id);
          return `{{${to}}}`;
        });
      if (c) {
        if (c.text !== undefined) c.text = sub(c.text)!;
        for (const k of cardsOf(c)) {
          if (k.title !== undefined) k.title = sub(k.title)!;
          if (k.description !== undefined) k.description = sub(k.description)!;
        }
      }
    }
  }
  for (const e of copy.edges) {
    if (kind === 'intent' && e.intent && norm(e.intent) === from) {
      e.intent = to;
      count++;
      nodesTouched.add(e.source);
    }
    if (kind === 'variable' && e.condition && norm(e.condition.variable) === from) {
      e.condition.variable = to;
      count++;
      nodesTouched.add(e.source);
    }
  }
  return { flow: copy, count, nodes: nodesTouched };
}

/**
 * The nodes in flow order: breadth-first from the Start node, edges in their listed order; nodes the walk does not
 * reach (a published flow has none) follow in their listed order.
 */
export function flowOrder(flow: BotFlow): BotNode[] {
  const byId = new Map(flow.nodes.map((n) => [n.id, n]));
  const start = flow.nodes.find((n) => n.type === 'START');
  const seen = new Set<string>();
  const order: BotNode[] = [];
  const queue = start ? [start] : [];
  if (start) seen.add(start.id);
  while (queue.length > 0) {
    const node = queue.shift()!;
    order.push(node);
    for (const e of flow.edges) {
      const target = e.source === node.id ? byId.get(e.target) : undefined;
      if (target && !seen.has(target.id)) {
        seen.add(target.id);
        queue.push(target);
      }
    }
  }
  return [...order, ...flow.nodes.filter((n) => !seen.has(n.id) && byId.get(n.id) === n)];
}
