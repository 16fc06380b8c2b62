// Signed links (src/lib/signed-urls.ts): what the router accepts instead of a key on download operations. The
// HTTP behaviour (a link downloads without a key, an altered one answers 403) is tested where links are handed
// out: analytics exports and asset variants.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signUrl, verifySignedUrl } from '../src/lib/signed-urls.ts';
import { ApiError } from '../src/domain/errors.ts';

const key = randomBytes(32);
const org = '5b0c1e1e-2f4a-4c1b-9a43-0d8b3f2d7a10';
const path = '/v1/analytics/export/0b6f2c1d-3e4a-4b5c-8d6e-7f8091a2b3c4/download';
const queryOf = (url: string) => Object.fromEntries(new URL(url).searchParams);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (e) {
    return e instanceof ApiError ? `${e.status} ${e.code}` : String(e);
  }
};

describe('signed links', () => {
  const expiresAt = new Date(Date.now() + 3_600_000);
  const url = signUrl('http://localhost:3000/', path, org, expiresAt, { key });

  it('names the organization and expiry, and verifies for the same method and path', () => {
    expect(url.startsWith(`http://localhost:3000${path}?org=${org}&expires=`)).toBe(true);
    const verified = verifySignedUrl('GET', path, queryOf(url), { key });
    expect(verified.organizationId).toBe(org);
    expect(verified.expiresAt.getTime()).toBe(Math.floor(expiresAt.getTime() / 1000) * 1000);
  });

  it('refuses any alteration with 403 INVALID_SIGNATURE', () => {
    const q = queryOf(url);
    const flipped = q.signature!.slice(0, -2) + (q.signature!.endsWith('AA') ? 'BA' : 'AA');
    expect(codeOf(() => verifySignedUrl('GET', path, { ...q, signature: flipped }, { key }))).toBe('403 INVALID_SIGNATURE');
    expect(codeOf(() => verifySignedUrl('GET', path, { ...q, org: '00000000-0000-4000-8000-000000000000' }, { key }))).toBe(
      '403 INVALID_SIGNATURE',
    );
    expect(codeOf(() => verifySignedUrl('GET', path, { ...q, expires: String(Number(q.expires) + 3600) }, { key }))).toBe(
      '403 INVALID_SIGNATURE',
    );
    expect(codeOf(() => verifySignedUrl('GET', path.replace('0b6f', '1b6f'), q, { key }))).toBe('403 INVALID_SIGNATURE');
    expect(codeOf(() => verifySignedUrl('DELETE', path, q, { key }))).toBe('403 INVALID_SIGNATURE');
    expect(codeOf(() => verifySignedUrl('GET', path, q, { key: randomBytes(32) }))).toBe('403 INVALID_SIGNATURE');
    expect(codeOf(() => verifySignedUrl('GET', path, { org: q.org, expires: q.expires }, { key }))).toBe('403 INVALID_SIGNATURE');
    expect(codeOf(() => verifySignedUrl('GET', path, { ...q, signature: [q.signature, q.signature] }, { key }))).toBe(
      '403 INVALID_SIGNATURE',
    );
  });

  it('answers an authentic link past its expiry with 404 LINK_EXPIRED', () => {
    expect(codeOf(() => verifySignedUrl('GET', path, queryOf(url), { key, now: new Date(expiresAt.getTime() + 1000) }))).toBe(
      '404 LINK_EXPIRED',
    );
  });
});
