// The bots as a source of dictionary references (flow-references.ts): usage counts and rewrites of intent values
// and variable names in every bot's draft and published flow, inside the dictionaries' transaction (the bots are
// locked, so a concurrent bot edit waits for the rename and then sees the new token).
import * as q from '../../db/queries/bots/bots.ts';
import { registerFlowReferenceSource, type BotUsage, type DictionaryKind, type FlowRewriteCount } from '../dictionaries/flow-references.ts';
import { rewriteFlow, type BotFlow } from './flow.ts';

function countIn(flow: BotFlow | null, kind: DictionaryKind, token: string): number {
  // A rewrite to itself touches exactly the referencing nodes.
  return flow ? rewriteFlow(flow, kind, token, token).nodes.size : 0;
}

export const botReferenceSource = {
  async usage(tx: Parameters<typeof q.allBots>[0], organizationId: string, kind: DictionaryKind, token: string): Promise<BotUsage[]> {
    const bots = await q.allBots(tx, organizationId);
    return bots.map((b) => ({
      botId: b.id,
      name: b.name,
      draftNodeCount: countIn(b.draft_flow as BotFlow, kind, token),
      publishedNodeCount: countIn(b.published_flow as BotFlow | null, kind, token),
    }));
  },
  async rewrite(tx: Parameters<typeof q.allBots>[0], organizationId: string, kind: DictionaryKind, from: string, to: string): Promise<FlowRewriteCount> {
    let botsUpdated = 0;
    let referencesRewritten = 0;
    for (const b of await q.allBots(tx, organizationId, { forUpdate: true })) {
      const draft = rewriteFlow(b.draft_flow as BotFlow, kind, from, to);
      const published = b.published_flow ? rewriteFlow(b.published_flow as BotFlow, kind, from, to) : null;
      const n = draft.count + (published?.count ?? 0);
      if (n === 0) continue;
      await q.setFlows(tx, organizationId, b.id, draft.flow, published ? published.flow : null);
      botsUpdated++;
      referencesRewritten += n;
    }
    return { botsUpdated, referencesRewritten };
  },
};

let registered = false;
export function registerBotReferences(): void {
  if (registered) return;
  registered = true;
  registerFlowReferenceSource(botReferenceSource);
}
registerBotReferences();
