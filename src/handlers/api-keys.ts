// API Keys section: listApiKeys, createApiKey, revokeApiKey, rotateApiKey.
import { generateSecret } from '../auth/api-key-secret.ts';
import * as q from '../db/queries/api-keys.ts';
import type { ApiKeyRow } from '../db/schema.ts';
import type { components } from '../../generated/api.d.ts';
import { conflict, forbidden, invalidField, notFound } from '../http/errors.ts';
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
    const { organizationId } = requirePrincipal(scope);
    const page = pageOf(query);
    const rows = await q.listApiKeys(scope.app.db, organizationId, page);
    const total = rows[0] ? Number(rows[0].total_count) : page.offset > 0 ? await q.countApiKeys(scope.app.db, organizationId) : 0;
    return { status: 200, body: paginated(rows.map((r) => toApiKey(r)), total, page) };
  },

  async createApiKey({ body }, scope) {
    const principal = requirePrincipal(scope);
    const missing = body.scopes.filter((s) => !principal.scopes.has(s));
    if (missing.length) throw forbidden(`A key cannot grant scopes it does not hold: ${missing.join(', ')}.`);
    const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalidField('body.expiresAt', 'must be in the future');
    const secret = generateSecret();
    const row = await q.insertApiKey(scope.app.db, {
      organizationId: principal.organizationId,
      name: body.name,
      prefix: secret.prefix,
      hash: secret.hash,
      scopes: body.scopes,
      expiresAt,
    });
    return { status: 201, body: { data: { ...toApiKey(row), secret: secret.secret } } };
  },

  async revokeApiKey({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const row = await q.revokeApiKey(scope.app.db, organizationId, path.id);
    if (!row) throw notFound('API key');
    scope.app.apiKeyCache?.evict(row.id);
    return { status: 200, body: { data: toApiKey(row) } };
  },

  async rotateApiKey({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const secret = generateSecret();
    const row = await q.rotateApiKey(scope.app.db, organizationId, path.id, secret);
    if (row) scope.app.apiKeyCache?.evict(row.id);
    if (row) return { status: 200, body: { data: { ...toApiKey(row), secret: secret.secret } } };
    if (await q.getApiKey(scope.app.db, organizationId, path.id)) {
      throw conflict('INVALID_STATE', 'A revoked or expired API key cannot be rotated.');
    }
    throw notFound('API key');
  },
});
