// API key secrets: `msk_<8-char prefix>_<43-char base64url of 32 random bytes>` (256 bits of entropy).
// Only SHA-256 of the whole secret is stored; a fast hash is enough for a random 256-bit secret, and the
// prefix is the lookup key, so no secret-derived value is ever used in a query.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_RE = /^(msk_[a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;

export type NewSecret = { secret: string; prefix: string; hash: Buffer };

function randomPrefix(): string {
  const bytes = randomBytes(8);
  let out = 'msk_';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** One-shot SHA-256 (no Hash object per call: it runs on every authenticated request). */
export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

export function generateSecret(): NewSecret {
  const prefix = randomPrefix();
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix, hash: hashSecret(secret) };
}

/** The prefix of a well-formed secret, or undefined. */
export function prefixOf(secret: string): string | undefined {
  return SECRET_RE.exec(secret)?.[1];
}

/** Constant-time comparison of two SHA-256 digests (always 32 bytes, so lengths never differ). */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
