// Common section (the common paths of openapi.yaml), assets and asset folders: see README "Adding an operation".
// Each handler takes the typed input, makes one service call (src/domain/assets/) and maps the result.
import { SIGNED_URL_PRINCIPAL } from '../auth/principal.ts';
import * as assets from '../domain/assets/assets.ts';
import * as folders from '../domain/assets/folders.ts';
import { toAsset, toAssetFolder, toBatchResponse, toDownload } from '../domain/assets/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const assetHandlers = defineHandlers({
  async listAssets({ query }, { tenant, services }) {
    const page = pageOf(query);
    const { rows, total } = await assets.listAssets(tenant, query, page);
    return {
      status: 200,
      body: paginated(
        rows.map((r) => toAsset(r, services.config.assetBaseUrl)),
        total,
        page,
      ),
    };
  },

  async uploadAsset({ body, files }, { tenant, services }) {
    return { status: 201, body: { data: toAsset(await assets.uploadAsset(tenant, services, body, files), services.config.assetBaseUrl) } };
  },

  async uploadAssetBatch({ body, files }, { tenant, services }) {
    return { status: 201, body: toBatchResponse(await assets.uploadBatch(tenant, services, body, files), services.config.assetBaseUrl) };
  },

  async getAsset({ path }, { tenant, services }) {
    return { status: 200, body: { data: toAsset(await assets.getAsset(tenant, path.id), services.config.assetBaseUrl) } };
  },

  async updateAsset({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toAsset(await assets.updateAsset(tenant, path.id, body), services.config.assetBaseUrl) } };
  },

  async deleteAsset({ path }, { tenant, services }) {
    await assets.deleteAsset(tenant, services, path.id);
    return { status: 200, body: { success: true as const, id: path.id } };
  },

  async cropAsset({ path, body }, { tenant, services }) {
    return { status: 201, body: { data: toAsset(await assets.cropAsset(tenant, services, path.id, body), services.config.assetBaseUrl) } };
  },

  async resizeAsset({ path, body }, { tenant, services }) {
    return {
      status: 201,
      body: { data: toAsset(await assets.resizeAsset(tenant, services, path.id, body), services.config.assetBaseUrl) },
    };
  },

  async downloadAssetVariant({ path, query, headers }, { tenant, services }) {
    // Through a signed link (the router verified it), the link's expiry bounds how long caches may keep the bytes.
    const signedUntil = tenant.apiKeyId === SIGNED_URL_PRINCIPAL && query.expires ? new Date(Number(query.expires) * 1000) : null;
    const download = toDownload(await assets.openVariant(tenant, services, path.id, path.variant, headers['if-none-match']), signedUntil);
    if (download.status === 304) return { status: 304, body: undefined, contentType: download.contentType, headers: download.headers };
    return { status: 200, body: download.body as unknown as string, contentType: download.contentType, headers: download.headers };
  },

  async listAssetFolders({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await folders.listFolders(tenant, query.parentId)).map(toAssetFolder), query) };
  },

  async createAssetFolder({ body }, { tenant }) {
    return { status: 201, body: { data: toAssetFolder(await folders.createFolder(tenant, body)) } };
  },

  async updateAssetFolder({ path, body }, { tenant }) {
    return { status: 200, body: { data: toAssetFolder(await folders.updateFolder(tenant, path.id, body)) } };
  },

  async deleteAssetFolder({ path }, { tenant }) {
    await folders.deleteFolder(tenant, path.id);
    return { status: 200, body: { success: true as const, id: path.id } };
  },
});
