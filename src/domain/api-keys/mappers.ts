// API Keys section: stored rows → the document's shapes.
import type { components } from '../../../generated/api.d.ts';
import type { ApiKeyRow } from '../../db/schema.ts';

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
