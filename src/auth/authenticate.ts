// Bearer API key → Principal. Lookup by public prefix, constant-time digest comparison, then state checks.
import type { Db } from '../db/database.ts';
import type { ApiKeyRow } from '../db/schema.ts';
import { findApiKeyByPrefix, touchApiKey } from '../db/queries/api-keys/api-keys.ts';
import { unauthenticated } from '../domain/errors.ts';
import { digestsEqual, hashSecret, prefixOf } from './api-key-secret.ts';
import type { ApiKeyCache } from './key-cache.ts';
import type { Principal } from './principal.ts';

/** Compared against when no key has the prefix, so that path does the same work (no secret hashes to it). */
const NO_KEY_DIGEST = hashSecret('msk_00000000_no-key');

export async function authenticate(
  db: Db,
  cache: ApiKeyCache | undefined,
  authorization: string | undefined,
  now = new Date(),
): Promise<Principal> {
  if (!authorization) throw unauthenticated('Missing Authorization header; send "Authorization: Bearer <API key>".');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthenticated('Malformed Authorization header; expected "Bearer <API key>".');
  const secret = match[1]!;
  const prefix = prefixOf(secret);
  if (!prefix) throw unauthenticated('Malformed API key.');
  // Known, unknown and revoked prefixes take the same path: looked up once, then cached (key-cache.ts), and
  // the secret is hashed and compared even when no key has the prefix.
  let row = cache?.get(prefix);
  if (row === undefined) {
    const snapshot = cache?.snapshot() ?? 0;
    row = (await findApiKeyByPrefix(db, prefix)) ?? null;
    cache?.set(prefix, row, snapshot);
  }
  const matches = digestsEqual(row?.secret_hash ?? NO_KEY_DIGEST, hashSecret(secret));
  if (!row || !matches) throw unauthenticated('Invalid API key.');
  if (row.revoked_at) throw unauthenticated('This API key has been revoked.');
  if (row.expires_at && row.expires_at <= now) throw unauthenticated('This API key has expired.');
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    row.last_used_at = now; // also in the cached row, so the next minute of requests does not write again
    await touchApiKey(db, row.id).catch(() => {}); // best effort (never fails a request); awaited so the answer already shows it
  }
  return { organizationId: row.organization_id, apiKeyId: row.id, scopes: scopesOf(row) };
}

/** A key's scopes as a set, built once per cached row (an owner key holds every scope: ~70 strings per request). */
const scopeSets = new WeakMap<ApiKeyRow, ReadonlySet<string>>();

function scopesOf(row: ApiKeyRow): ReadonlySet<string> {
  let scopes = scopeSets.get(row);
  if (!scopes) scopeSets.set(row, (scopes = new Set(row.scopes)));
  return scopes;
}
