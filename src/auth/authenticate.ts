// Bearer API key → Principal. Lookup by public prefix, constant-time digest comparison, then state checks.
import type { Db } from '../db/database.ts';
import { findApiKeyByPrefix, touchApiKey } from '../db/queries/api-keys.ts';
import { unauthenticated } from '../http/errors.ts';
import { digestsEqual, hashSecret, prefixOf } from './api-key-secret.ts';
import type { ApiKeyCache } from './key-cache.ts';
import type { Principal } from './principal.ts';

export async function authenticate(db: Db, cache: ApiKeyCache | undefined, authorization: string | undefined, now = new Date()): Promise<Principal> {
  if (!authorization) throw unauthenticated('Missing Authorization header; send "Authorization: Bearer <API key>".');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthenticated('Malformed Authorization header; expected "Bearer <API key>".');
  const secret = match[1]!;
  const prefix = prefixOf(secret);
  if (!prefix) throw unauthenticated('Malformed API key.');
  let row = cache?.get(prefix);
  if (!row) {
    const snapshot = cache?.snapshot() ?? 0;
    row = await findApiKeyByPrefix(db, prefix);
    if (row && !row.revoked_at) cache?.set(row, snapshot);
  }
  if (!row || !digestsEqual(row.secret_hash, hashSecret(secret))) throw unauthenticated('Invalid API key.');
  if (row.revoked_at) throw unauthenticated('This API key has been revoked.');
  if (row.expires_at && row.expires_at <= now) throw unauthenticated('This API key has expired.');
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    row.last_used_at = now; // also in the cached row, so the next minute of requests does not write again
    touchApiKey(db, row.id).catch(() => {}); // best effort; never fails a request
  }
  return { organizationId: row.organization_id, apiKeyId: row.id, scopes: new Set(row.scopes) };
}
