// A blast's content (BlastMessageContent) as the one send path's content (SendMessageContent), and the variant
// each recipient gets. RCS `dial` actions have no SendMessageContent form and are dropped.
import type { components } from '../../../generated/api.d.ts';
import { assetRefsOf, checkMediaAssets } from '../assets/media.ts';
import type { SendContent } from '../messaging/render.ts';
import { assertTemplateSender, resolveTemplateContent } from '../templates/content.ts';
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
    case 'template':
      // The send path fills it (templates/content.ts), for the whole batch: the same parameters for every recipient.
      return { type: 'template', templateId: content.templateId!, ...(content.parameters ? { parameters: content.parameters } : {}) };
  }
}

/**
 * A content's template as the send resolves it (templates/content.ts), for the blast's sender: the approved
 * template filled with its parameters, or the send's refusal — 404 naming `<field>.templateId`, 422
 * TEMPLATE_NOT_APPROVED (not APPROVED; approved for another sender: naming `senderField`), 422
 * TEMPLATE_PARAMETERS_INVALID naming `<field>.parameters`. Other contents come back as they are.
 */
export async function resolveBlastTemplate(
  tenant: Tenant,
  content: SendContent,
  senderId: string,
  field: string,
  senderField = `${field}.templateId`,
): Promise<SendContent> {
  if (content.type !== 'template') return content;
  const resolved = await resolveTemplateContent(tenant, content, field);
  assertTemplateSender(resolved.templateSenderId, senderId, senderField);
  return resolved.content;
}

/**
 * The templates a content names, checked when it is saved (create, PUT …/content) or its sender changes (PUT the
 * blast: `senderField` names `body.senderId` then), as a send of them would be (resolveBlastTemplate).
 */
export async function checkContentTemplates(
  tenant: Tenant,
  body: { contentJson?: BlastMessageContent | null; variants?: BlastVariant[] | null },
  senderId: string,
  senderField?: string,
): Promise<void> {
  const contents: Array<[BlastMessageContent, string]> = [
    ...(body.contentJson ? [[body.contentJson, bodyField('contentJson')] as [BlastMessageContent, string]] : []),
    ...(body.variants ?? []).map((v, i): [BlastMessageContent, string] => [v.content, bodyField('variants', i, 'content')]),
  ];
  for (const [content, field] of contents)
    if (content.type === 'template') await resolveBlastTemplate(tenant, toSendContent(content), senderId, field, senderField);
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
