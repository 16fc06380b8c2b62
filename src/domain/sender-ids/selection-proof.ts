// Selection proofs for number purchases: a short-lived, server-signed binding of the organization, the exact
// numberKey, the canonical number, the inventory type and the provider of one search row.
//
// Form: `sp1.<base64url(JSON payload)>.<base64url(HMAC-SHA256(key, "sp1." + payload part))>`.
// Key: derived from the deployment's secrets key (src/lib/secrets.ts, SECRETS_KEY) with HKDF-SHA256 and a label
// of its own, so it is never the sealing key itself, is shared by every process that shares SECRETS_KEY, and
// changes with it (a rotation invalidates outstanding proofs: search again). Lifetime: 15 minutes.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { secretsKey } from '../../lib/secrets.ts';
import { ApiError, type FieldError } from '../errors.ts';
import type { InventoryType, NumberCapability, ProviderName } from '../../providers/provider.ts';

const SELECTION_PROOF_TTL_SECONDS = 15 * 60;
const VERSION = 'sp1';

/** Bound: organization, numberKey, number, inventory type, provider, expiry; carried along (signed): the row's terms. */
export type SelectionClaims = {
  org: string;
  nk: string;
  n: string;
  it: InventoryType;
  p: ProviderName;
  c: NumberCapability[];
  m: string | null;
  exp: number;
};

const keys = new WeakMap<Buffer, Buffer>();
function proofKey(): Buffer {
  const master = secretsKey();
  let key = keys.get(master);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'sender-number selection proof v1', 32));
    keys.set(master, key);
  }
  return key;
}

const mac = (signed: string) => createHmac('sha256', proofKey()).update(signed).digest();

export function issueSelectionProof(claims: Omit<SelectionClaims, 'exp'>, now = new Date()): { proof: string; expiresAt: Date } {
  const exp = Math.floor(now.getTime() / 1000) + SELECTION_PROOF_TTL_SECONDS;
  const payload = Buffer.from(
    JSON.stringify({ org: claims.org, nk: claims.nk, n: claims.n, it: claims.it, p: claims.p, c: claims.c, m: claims.m, exp }),
  ).toString('base64url');
  const signed = `${VERSION}.${payload}`;
  return { proof: `${signed}.${mac(signed).toString('base64url')}`, expiresAt: new Date(exp * 1000) };
}

const invalid = (message: string, details: FieldError[]) => new ApiError(400, 'SELECTION_PROOF_INVALID', message, { details });

/**
 * The claims of a proof that is intact, unexpired, issued to this organization and matches the evidence sent
 * with it; otherwise 400 SELECTION_PROOF_INVALID (nothing else has happened yet).
 */
export function verifySelectionProof(
  evidence: {
    organizationId: string;
    numberKey?: string | undefined;
    number?: string | undefined;
    selectionProof?: string | undefined;
    inventoryType?: string | undefined;
  },
  now = new Date(),
): SelectionClaims {
  const missing = (['numberKey', 'number', 'selectionProof'] as const).filter((f) => !evidence[f]);
  if (missing.length) {
    throw invalid(
      'The selection evidence is incomplete. Send numberKey, number and selectionProof of one search row.',
      missing.map((f) => ({ field: `body.${f}`, message: 'missing', code: 'missing' })),
    );
  }
  const proof = evidence.selectionProof!;
  const parts = proof.split('.');
  const bad = (message: string, code: string) => invalid(`${message} Search again.`, [{ field: 'body.selectionProof', message, code }]);
  if (parts.length !== 3 || parts[0] !== VERSION) throw bad('The selection proof is not one this server issued.', 'malformed');
  const expected = mac(`${parts[0]}.${parts[1]}`);
  const given = Buffer.from(parts[2]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw bad('The selection proof was altered or not issued by this server.', 'signature');
  let claims: SelectionClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as SelectionClaims;
  } catch {
    throw bad('The selection proof is not one this server issued.', 'malformed');
  }
  if (claims.org !== evidence.organizationId) throw bad('The selection proof was issued to another organization.', 'organization');
  const contradicts: FieldError[] = [];
  if (claims.nk !== evidence.numberKey)
    contradicts.push({ field: 'body.numberKey', message: 'does not match the selection proof', code: 'mismatch' });
  if (claims.n !== evidence.number)
    contradicts.push({ field: 'body.number', message: 'does not match the selection proof', code: 'mismatch' });
  if (evidence.inventoryType !== undefined && claims.it !== evidence.inventoryType) {
    contradicts.push({ field: 'body.inventoryType', message: 'does not match the selection proof', code: 'mismatch' });
  }
  if (contradicts.length) throw invalid('The selection evidence contradicts its proof. Send the search row unmodified.', contradicts);
  const expiresAt = new Date(claims.exp * 1000);
  if (now.getTime() >= expiresAt.getTime()) {
    throw invalid('The selection proof has expired. Search again.', [
      { field: 'body.selectionProof', message: `expired at ${expiresAt.toISOString()}`, code: 'expired' },
    ]);
  }
  return claims;
}
