// Stored asset and folder rows → the document's shapes (Asset, AssetFolder, AssetBatchUploadResult), and the
// headers of a variant download.
import type { components } from '../../../generated/api.d.ts';
import type { AssetRow, BatchResult, VariantContent } from './assets.ts';
import type { AssetFolderRow } from './folders.ts';

type Asset = components['schemas']['Asset'];
type AssetFolder = components['schemas']['AssetFolder'];
type BatchItem = components['schemas']['AssetBatchUploadResult'];

const variantUrl = (baseUrl: string, id: string, variant: string) => `${baseUrl}/v1/assets/${id}/variant/${variant}`;

export function toAsset(row: AssetRow, baseUrl: string): Asset {
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
    url: variantUrl(baseUrl, row.id, 'original'),
    variants: row.variants.map((v) => ({ name: v.name, mimeType: v.mimeType, width: v.width, height: v.height, url: variantUrl(baseUrl, row.id, v.name) })),
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
  return { id: row.id, name: row.name, parentId: row.parent_id, createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString() };
}

/** Types sent as themselves; anything else is application/octet-stream with an attachment file name. */
const INLINE = new Set(['image/jpeg', 'image/png', 'image/gif', 'video/mp4']);

export function toDownload(v: VariantContent): { contentType: string; headers: Record<string, string>; body: Buffer } {
  const inline = INLINE.has(v.mimeType);
  const ascii = v.fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    body: v.data,
    contentType: inline ? v.mimeType : 'application/octet-stream',
    headers: {
      ETag: `"${v.etag}"`,
      // The bytes of an asset id and variant name never change (edits make new assets): cache them for good, but
      // only privately, since reading them takes an API key.
      'Cache-Control': 'private, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(v.fileName)}`,
    },
  };
}
