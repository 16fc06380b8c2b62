// Where dictionary tokens are referenced: the bot flows (draft and published) of the organization's bots, the one
// place that holds them (src/domain/bots/references.ts, called directly inside the caller's transaction, so a rename
// and all its rewrites commit together or not at all). It counts and rewrites the nodes of the stored flows —
// intents as button/edge `intent` values and `capture.from: intent` branches, variables as `capture.variable`,
// condition `variable` and `{{name}}` placeholders — each rewritten flow as a new bot version with its revision.
// Nothing else references tokens: analytics keep counting taps under the value as it was, and content outside bot
// flows (templates, messages) is never rewritten, as the document says.
import { botReferenceSource, type BotUsage, type DictionaryKind, type FlowRewriteCount } from '../bots/references.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type { DictionaryKind, FlowRewriteCount } from '../bots/references.ts';

export type Usage = { botCount: number; draftNodeCount: number; publishedNodeCount: number; bots: BotUsage[] };

export async function usageOf(tx: TenantDb, organizationId: string, kind: DictionaryKind, token: string): Promise<Usage> {
  const byBot = new Map<string, BotUsage>();
  {
    for (const b of await botReferenceSource.usage(tx, organizationId, kind, token)) {
      const seen = byBot.get(b.botId);
      byBot.set(
        b.botId,
        seen
          ? {
              ...seen,
              draftNodeCount: seen.draftNodeCount + b.draftNodeCount,
              publishedNodeCount: seen.publishedNodeCount + b.publishedNodeCount,
            }
          : b,
      );
    }
  }
  const bots = [...byBot.values()]
    .filter((b) => b.draftNodeCount + b.publishedNodeCount > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    botCount: bots.length,
    draftNodeCount: bots.reduce((n, b) => n + b.draftNodeCount, 0),
    publishedNodeCount: bots.reduce((n, b) => n + b.publishedNodeCount, 0),
    bots,
  };
}

export async function rewriteReferences(
  tx: TenantDb,
  organizationId: string,
  kind: DictionaryKind,
  from: string,
  to: string,
): Promise<FlowRewriteCount> {
  return botReferenceSource.rewrite(tx, organizationId, kind, from, to);
}

/** The answer of a rewrite (DictionaryRewriteResult). */
export type RewriteResult = FlowRewriteCount & { id: string; kind: DictionaryKind; old: string; new: string; rewrittenAt: Date };
