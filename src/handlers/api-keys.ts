// API Keys section (the api-keys paths of openapi.yaml): listApiKeys, createApiKey, revokeApiKey, rotateApiKey.
// The section template: each handler takes the typed input, makes one service call (src/domain/api-keys/) with
// the tenant, and maps the result (mappers.ts). No SQL, no rules, no transactions here.
import * as keys from '../domain/api-keys/keys.ts';
import { toApiKey } from '../domain/api-keys/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const apiKeyHandlers = defineHandlers({
  async listApiKeys({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await keys.listKeys(tenant, page);
    return {
      status: 200,
      body: paginated(
        rows.map((r) => toApiKey(r)),
        total,
        page,
      ),
    };
  },

  async createApiKey({ body }, { tenant, services }) {
    const { row, secret } = await keys.createKey(tenant, services, body);
    return { status: 201, body: { data: { ...toApiKey(row), secret } } };
  },

  async revokeApiKey({ path }, { tenant, services }) {
    return { status: 200, body: { data: toApiKey(await keys.revokeKey(tenant, services, path.id)) } };
  },

  async rotateApiKey({ path }, { tenant, services }) {
    const { row, secret } = await keys.rotateKey(tenant, services, path.id);
    return { status: 200, body: { data: { ...toApiKey(row), secret } } };
  },
});
