// Assets as message media: content may name an asset (`assetId`) where it would give a `mediaUrl` — the `media`
// content type, a rich card, each carousel card (direct sends, blasts, bot nodes). Before a message is accepted,
// every `assetId` gets the signed link (links.ts, valid MESSAGE_LINK_TTL_MS) of the variant that every channel
// of the message can carry, because the channel is decided per recipient at delivery (RCS, or the MMS fallback
// after it): an image's `mms` variant (JPEG, at most 1280 px and 1 MB), a GIF as uploaded when it fits in 1 MB
// (still animated) and its `mms` variant otherwise, an MP4 video as uploaded.
import * as q from '../../db/queries/assets/assets.ts';
import { ApiError, unknownReference, type FieldError } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { MMS_MAX_BYTES } from './images.ts';
import { linkExpiry, MESSAGE_LINK_TTL_MS, variantLink } from './links.ts';
import type { TenantDb } from '../../db/tenant.ts';

type AssetRow = q.AssetRow;

/** Where an asset is named: `body.content.cards.1.assetId`. */
export type AssetRef = { field: string; assetId: string };

type MediaHolder = { assetId?: string; mediaUrl?: string };
/** The shapes of every content that carries media: a send's, a blast's and a bot node's. */
type ContentWithMedia = MediaHolder & { card?: unknown; cards?: unknown };

const holders = (of: object, field: string): Array<{ holder: MediaHolder; field: string }> => {
  const content = of as ContentWithMedia;
  return [
    { holder: content, field },
    ...(content.card && typeof content.card === 'object' ? [{ holder: content.card as MediaHolder, field: `${field}.card` }] : []),
    ...(Array.isArray(content.cards)
      ? (content.cards as MediaHolder[]).map((holder, i) => ({ holder, field: `${field}.cards.${i}` }))
      : []),
  ];
};

/** Every `assetId` of a content that has no `mediaUrl` yet, with its field path (`field` names the content). */
export function assetRefsOf(content: object, field: string): AssetRef[] {
  return holders(content, field).flatMap(({ holder, field: at }) =>
    typeof holder.assetId === 'string' && holder.mediaUrl === undefined ? [{ field: `${at}.assetId`, assetId: holder.assetId }] : [],
  );
}

/** The variant sent for an asset, or why the asset cannot be message media. */
function messageVariant(row: AssetRow): { variant: string } | { refusal: string } {
  const has = (name: string) => row.variants.some((v) => v.name === name);
  switch (row.type) {
    case 'image':
      return { variant: has('mms') ? 'mms' : 'original' };
    case 'gif':
      return { variant: row.size_bytes <= MMS_MAX_BYTES || !has('mms') ? 'original' : 'mms' };
    case 'video':
      if (row.mime_type === 'video/mp4') return { variant: 'original' };
      return { refusal: `the asset is a ${row.mime_type} video; only MP4 videos can be sent` };
    default:
      return { refusal: `the asset is ${row.type} (${row.mime_type}); only image, GIF and MP4 video assets can be sent as message media` };
  }
}

/**
 * The stored file an MMS carries for an image or GIF asset (its message variant), or null for any other asset:
 * what the `mms_carrier` variant transcodes and what dispatch weighs against MMS_CARRIER_MAX_BYTES.
 */
export function mmsSource(row: AssetRow): { key: string; etag: string; sizeBytes: number; mimeType: string } | null {
  if (row.type !== 'image' && row.type !== 'gif') return null;
  const choice = messageVariant(row);
  if (!('variant' in choice)) return null;
  if (choice.variant === 'original') return { key: row.storage_key, etag: row.etag, sizeBytes: row.size_bytes, mimeType: row.mime_type };
  const v = row.variants.find((x) => x.name === choice.variant)!;
  return { key: v.key, etag: v.etag, sizeBytes: v.sizeBytes, mimeType: v.mimeType };
}

/**
 * The assets named by `refs`, checked as message media: 404 NOT_FOUND naming every unknown field (another
 * organization's assets included), then 400 VALIDATION_ERROR naming every asset of a type that cannot be sent.
 * Readiness is not checked: a draft may name an asset still processing.
 */
export async function checkMediaAssets(tenant: Tenant, refs: readonly AssetRef[]): Promise<Map<string, AssetRow>> {
  if (refs.length === 0) return new Map();
  const rows = new Map(
    (await q.getAssetsByIds(tenant.db, tenant.organizationId, [...new Set(refs.map((r) => r.assetId))])).map((r) => [r.id, r]),
  );
  const unknown = refs.filter((r) => !rows.has(r.assetId)).map((r) => r.field);
  if (unknown.length) throw unknownReference(unknown, 'asset');
  const refused: FieldError[] = refs.flatMap((r) => {
    const choice = messageVariant(rows.get(r.assetId)!);
    return 'refusal' in choice ? [{ field: r.field, message: choice.refusal, code: 'media_type' }] : [];
  });
  if (refused.length)
    throw new ApiError(400, 'VALIDATION_ERROR', 'Only image, GIF and MP4 video assets can be sent as message media.', { details: refused });
  return rows;
}

/**
 * Why each of `ids` cannot be message media, for a check that reports instead of throwing (bot publish
 * validation): `UNKNOWN_ASSET` (not the organization's), `ASSET_NOT_SENDABLE` (its type). Absent ids can be sent.
 */
export async function mediaAssetProblems(
  db: TenantDb,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, { code: string; message: string }>> {
  const unique = [...new Set(ids)];
  const rows = new Map((await q.getAssetsByIds(db, organizationId, unique)).map((r) => [r.id, r]));
  const problems = new Map<string, { code: string; message: string }>();
  for (const id of unique) {
    const row = rows.get(id);
    const choice = row ? messageVariant(row) : null;
    if (!row) problems.set(id, { code: 'UNKNOWN_ASSET', message: `Asset ${id} does not exist in this organization.` });
    else if (choice && 'refusal' in choice)
      problems.set(id, { code: 'ASSET_NOT_SENDABLE', message: `Asset ${id} cannot be sent: ${choice.refusal}.` });
  }
  return problems;
}

/**
 * `content` with every `assetId` given the signed link of its message variant as `mediaUrl` (the `assetId` is
 * kept: the stored message says which asset it carried). Content without assets comes back as it is, without a
 * query, and an item that already has its `mediaUrl` is left alone, so calling this twice is harmless. Besides
 * checkMediaAssets' answers: 409 INVALID_STATE naming every asset still `processing` or in `error`.
 */
export async function resolveContentAssets<C extends object>(
  tenant: Tenant,
  services: Pick<Services, 'config'>,
  content: C,
  field = 'body.content',
  now = new Date(),
): Promise<C> {
  const refs = assetRefsOf(content, field);
  if (refs.length === 0) return content;
  const rows = await checkMediaAssets(tenant, refs);
  const unready: FieldError[] = refs.flatMap((r) => {
    const row = rows.get(r.assetId)!;
    if (row.status === 'ready') return [];
    const message =
      row.status === 'processing'
        ? 'the asset is still processing; send once it is ready'
        : `the asset's processing failed (${row.error ?? 'unknown reason'}); upload it again`;
    return [{ field: r.field, message, code: row.status }];
  });
  if (unready.length) {
    throw new ApiError(409, 'INVALID_STATE', "Only a ready asset can be sent as message media (see the asset's status).", {
      details: unready,
    });
  }
  const expiresAt = linkExpiry(now, MESSAGE_LINK_TTL_MS);
  const resolved = structuredClone(content);
  for (const { holder } of holders(resolved, field)) {
    if (typeof holder.assetId !== 'string' || holder.mediaUrl !== undefined) continue;
    const row = rows.get(holder.assetId)!;
    const choice = messageVariant(row) as { variant: string };
    holder.mediaUrl = variantLink(services.config.assetBaseUrl, tenant.organizationId, row.id, choice.variant, expiresAt);
  }
  return resolved;
}
