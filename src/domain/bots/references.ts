// Where dictionary tokens are referenced: usage counts and rewrites of intent values and variable names in every
// bot's draft and published flow, inside the dictionaries' transaction (the bots are locked, so a concurrent bot
// edit waits for the rename and then sees the new token). The Dictionaries section calls it directly
// (dictionaries/flow-references.ts); the types live here so that the import runs one way.
import * as q from '../../db/queries/bots/bots.ts';
import { rewriteFlow, type BotFlow } from './flow.ts';

export type DictionaryKind = 'intent' | 'variable';

/** One bot whose flows reference a token. */
export type BotUsage = { botId: string; name: string; draftNodeCount: number; publishedNodeCount: number };

export type FlowRewriteCount = { botsUpdated: number; referencesRewritten: number };

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
  /**
   * Rewrites draft and published flows alike, each change as a new version with its revision (the Bot schema:
   * `version` is bumped each time the draft changes). A PUBLISHED bot (draft = published) gets one revision,
   * published. A MODIFIED bot whose published flow changed gets the rewritten published flow as a revision of its
   * own (published), then the draft as the next one, so the live flow is always a recorded revision. The bump is
   * what makes a concurrent edit holding the old version lose with 409 instead of writing the old token back.
   */
  async rewrite(
    tx: Parameters<typeof q.allBots>[0],
    organizationId: string,
    kind: DictionaryKind,
    from: string,
    to: string,
  ): Promise<FlowRewriteCount> {
    let botsUpdated = 0;
    let referencesRewritten = 0;
    const now = new Date();
    for (const b of await q.allBots(tx, organizationId, { forUpdate: true })) {
      const draft = rewriteFlow(b.draft_flow as BotFlow, kind, from, to);
      const published = b.published_flow ? rewriteFlow(b.published_flow as BotFlow, kind, from, to) : null;
      const n = draft.count + (published?.count ?? 0);
      if (n === 0) continue;
      const inStep = b.status === 'PUBLISHED' && b.published_version === b.version;
      let version = b.version;
      let publishedVersion = b.published_version;
      if (published && published.count > 0) {
        version += 1;
        await q.insertRevision(tx, organizationId, b.id, version, published.flow);
        await q.markRevisionPublished(tx, organizationId, b.id, version, now);
        publishedVersion = version;
      }
      if (!inStep && (draft.count > 0 || version !== b.version)) {
        version += 1;
        await q.insertRevision(tx, organizationId, b.id, version, draft.flow);
      }
      await q.updateBot(tx, organizationId, b.id, {
        draftFlow: draft.flow,
        version,
        ...(published ? { publishedFlow: published.flow, publishedVersion } : {}),
      });
      botsUpdated++;
      referencesRewritten += n;
    }
    return { botsUpdated, referencesRewritten };
  },
};
