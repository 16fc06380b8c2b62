// The processing job of an asset (queue assets.process): makes the variants of images and GIFs (`thumbnail`,
// `mms`) with sharp and marks the asset `ready`, or `error` with the reason when the file cannot be processed
// (a corrupt image). Other types have no variants yet and become `ready` at once. A store that cannot be
// reached throws, so pg-boss retries the job; a deleted asset is skipped (and variants made meanwhile removed).
import type { AppContext } from '../../app-context.ts';
import * as q from '../../db/queries/assets/assets.ts';
import type { StoredVariant } from '../../db/tables/assets.ts';
import { readAll, storeFor } from '../../lib/storage/index.ts';
import { tenantFor } from '../tenant.ts';
import type { ProcessJobData } from './assets.ts';
import { etagOf, objectKey } from './assets.ts';
import * as images from './images.ts';

const MAX_ERROR_LENGTH = 500;

export async function runProcessJob(app: Pick<AppContext, 'db' | 'config' | 'log'>, data: ProcessJobData): Promise<void> {
  const tenant = await tenantFor(app, data.organizationId);
  const orgId = data.organizationId;
  const row = await q.getAsset(tenant.db, orgId, data.assetId);
  if (!row || row.status !== 'processing') return;
  const store = storeFor(app.config);
  const variants: StoredVariant[] = [];
  let error: string | null = null;
  if (row.type === 'image' || row.type === 'gif') {
    const stream = await store.get(row.storage_key);
    if (!stream) {
      error = 'the original file is missing from storage';
    } else {
      const original = await readAll(stream);
      let renditions: Array<[string, images.Rendition]> = [];
      try {
        renditions = [
          ['thumbnail', await images.thumbnail(original)],
          ['mms', await images.mmsVariant(original)],
        ];
      } catch (e) {
        error = `the ${row.mime_type} file cannot be decoded: ${(e as Error).message.split('\n')[0]}`.slice(0, MAX_ERROR_LENGTH);
      }
      for (const [name, r] of renditions) {
        const key = objectKey(orgId, row.id, name);
        await store.put(key, r.data, r.mimeType);
        variants.push({
          name,
          mimeType: r.mimeType,
          width: r.width,
          height: r.height,
          sizeBytes: r.data.length,
          key,
          etag: etagOf(r.data),
        });
      }
    }
  }
  const done = await q.finishProcessing(tenant.db, orgId, row.id, { status: error ? 'error' : 'ready', error, variants });
  if (!done) await Promise.all(variants.map((v) => store.delete(v.key)));
  else if (error) app.log.info({ assetId: row.id, error }, 'asset processing failed');
}
