// Unknown API key prefixes are cached like known ones (so response times do not reveal which prefixes are live),
// and that cache never refuses a key created afterwards: creation and rotation notify every API process of the
// new prefix. Prefixes are random, so the test plans the next one (generateSecret is wrapped to hand it out).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as SecretModule from '../src/auth/api-key-secret.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

const planned: string[] = [];
vi.mock('../src/auth/api-key-secret.ts', async (importOriginal) => {
  const real = await importOriginal<typeof SecretModule>();
  return {
    ...real,
    generateSecret: () => {
      const prefix = planned.shift();
      if (!prefix) return real.generateSecret();
      const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
      return { secret, prefix, hash: real.hashSecret(secret) };
    },
  };
});

let a: TestServer;
let b: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  owner = await a.newOrg('Prefix cache org');
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const freshPrefix = () => `msk_${randomBytes(8).toString('hex').slice(0, 8)}`;
const probe = (prefix: string) => `${prefix}_${'A'.repeat(43)}`;

async function until(srv: TestServer, secret: string, status: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline) {
    if ((await call(srv, 'GET', '/v1/api-keys', { key: secret })).status === status) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`still not ${status} after 2 s`);
}

/**
 * Calls `srv` with `secret` until it answers `status` and its cache holds the prefix. A notification of the key's
 * own creation or revocation may reach `srv` just after its first lookup and rightly evict that entry, so one call
 * is not enough to observe the cached row; the next lookup after the notification caches it for good.
 */
async function cachedAfter(srv: TestServer, secret: string, status: number) {
  const prefix = secret.slice(0, 12);
  const deadline = Date.now() + 2000;
  let last;
  while (Date.now() < deadline) {
    last = await call(srv, 'GET', '/v1/api-keys', { key: secret });
    expect(last.status).toBe(status);
    const cached = srv.context.apiKeyCache?.get(prefix);
    if (cached !== undefined) return { res: last, cached };
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${prefix} still not cached after 2 s`);
}

describe('API key prefix cache', () => {
  it('caches an unknown prefix, a live key and a revoked key alike', async () => {
    const unknown = freshPrefix();
    expect((await call(b, 'GET', '/v1/api-keys', { key: probe(unknown) })).status).toBe(401);
    expect(b.context.apiKeyCache?.get(unknown)).toBeNull();

    const live = await a.newKey(owner.organizationId, ['api-keys:read']);
    expect((await cachedAfter(b, live.secret, 200)).cached).toMatchObject({ id: live.id });

    const revoked = await a.newKey(owner.organizationId, ['api-keys:read']);
    expect((await call(a, 'DELETE', `/v1/api-keys/${revoked.id}`, { key: owner.apiKey.secret })).status).toBe(200);
    const { res, cached } = await cachedAfter(b, revoked.secret, 401);
    expect(res.body.message).toMatch(/revoked/);
    expect(cached).toMatchObject({ id: revoked.id, revoked_at: expect.any(Date) });
  });

  it('a key created after its prefix was looked up and missed works at once, on this process and the other', async () => {
    const prefix = freshPrefix();
    expect((await call(a, 'GET', '/v1/api-keys', { key: probe(prefix) })).status).toBe(401);
    expect((await call(b, 'GET', '/v1/api-keys', { key: probe(prefix) })).status).toBe(401);
    expect(a.context.apiKeyCache?.get(prefix)).toBeNull();
    expect(b.context.apiKeyCache?.get(prefix)).toBeNull();

    planned.push(prefix);
    const created = await call(a, 'POST', '/v1/api-keys', {
      key: owner.apiKey.secret,
      body: { name: 'planned', scopes: ['api-keys:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.prefix).toBe(prefix);
    expect((await call(a, 'GET', '/v1/api-keys', { key: created.body.data.secret })).status).toBe(200); // no waiting
    await until(b, created.body.data.secret, 200); // as soon as the notification arrives
  });

  it('a rotated key works at once under a new prefix that had been looked up and missed', async () => {
    const key = await a.newKey(owner.organizationId, ['api-keys:read']);
    const prefix = freshPrefix();
    expect((await call(a, 'GET', '/v1/api-keys', { key: probe(prefix) })).status).toBe(401);
    expect((await call(b, 'GET', '/v1/api-keys', { key: probe(prefix) })).status).toBe(401);

    planned.push(prefix);
    const rotated = await call(a, 'POST', `/v1/api-keys/${key.id}/rotate`, { key: owner.apiKey.secret });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.prefix).toBe(prefix);
    expect((await call(a, 'GET', '/v1/api-keys', { key: rotated.body.data.secret })).status).toBe(200);
    await until(b, rotated.body.data.secret, 200);
    await until(b, key.secret, 401);
  });

  it('a key created outside the API (admin CLI path) is not refused by a cached miss either', async () => {
    const prefix = freshPrefix();
    expect((await call(b, 'GET', '/v1/api-keys', { key: probe(prefix) })).status).toBe(401);
    planned.push(prefix);
    const key = await a.newKey(owner.organizationId, ['api-keys:read']); // createApiKeyFor → insertApiKey, no handler
    expect(key.secret.startsWith(`${prefix}_`)).toBe(true);
    await until(b, key.secret, 200);
  });
});
