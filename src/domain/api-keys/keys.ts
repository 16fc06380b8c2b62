// Creating, rotating and revoking API keys. Each goes through the grant rule (grant-rule.ts): the calling key
// must hold every scope and role of the key it creates, rotates or revokes. For rotation and revocation the
// target is read and locked in the organization first, so another organization's key id is 404 (never 403),
// then the rule is applied, then the state.
import { generateSecret } from '../../auth/api-key-secret.ts';
import { inTransaction } from '../../db/database.ts';
import type { Page } from '../../db/paging.ts';
import * as q from '../../db/queries/api-keys/api-keys.ts';
import type { ApiKeyRow } from '../../db/schema.ts';
import { conflict, found, invalidField } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { assertMayGrant } from './grant-rule.ts';

export type { ApiKeyRow };

/** A page of the organization's keys, newest first, with the total. */
export function listKeys(tenant: Tenant, page: { limit: number; offset: number }): Promise<Page<ApiKeyRow>> {
  return q.listApiKeys(tenant.db, tenant.organizationId, page);
}

export async function createKey(
  tenant: Tenant,
  services: Services,
  body: { name: string; scopes: string[]; expiresAt?: string | null },
  now = new Date(),
): Promise<{ row: ApiKeyRow; secret: string }> {
  assertMayGrant(tenant.scopes, body.scopes, 'create');
  const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) throw invalidField('body.expiresAt', 'must be in the future');
  const secret = generateSecret();
  const row = await q.insertApiKey(tenant.db, {
    organizationId: tenant.organizationId,
    name: body.name,
    prefix: secret.prefix,
    hash: secret.hash,
    scopes: body.scopes,
    expiresAt,
  });
  services.apiKeyCache?.evictPrefix(row.prefix); // usable on this process at once (others: on the notification)
  return { row, secret: secret.secret };
}

/** Issues a new secret for a live key. 404 unknown in the tenant, 403 by the grant rule, 409 revoked or expired. */
export async function rotateKey(tenant: Tenant, services: Services, id: string): Promise<{ row: ApiKeyRow; secret: string }> {
  const rotated = await inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getApiKey(tx, tenant.organizationId, id, { forUpdate: true }), 'API key');
    assertMayGrant(tenant.scopes, current.scopes, 'rotate');
    const secret = generateSecret();
    const row = await q.rotateApiKey(tx, tenant.organizationId, id, secret);
    if (!row) throw conflict('INVALID_STATE', 'A revoked or expired API key cannot be rotated.');
    return { row, secret: secret.secret };
  });
  services.apiKeyCache?.evict(rotated.row.id);
  services.apiKeyCache?.evictPrefix(rotated.row.prefix);
  return rotated;
}

/** Revokes once (idempotent). 404 unknown in the tenant, 403 by the grant rule. */
export async function revokeKey(tenant: Tenant, services: Services, id: string): Promise<ApiKeyRow> {
  const row = await inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getApiKey(tx, tenant.organizationId, id, { forUpdate: true }), 'API key');
    assertMayGrant(tenant.scopes, current.scopes, 'revoke');
    return found(await q.revokeApiKey(tx, tenant.organizationId, id), 'API key'); // the row is locked: always found
  });
  services.apiKeyCache?.evict(row.id);
  return row;
}
