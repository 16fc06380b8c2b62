// Creating, rotating and revoking API keys. Each goes through the grant rule (grant-rule.ts): the calling key
// must hold every scope and role of the key it creates, rotates or revokes. For rotation and revocation the
// target is read and locked in the organization first, so another organization's key id is 404 (never 403),
// then the rule is applied, then the state.
import { generateSecret } from '../../auth/api-key-secret.ts';
import type { Principal } from '../../auth/principal.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as q from '../../db/queries/api-keys.ts';
import type { ApiKeyRow } from '../../db/schema.ts';
import { conflict, invalidField, notFound } from '../../http/errors.ts';
import { assertMayGrant } from './grant-rule.ts';

export type { ApiKeyRow };

/** A page of the organization's keys, newest first, with the total. */
export async function listKeys(db: Db, organizationId: string, page: { limit: number; offset: number }): Promise<{ rows: ApiKeyRow[]; total: number }> {
  const rows = await q.listApiKeys(db, organizationId, page);
  const total = rows[0] ? Number(rows[0].total_count) : page.offset > 0 ? await q.countApiKeys(db, organizationId) : 0;
  return { rows, total };
}

export async function createKey(
  db: Db,
  principal: Principal,
  body: { name: string; scopes: string[]; expiresAt?: string | null },
  now = new Date(),
): Promise<{ row: ApiKeyRow; secret: string }> {
  assertMayGrant(principal.scopes, body.scopes, 'create');
  const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) throw invalidField('body.expiresAt', 'must be in the future');
  const secret = generateSecret();
  const row = await q.insertApiKey(db, {
    organizationId: principal.organizationId,
    name: body.name,
    prefix: secret.prefix,
    hash: secret.hash,
    scopes: body.scopes,
    expiresAt,
  });
  return { row, secret: secret.secret };
}

/** Issues a new secret for a live key. 404 unknown in the tenant, 403 by the grant rule, 409 revoked or expired. */
export function rotateKey(db: Db, principal: Principal, id: string): Promise<{ row: ApiKeyRow; secret: string }> {
  return inTransaction(db, async (tx) => {
    const current = await q.getApiKey(tx, principal.organizationId, id, { forUpdate: true });
    if (!current) throw notFound('API key');
    assertMayGrant(principal.scopes, current.scopes, 'rotate');
    const secret = generateSecret();
    const row = await q.rotateApiKey(tx, principal.organizationId, id, secret);
    if (!row) throw conflict('INVALID_STATE', 'A revoked or expired API key cannot be rotated.');
    return { row, secret: secret.secret };
  });
}

/** Revokes once (idempotent). 404 unknown in the tenant, 403 by the grant rule. */
export function revokeKey(db: Db, principal: Principal, id: string): Promise<ApiKeyRow> {
  return inTransaction(db, async (tx) => {
    const current = await q.getApiKey(tx, principal.organizationId, id, { forUpdate: true });
    if (!current) throw notFound('API key');
    assertMayGrant(principal.scopes, current.scopes, 'revoke');
    const row = await q.revokeApiKey(tx, principal.organizationId, id);
    if (!row) throw notFound('API key'); // unreachable: the row is locked
    return row;
  });
}
