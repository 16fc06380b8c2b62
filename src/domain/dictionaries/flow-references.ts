// Where dictionary tokens are referenced: the bot flows (draft and published) of the organization's bots. The
// usage and rewrite operations ask every registered source (registerFlowReferenceSource) inside the caller's
// transaction, so a rename and all its rewrites commit together or not at all.
//
// The Bots section is the one source (src/domain/bots/references.ts): it counts and rewrites the nodes of its
// stored flows — intents as button/edge `intent` values and `capture.from: intent` branches, variables as
// `capture.variable`, condition `variable` and `{{name}}` placeholders — each rewritten flow as a new bot version
// with its revision. Nothing else references tokens: analytics keep counting taps under the value as it was, and
// content outside bot flows (templates, messages) is never rewritten, as the document says.
import type { Db } from '../../db/database.ts';

export type DictionaryKind = 'intent' | 'variable';

/** One bot whose flows reference a token. */
export type BotUsage = { botId: string; name: string; draftNodeCount: number; publishedNodeCount: number };

export type FlowRewriteCount = { botsUpdated: number; referencesRewritten: number };

export interface FlowReferenceSource {
  /** The organization's bots whose draft or published flow references `token` (node counts per flow). */
  usage(tx: Db, organizationId: string, kind: DictionaryKind, token: string): Promise<BotUsage[]>;
  /** Replaces every reference to `from` by `to` in draft and published flows alike, in `tx`. */
  rewrite(tx: Db, organizationId: string, kind: DictionaryKind, from: string, to: string): Promise<FlowRewriteCount>;
}

const sources: FlowReferenceSource[] = [];

/** Adds a place where flows reference tokens; answers the function that removes it again (tests). */
export function registerFlowReferenceSource(source: FlowReferenceSource): () => void {
  sources.push(source);
  return () => {
    const i = sources.indexOf(source);
    if (i >= 0) sources.splice(i, 1);
  };
}

export type Usage = { botCount: number; draftNodeCount: number; publishedNodeCount: number; bots: BotUsage[] };

export async function usageOf(tx: Db, organizationId: string, kind: DictionaryKind, token: string): Promise<Usage> {
  const byBot = new Map<string, BotUsage>();
  for (const source of sources) {
    for (const b of await source.usage(tx, organizationId, kind, token)) {
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
  tx: Db,
  organizationId: string,
  kind: DictionaryKind,
  from: string,
  to: string,
): Promise<FlowRewriteCount> {
  const total: FlowRewriteCount = { botsUpdated: 0, referencesRewritten: 0 };
  for (const source of sources) {
    const n = await source.rewrite(tx, organizationId, kind, from, to);
    total.botsUpdated += n.botsUpdated;
    total.referencesRewritten += n.referencesRewritten;
  }
  return total;
}

/** The answer of a rewrite (DictionaryRewriteResult). */
export type RewriteResult = FlowRewriteCount & { id: string; kind: DictionaryKind; old: string; new: string; rewrittenAt: Date };
