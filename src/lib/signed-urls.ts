// Signed download links (analytics exports, asset variants): a URL that works without an API key until it
// expires, for a browser, a spreadsheet or a carrier fetching MMS/RCS media. Like an S3 presigned URL, the query
// carries who it is for and until when, and an HMAC-SHA256 over the method, the path and those parameters:
//   /v1/assets/<id>/variant/mms?org=<organization id>&expires=<unix seconds>&signature=<base64url>
// Altering any part (path, org, expires) breaks the signature. The HMAC key is derived from the deployment's
// secrets key (src/lib/secrets.ts), so every API process that shares SECRETS_KEY accepts the links of the others,
// and rotating it revokes every link. Operations that accept a link declare the `signedUrl` security scheme
// beside `apiKey` in openapi.yaml; the router (src/http/api.ts) checks the link before the body, like a key.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../domain/errors.ts';
import { secretsKey } from './secrets.ts';

export const SIGNED_URL_PARAMS = ['org', 'expires', 'signature'] as const;
/** The longest validity a link may have (a week, as S3's presigned URLs). */
export const MAX_SIGNED_URL_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const hmacKey = (key: Buffer) => createHmac('sha256', key).update('messaging-service signed-urls v1').digest();
const macOf = (key: Buffer, method: string, path: string, org: string, expires: string) =>
  createHmac('sha256', hmacKey(key)).update(`${method.toUpperCase()}\n${path}\n${org}\n${expires}`).digest();

/**
 * The signed form of `baseUrl` + `path` for one organization, valid until `expiresAt` (rounded down to the
 * second). `path` is the request path as the router sees it (no query).
 */
export function signUrl(
  baseUrl: string,
  path: string,
  organizationId: string,
  expiresAt: Date,
  options: { method?: string; key?: Buffer } = {},
): string {
  const expires = String(Math.floor(expiresAt.getTime() / 1000));
  const signature = macOf(options.key ?? secretsKey(), options.method ?? 'GET', path, organizationId, expires).toString('base64url');
  const query = new URLSearchParams({ org: organizationId, expires, signature });
  return `${baseUrl.replace(/\/+$/, '')}${path}?${query.toString()}`;
}

/** True when the query carries a signature (the caller chose the link over a key). */
export const hasSignature = (query: Record<string, unknown>) => query.signature !== undefined;

const single = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * The organization a signed request acts for. 403 `INVALID_SIGNATURE` for a missing part or any alteration;
 * 404 `LINK_EXPIRED` for an authentic link past its expiry (it existed, and is gone, as an expired export).
 */
export function verifySignedUrl(
  method: string,
  path: string,
  query: Record<string, unknown>,
  options: { now?: Date; key?: Buffer } = {},
): { organizationId: string; expiresAt: Date } {
  const org = single(query.org);
  const expires = single(query.expires);
  const signature = single(query.signature);
  const invalid = () => new ApiError(403, 'INVALID_SIGNATURE', 'The link is not valid: its signature does not match. Ask for a new link.');
  if (!org || !expires || !signature || !/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) throw invalid();
  const expected = macOf(options.key ?? secretsKey(), method, path, org, expires);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  const expiresAt = new Date(Number(expires) * 1000);
  if (expiresAt.getTime() <= (options.now ?? new Date()).getTime()) {
    throw new ApiError(404, 'LINK_EXPIRED', 'The link has expired; ask for a new one.');
  }
  return { organizationId: org, expiresAt };
}
