// Assets (POST /v1/assets/upload[/batch], list, get, rename/move, delete, crop, resize, variant download).
// An upload is checked entirely before anything is stored (size, type from the bytes, image header); then the
// original goes to the object store and the row plus its processing job are written in one transaction (the
// object is removed again if that fails). Variants are made by the job (processing.ts).
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { fromKysely } from 'pg-boss';
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/assets/assets.ts';
import { folderExists } from '../../db/queries/assets/folders.ts';
import type { AssetKind } from '../../db/tables/assets.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { readAll, storeFor, type ObjectStore, type StoredObject } from '../../lib/storage/index.ts';
import type { PageRequest } from '../../db/paging.ts';
import { ApiError, conflict, found, invalidField, notFound, unknownReference, unprocessable } from '../errors.ts';
import type { UploadedFile } from '../files.ts';
import type { Services, Tenant } from '../tenant.ts';
import { detectType, safeName, splitExt } from './detect.ts';
import * as images from './images.ts';
import { CARRIER_VARIANT } from './links.ts';
import { mmsSource } from './media.ts';

export type AssetRow = q.AssetRow;
const PROCESS_QUEUE = QUEUES.assetProcess;
export type ProcessJobData = { organizationId: string; assetId: string };

const MB = 1024 * 1024;
/** Per-type size limits of the document (413 beyond). */
const SIZE_LIMITS: Record<AssetKind, number> = {
  image: 5 * MB,
  gif: 5 * MB,
  video: 25 * MB,
  audio: 10 * MB,
  pdf: 10 * MB,
  vcard: MB,
  other: MB,
};
/** Largest file whatever the type. */
const MAX_FILE_BYTES = 25 * MB;
const MAX_BATCH_FILES = 20;

type UploadRequest = components['schemas']['AssetUploadRequest'];
type BatchRequest = components['schemas']['AssetBatchUploadRequest'];
type UpdateRequest = components['schemas']['AssetUpdateRequest'];
type CropRequest = components['schemas']['AssetCropRequest'];
type ResizeRequest = components['schemas']['AssetResizeRequest'];
type ListQuery = {
  folderId?: string;
  type?: AssetKind;
  search?: string;
  includeErrors?: boolean;
  sort?: q.AssetListFilter['sort'];
  order?: q.AssetListFilter['order'];
};

const store = (services: Pick<Services, 'config'>): ObjectStore => storeFor(services.config);
export const etagOf = (data: Buffer): string => createHash('sha256').update(data).digest('hex').slice(0, 40);
export const objectKey = (orgId: string, assetId: string, variant: string): string => `${orgId}/${assetId}/${variant}`;

/** A file checked and ready to store. */
type Prepared = { type: AssetKind; mimeType: string; name: string; data: Buffer; width: number | null; height: number | null };

const MB_TEXT = (n: number) => `${n / MB} MB`;

/** Every check of an uploaded file (400 empty or unreadable image, 413 too large, 415 type not accepted). */
async function prepareFile(file: UploadedFile, name: string, field: string): Promise<Prepared> {
  if (file.size === 0) throw invalidField(field, 'the file is empty (0 bytes)');
  if (file.size > MAX_FILE_BYTES)
    throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `The file is larger than ${MB_TEXT(MAX_FILE_BYTES)}; nothing was stored.`);
  const detected = await detectType(file.data);
  if (detected.type === null) {
    throw new ApiError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      `${detected.mimeType ?? 'This content'} is not an accepted asset type (detected from the file's content).`,
    );
  }
  const limit = SIZE_LIMITS[detected.type];
  if (file.size > limit) {
    throw new ApiError(
      413,
      'PAYLOAD_TOO_LARGE',
      `A ${detected.type} asset may be at most ${MB_TEXT(limit)}; this file is ${file.size} bytes. Nothing was stored.`,
    );
  }
  let width: number | null = null;
  let height: number | null = null;
  if (detected.type === 'image' || detected.type === 'gif') ({ width, height } = await images.probe(file.data, detected.mimeType, field));
  return { type: detected.type, mimeType: detected.mimeType, name, data: file.data, width, height };
}

/** Stores the bytes, then the row and its processing job in one transaction. */
async function createAsset(
  tenant: Tenant,
  services: Services,
  p: Prepared,
  folderId: string | null,
  sourceAssetId: string | null,
): Promise<AssetRow> {
  const orgId = tenant.organizationId;
  const id = randomUUID();
  const key = objectKey(orgId, id, 'original');
  const queue = services.queue;
  if (!queue) throw new Error('assets need the job queue');
  await store(services).put(key, p.data, p.mimeType);
  try {
    return await inTransaction(tenant.db, async (tx) => {
      let folder = folderId;
      if (folder !== null && !(await folderExists(tx, orgId, folder))) {
        if (sourceAssetId === null) throw unknownReference('body.folderId', 'asset folder');
        folder = null; // the source's folder was deleted meanwhile: the derived asset is unfiled
      }
      const row = await q.insertAsset(tx, orgId, {
        id,
        folder_id: folder,
        source_asset_id: sourceAssetId,
        type: p.type,
        name: p.name,
        mime_type: p.mimeType,
        size_bytes: p.data.length,
        width: p.width,
        height: p.height,
        error: null,
        storage_key: key,
        etag: etagOf(p.data),
        variants: [],
      });
      await queue.send(PROCESS_QUEUE, { organizationId: orgId, assetId: id } satisfies ProcessJobData, { db: fromKysely(tx) });
      return row;
    });
  } catch (error) {
    await store(services)
      .delete(key)
      .catch(() => undefined);
    throw error;
  }
}

async function requireFolder(tenant: Tenant, folderId: string | undefined | null): Promise<string | null> {
  if (folderId === undefined || folderId === null) return null;
  if (!(await folderExists(tenant.db, tenant.organizationId, folderId))) throw unknownReference('body.folderId', 'asset folder');
  return folderId;
}

export async function uploadAsset(tenant: Tenant, services: Services, body: UploadRequest, files: UploadedFile[]): Promise<AssetRow> {
  const parts = files.filter((f) => f.field === 'file');
  if (parts.length !== 1) throw invalidField('body.file', parts.length === 0 ? 'must be a file part' : 'must be sent once');
  const file = parts[0]!;
  const folderId = await requireFolder(tenant, body.folderId);
  const prepared = await prepareFile(file, safeName(body.name ?? file.filename), 'body.file');
  return createAsset(tenant, services, prepared, folderId, null);
}

export type BatchResult = {
  index: number;
  filename: string;
  asset: AssetRow | null;
  error: { code: 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'VALIDATION_ERROR' | 'INTERNAL_ERROR'; message: string } | null;
};

/** Each file on its own: one refused file never stops the others. */
export async function uploadBatch(tenant: Tenant, services: Services, body: BatchRequest, files: UploadedFile[]): Promise<BatchResult[]> {
  const parts = files.filter((f) => f.field === 'files');
  if (parts.length === 0) throw invalidField('body.files', 'at least one file part named files is required');
  if (parts.length > MAX_BATCH_FILES) throw invalidField('body.files', `at most ${MAX_BATCH_FILES} files per batch (got ${parts.length})`);
  const folderId = await requireFolder(tenant, body.folderId);
  const results: BatchResult[] = [];
  for (const [index, file] of parts.entries()) {
    const field = `body.files.${index}`;
    try {
      const prepared = await prepareFile(file, safeName(file.filename), field);
      results.push({ index, filename: file.filename, asset: await createAsset(tenant, services, prepared, folderId, null), error: null });
    } catch (error) {
      if (!(error instanceof ApiError)) services.log.error({ err: error, index }, 'batch upload: file failed');
      const code =
        error instanceof ApiError &&
        (error.code === 'PAYLOAD_TOO_LARGE' || error.code === 'UNSUPPORTED_MEDIA_TYPE' || error.code === 'VALIDATION_ERROR')
          ? error.code
          : 'INTERNAL_ERROR';
      const detail = error instanceof ApiError ? (error.details?.[0]?.message ?? error.message) : 'the file could not be stored; retry it';
      results.push({ index, filename: file.filename, asset: null, error: { code, message: detail } });
    }
  }
  return results;
}

export async function listAssets(tenant: Tenant, query: ListQuery, page: PageRequest) {
  const folder: q.AssetListFilter['folder'] =
    query.folderId === undefined
      ? { kind: 'any' }
      : query.folderId === 'null'
        ? { kind: 'unfiled' }
        : { kind: 'folder', id: query.folderId };
  return q.listAssets(
    tenant.db,
    tenant.organizationId,
    {
      folder,
      type: query.type,
      search: query.search,
      includeErrors: query.includeErrors ?? false,
      sort: query.sort ?? 'created_at',
      order: query.order ?? 'desc',
    },
    page,
  );
}

export async function getAsset(tenant: Tenant, id: string): Promise<AssetRow> {
  return found(await q.getAsset(tenant.db, tenant.organizationId, id), 'Asset');
}

export async function updateAsset(tenant: Tenant, id: string, body: UpdateRequest): Promise<AssetRow> {
  return inTransaction(tenant.db, async (tx) => {
    const orgId = tenant.organizationId;
    found(await q.getAsset(tx, orgId, id), 'Asset');
    const patch: { name?: string; folder_id?: string | null } = {};
    if (body.name !== undefined) patch.name = safeName(body.name);
    if (body.folderId !== undefined) {
      if (body.folderId !== null && !(await folderExists(tx, orgId, body.folderId)))
        throw unknownReference('body.folderId', 'asset folder');
      patch.folder_id = body.folderId;
    }
    return found(await q.updateAsset(tx, orgId, id, patch), 'Asset');
  });
}

/** Deletes the row, then the original and every variant from the store. */
export async function deleteAsset(tenant: Tenant, services: Services, id: string): Promise<void> {
  const row = found(await q.deleteAsset(tenant.db, tenant.organizationId, id), 'Asset');
  const keys = [row.storage_key, ...row.variants.map((v) => v.key)];
  await Promise.all(
    keys.map((k) =>
      store(services)
        .delete(k)
        .catch((err: unknown) => services.log.warn({ err, key: k }, 'asset file not deleted')),
    ),
  );
}

async function editableSource(tenant: Tenant, services: Services, id: string): Promise<{ row: AssetRow; data: Buffer }> {
  const row = await getAsset(tenant, id);
  if (row.type !== 'image' && row.type !== 'gif') {
    throw unprocessable(
      'UNPROCESSABLE',
      `Only image and GIF assets can be cropped or resized; this asset is ${row.type} (${row.mime_type}).`,
    );
  }
  if (row.status !== 'ready') throw conflict('INVALID_STATE', `The asset is ${row.status}; only a ready asset can be cropped or resized.`);
  const stream = await store(services).get(row.storage_key);
  if (!stream) throw new Error(`asset ${row.id}: original file missing from storage`);
  return { row, data: await readAll(stream) };
}

function derivedName(base: string, suffix: string, ext: string): string {
  const room = 255 - suffix.length - ext.length;
  return `${[...base].slice(0, Math.max(1, room)).join('')}${suffix}${ext}`;
}

export async function cropAsset(tenant: Tenant, services: Services, id: string, rect: CropRequest): Promise<AssetRow> {
  const { row, data } = await editableSource(tenant, services, id);
  const width = row.width ?? 0;
  const height = row.height ?? 0;
  const problems: Array<{ field: string; message: string }> = [];
  if (rect.x + rect.width > width)
    problems.push({ field: 'body.width', message: `x + width (${rect.x + rect.width}) exceeds the image width ${width}` });
  if (rect.y + rect.height > height)
    problems.push({ field: 'body.height', message: `y + height (${rect.y + rect.height}) exceeds the image height ${height}` });
  if (problems.length)
    throw new ApiError(400, 'VALIDATION_ERROR', `The crop rectangle must lie inside the ${width}×${height} image.`, { details: problems });
  const out = await images.crop(data, row.mime_type, rect);
  const [base, ext] = splitExt(row.name);
  return createAsset(
    tenant,
    services,
    {
      type: row.type,
      mimeType: out.mimeType,
      name: derivedName(base, ' (cropped)', ext),
      data: out.data,
      width: out.width,
      height: out.height,
    },
    row.folder_id,
    row.id,
  );
}

export async function resizeAsset(tenant: Tenant, services: Services, id: string, body: ResizeRequest): Promise<AssetRow> {
  const { row, data } = await editableSource(tenant, services, id);
  const out = await images.resize(data, { width: body.width, height: body.height, fit: body.fit ?? 'inside' });
  const [base] = splitExt(row.name);
  return createAsset(
    tenant,
    services,
    {
      type: 'image',
      mimeType: 'image/jpeg',
      name: derivedName(base, ` (${body.width}x${body.height})`, '.jpg'),
      data: out.data,
      width: out.width,
      height: out.height,
    },
    row.folder_id,
    row.id,
  );
}

/** A variant to download: what it is, and its bytes opened from the store (null: the client's copy is current). */
export type VariantDownload = { mimeType: string; etag: string; fileName: string; content: StoredObject | null };

/** Whether an `If-None-Match` value names `etag` (weak comparison, as RFC 9110 wants for it; `*` matches). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${etag}"`;
  });
}

/**
 * The `mms_carrier` variant (links.ts CARRIER_VARIANT): the image as an MMS carries it (media.ts mmsSource), made
 * at most MMS_CARRIER_MAX_BYTES when it is larger. Not stored: the asset keeps its variants; it is made on each
 * read that misses a cache (the carrier's link is one URL per hour, so an MMSC or CDN fetches it once). Its ETag
 * is derived from the source's, which fixes the bytes (the same sharp on the same input).
 */
async function carrierDownload(services: Services, row: q.AssetRow, base: string, ifNoneMatch?: string): Promise<VariantDownload> {
  const source = mmsSource(row);
  if (!source) throw notFound(`Variant ${CARRIER_VARIANT} of this asset`);
  // Within the limit the source goes as it is (a small GIF stays a GIF); over it, as a JPEG made to fit.
  const fits = source.sizeBytes <= images.MMS_CARRIER_MAX_BYTES;
  const etag = `${source.etag}c`;
  const mimeType = fits ? source.mimeType : 'image/jpeg';
  const meta = { mimeType, etag, fileName: `${base}-${CARRIER_VARIANT}${mimeType === 'image/gif' ? '.gif' : '.jpg'}` };
  if (matchesEtag(ifNoneMatch, etag)) return { ...meta, content: null };
  const stored = await store(services).open(source.key);
  if (!stored) throw notFound(`Variant ${CARRIER_VARIANT} of this asset`);
  const data = await readAll(stored.body);
  const out = fits ? data : (await images.carrierVariant(data)).data;
  return { ...meta, content: { body: Readable.from([out]), size: out.length } };
}

/**
 * `original` or a generated variant, streamed from the store (never read whole: flat memory whatever the size);
 * 404 for an unknown name or one not generated yet. When `ifNoneMatch` names the variant's ETag the store is not
 * touched (content null: 304).
 */
export async function openVariant(
  tenant: Tenant,
  services: Services,
  id: string,
  variant: string,
  ifNoneMatch?: string,
): Promise<VariantDownload> {
  const row = await getAsset(tenant, id);
  const [base, ext] = splitExt(row.name);
  let target: { key: string; mimeType: string; etag: string; fileName: string };
  if (variant === 'original') {
    target = { key: row.storage_key, mimeType: row.mime_type, etag: row.etag, fileName: row.name };
  } else if (variant === CARRIER_VARIANT) {
    return carrierDownload(services, row, base, ifNoneMatch);
  } else {
    const v = row.variants.find((x) => x.name === variant);
    if (!v) throw notFound(`Variant ${variant} of this asset`);
    target = { key: v.key, mimeType: v.mimeType, etag: v.etag, fileName: `${base}-${v.name}${v.mimeType === 'image/jpeg' ? '.jpg' : ext}` };
  }
  const meta = { mimeType: target.mimeType, etag: target.etag, fileName: target.fileName };
  if (matchesEtag(ifNoneMatch, target.etag)) return { ...meta, content: null };
  const content = await store(services).open(target.key);
  if (!content) throw notFound(`Variant ${variant} of this asset`);
  return { ...meta, content };
}
