// Stored asset and folder rows → the document's shapes (Asset, AssetFolder, AssetBatchUploadResult), and the
// answer of a variant download (streamed bytes, caching headers).
import type { components } from '../../../generated/api.d.ts';
import type { Readable } from 'node:stream';
import type { AssetRow, BatchResult, VariantDownload } from './assets.ts';
import { linkExpiry, RESOURCE_LINK_TTL_MS, variantLink } from './links.ts';
import type { AssetFolderRow } from './folders.ts';

type Asset = components['schemas']['Asset'];
type AssetFolder = components['schemas']['AssetFolder'];
type BatchItem = components['schemas']['AssetBatchUploadResult'];

/**
 * `url` and every `variants[].url` are signed links (links.ts): they download without an API key (an `<img>`, a
 * carrier) until `urlsExpireAt`, and read within the same hour they are the same URLs.
 */
export function toAsset(row: AssetRow, baseUrl: string, now = new Date()): Asset {
  const expiresAt = linkExpiry(now, RESOURCE_LINK_TTL_MS);
  const link = (variant: string) => variantLink(baseUrl, row.organization_id, row.id, variant, expiresAt);
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    folderId: row.folder_id,
    mimeType: row.mime_type,
    size_bytes: row.size_bytes,
    width: row.width,
    height: row.height,
    status: row.status,
    error: row.error,
    url: link('original'),
    variants: row.variants.map((v) => ({ name: v.name, mimeType: v.mimeType, width: v.width, height: v.height, url: link(v.name) })),
    urlsExpireAt: expiresAt.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

export function toBatchResponse(results: BatchResult[], baseUrl: string): components['schemas']['AssetBatchUploadResponse'] {
  const data: BatchItem[] = results.map((r) => ({
    index: r.index,
    filename: r.filename,
    status: r.asset ? 'created' : 'failed',
    asset: r.asset ? toAsset(r.asset, baseUrl) : null,
    error: r.error,
  }));
  const created = data.filter((d) => d.status === 'created').length;
  return { data, summary: { total: data.length, created, failed: data.length - created } };
}

export function toAssetFolder(row: AssetFolderRow): AssetFolder {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Types sent as themselves; anything else is application/octet-stream with an attachment file name. */
const INLINE = new Set(['image/jpeg', 'image/png', 'image/gif', 'video/mp4']);
const YEAR_SECONDS = 31_536_000;

export type Download = { status: 200 | 304; body: Readable | undefined; contentType: string; headers: Record<string, string> };

/**
 * The answer of a variant download. The bytes of an asset id and variant name never change (edits make new
 * assets), so they are cacheable for good (`immutable`) under their ETag. Read with an API key: `private` (a
 * shared cache must not serve a key's answer to others). Read through a signed link: `public`, because the link
 * itself is the credential and a shared cache (a CDN, a carrier's MMSC) keys on the whole URL, signature
 * included; `max-age` then ends with the link, so no cache serves it after it expired.
 */
export function toDownload(v: VariantDownload, signedUntil: Date | null = null, now = new Date()): Download {
  const inline = INLINE.has(v.mimeType);
  const ascii = v.fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const maxAge = signedUntil
    ? Math.max(0, Math.min(YEAR_SECONDS, Math.floor((signedUntil.getTime() - now.getTime()) / 1000)))
    : YEAR_SECONDS;
  const caching = { ETag: `"${v.etag}"`, 'Cache-Control': `${signedUntil ? 'public' : 'private'}, max-age=${maxAge}, immutable` };
  const contentType = inline ? v.mimeType : 'application/octet-stream';
  if (!v.content) return { status: 304, body: undefined, contentType, headers: caching };
  return {
    status: 200,
    body: v.content.body,
    contentType,
    headers: {
      ...caching,
      ...(v.content.size !== null ? { 'Content-Length': String(v.content.size) } : {}),
      'X-Content-Type-Options': 'nosniff',
      'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(v.fileName)}`,
    },
  };
}
