// API Keys section: listApiKeys, createApiKey, revokeApiKey, rotateApiKey.
import * as keys from '../domain/api-keys/keys.ts';
import type { ApiKeyRow } from '../domain/api-keys/keys.ts';
import type { components } from '../../generated/api.d.ts';
import { defineHandlers, requirePrincipal } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

type ApiKey = components['schemas']['ApiKey'];

export function toApiKey(row: ApiKeyRow, now = new Date()): ApiKey {
  const status = row.revoked_at ? 'revoked' : row.expires_at && row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    status,
    expiresAt: row.expires_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

export const apiKeyHandlers = defineHandlers({
  async listApiKeys({ query }, scope) {
    const page = pageOf(query);
    const { rows, total } = await keys.listKeys(scope.app.db, requirePrincipal(scope).organizationId, page);
    return { status: 200, body: paginated(rows.map((r) => toApiKey(r)), total, page) };
  },

  async createApiKey({ body }, scope) {
    const { row, secret } = await keys.createKey(scope.app.db, requirePrincipal(scope), body);
    scope.app.apiKeyCache?.evictPrefix(row.prefix); // usable on this process at once (others: on the notification)
    return { status: 201, body: { data: { ...toApiKey(row), secret } } };
  },

  async revokeApiKey({ path }, scope) {
    const row = await keys.revokeKey(scope.app.db, requirePrincipal(scope), path.id);
    scope.app.apiKeyCache?.evict(row.id);
    return { status: 200, body: { data: toApiKey(row) } };
  },

  async rotateApiKey({ path }, scope) {
    const { row, secret } = await keys.rotateKey(scope.app.db, requirePrincipal(scope), path.id);
    scope.app.apiKeyCache?.evict(row.id);
    scope.app.apiKeyCache?.evictPrefix(row.prefix);
    return { status: 200, body: { data: { ...toApiKey(row), secret } } };
  },
});
