// A blast's content (BlastMessageContent) as the one send path's content (SendMessageContent), and the variant
// each recipient gets. RCS `dial` actions have no SendMessageContent form and are dropped.
import type { components } from '../../../generated/api.d.ts';
import { assetRefsOf, checkMediaAssets } from '../assets/media.ts';
import type { SendContent } from '../messaging/render.ts';
import { badRequest, bodyField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

export type BlastMessageContent = components['schemas']['BlastMessageContent'];
export type BlastVariant = components['schemas']['BlastVariant'];
type BlastAction = components['schemas']['BlastAction'];
type BlastCard = { title?: string; description?: string; mediaUrl?: string; assetId?: string; actions?: BlastAction[] };

const MAX_SEND_TEXT = 1600;
const MAX_CARD_BUTTONS = 4;
const MAX_ACTIONS = 4;
const MAX_REPLIES = 11;

const clip = (s: string, n = MAX_SEND_TEXT) => (s.length > n ? s.slice(0, n) : s);
const urlActions = (a: BlastAction[] | undefined) =>
  (a ?? []).filter((x) => x.type === 'openUrl' && x.url).map((x) => ({ text: x.text, url: x.url! }));
const replyActions = (a: BlastAction[] | undefined) =>
  (a ?? []).filter((x) => x.type === 'reply' && x.postback).map((x) => ({ text: x.text, postback: x.postback! }));

function card(c: BlastCard) {
  const actions = urlActions(c.actions).slice(0, MAX_CARD_BUTTONS);
  const replies = replyActions(c.actions).slice(0, MAX_CARD_BUTTONS - actions.length);
  return {
    title: c.title ?? 'Image',
    ...(c.description ? { text: clip(c.description) } : {}),
    ...(c.mediaUrl ? { mediaUrl: c.mediaUrl } : {}),
    ...(c.assetId ? { assetId: c.assetId } : {}),
    ...(actions.length ? { actions } : {}),
    ...(replies.length ? { replies } : {}),
  };
}

export function toSendContent(content: BlastMessageContent): SendContent {
  const actions = urlActions(content.actions).slice(0, MAX_ACTIONS);
  const replies = replyActions(content.actions).slice(0, MAX_REPLIES);
  const chips = { ...(actions.length ? { actions } : {}), ...(replies.length ? { replies } : {}) };
  switch (content.type) {
    case 'text':
      return { type: 'text', text: clip(content.text ?? ''), ...chips };
    case 'media':
      return {
        type: 'media',
        ...(content.assetId ? { assetId: content.assetId } : { mediaUrl: content.mediaUrl! }),
        ...(content.text ? { text: clip(content.text) } : {}),
        ...chips,
      };
    case 'card':
      return { type: 'card', ...card(content.card as BlastCard) } as SendContent;
    case 'carousel':
      return { type: 'carousel', cards: (content.cards as BlastCard[]).map(card) } as SendContent;
  }
}

/**
 * The assets a content names (`assetId`), checked when it is saved: 404 naming each one that is not the
 * organization's, 400 for a type that cannot be sent (media.ts). Readiness is checked when the blast sends.
 */
export async function checkContentAssets(
  tenant: Tenant,
  body: { contentJson?: BlastMessageContent; variants?: BlastVariant[] },
): Promise<void> {
  const refs = [
    ...(body.contentJson ? assetRefsOf(body.contentJson, bodyField('contentJson')) : []),
    ...(body.variants ?? []).flatMap((v, i) => assetRefsOf(v.content, bodyField('variants', i, 'content'))),
  ];
  await checkMediaAssets(tenant, refs);
}

/** 400 on variants whose keys repeat or whose weights do not add up to 100. */
export function assertVariants(variants: BlastVariant[] | undefined): void {
  if (!variants) return;
  const keys = new Set(variants.map((v) => v.key));
  if (keys.size !== variants.length)
    throw badRequest('Variant keys must be unique.', [{ field: bodyField('variants'), message: 'variant keys repeat' }]);
  const total = variants.reduce((s, v) => s + v.weight, 0);
  if (total !== 100)
    throw badRequest(`Variant weights must add up to 100 (they add up to ${total}).`, [
      { field: bodyField('variants'), message: 'weights must add up to 100' },
    ]);
}

/** Variants as cumulative buckets of 0–99: the same assignment in SQL (each slice of the audience) and in the estimate. */
export function variantBuckets(variants: BlastVariant[] | null): Array<{ key: string; upTo: number }> | null {
  if (!variants?.length) return null;
  let upTo = 0;
  return [...variants].sort((a, b) => (a.key < b.key ? -1 : 1)).map((v) => ({ key: v.key, upTo: (upTo += v.weight) }));
}
