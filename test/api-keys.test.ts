// API Keys section through HTTP: listApiKeys, createApiKey, revokeApiKey, rotateApiKey, and the
// authentication rules every operation relies on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  owner = await srv.newOrg('Keys org');
});
afterAll(() => srv.close());

const KEY = { name: 'CRM integration', scopes: ['api-keys:read', 'contacts:read'] };

describe('createApiKey', () => {
  it('returns the secret once, with a recognizable prefix, and stores only a hash', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: KEY });
    expect(res.status).toBe(201);
    const key = res.body.data;
    expect(key.secret).toMatch(/^msk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(key.secret.startsWith(`${key.prefix}_`)).toBe(true);
    expect(key).toMatchObject({ name: KEY.name, scopes: KEY.scopes, status: 'active', expiresAt: null, revokedAt: null });

    const row = await srv.context.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key.secret.slice(key.secret.indexOf('_', 4) + 1)); // the whole secret part (base64url may itself hold '_')
    expect(row.secret_hash).toHaveLength(32);

    const list = await call(srv, 'GET', '/v1/api-keys', { key: owner.apiKey.secret });
    expect(list.text).not.toContain(key.secret);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(key.id);
  });

  it('authenticates with the new secret', async () => {
    const created = await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: KEY });
    const res = await call(srv, 'GET', '/v1/api-keys', { key: created.body.data.secret });
    expect(res.status).toBe(200);
    const self = res.body.data.find((k: { id: string }) => k.id === created.body.data.id);
    expect(self.lastUsedAt).not.toBeNull();
  });

  it('keeps an expiry in the future and rejects one in the past', async () => {
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const ok = await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: { ...KEY, expiresAt: future } });
    expect(ok.status).toBe(201);
    expect(new Date(ok.body.data.expiresAt).toISOString()).toBe(future);

    const past = await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: { ...KEY, expiresAt: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect(past.body.details).toEqual([expect.objectContaining({ field: 'body.expiresAt' })]);
  });

  it('names each failing field', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: { scopes: ['not a scope'], extra: true } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const fields = res.body.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.name', 'body.scopes.0', 'body.extra']));
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('cannot grant a scope the calling key lacks', async () => {
    const limited = await srv.newKey(owner.organizationId, ['api-keys:create']);
    const res = await call(srv, 'POST', '/v1/api-keys', { key: limited.secret, body: { name: 'x', scopes: ['contacts:read'] } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});

describe('authentication', () => {
  const cases: Array<[string, string | undefined]> = [
    ['missing', undefined],
    ['not bearer', 'Basic dXNlcjpwYXNz'],
    ['malformed', 'Bearer nope'],
    ['unknown', 'Bearer msk_abcdefgh_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ];
  for (const [name, header] of cases) {
    it(`answers 401 for a ${name} credential`, async () => {
      const res = await call(srv, 'GET', '/v1/api-keys', { headers: header ? { authorization: header } : {} });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'UNAUTHENTICATED', requestId: expect.any(String) });
    });
  }

  it('answers 401 for a right prefix with a wrong secret', async () => {
    const prefix = owner.apiKey.secret.slice(0, 12);
    const res = await call(srv, 'GET', '/v1/api-keys', { key: `${prefix}_${'B'.repeat(43)}` });
    expect(res.status).toBe(401);
  });

  it('answers 401 for an expired key', async () => {
    const key = await srv.newKey(owner.organizationId, ['api-keys:read'], new Date(Date.now() - 1000));
    const res = await call(srv, 'GET', '/v1/api-keys', { key: key.secret });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/expired/);
  });

  it('answers 403 when the scope is missing, before validating the request', async () => {
    const key = await srv.newKey(owner.organizationId, ['contacts:read']);
    const res = await call(srv, 'GET', '/v1/api-keys?limit=100000', { key: key.secret });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(res.body.message).toContain('api-keys:read');
  });
});

describe('revokeApiKey', () => {
  it('stops the secret at once and stays listed as revoked; repeating is harmless', async () => {
    const created = (await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: KEY })).body.data;
    expect((await call(srv, 'GET', '/v1/api-keys', { key: created.secret })).status).toBe(200);

    const res = await call(srv, 'DELETE', `/v1/api-keys/${created.id}`, { key: owner.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: created.id, status: 'revoked', revokedAt: expect.any(String) });
    expect(res.text).not.toContain(created.secret);

    const after = await call(srv, 'GET', '/v1/api-keys', { key: created.secret });
    expect(after.status).toBe(401);
    expect(after.body.message).toMatch(/revoked/);

    const again = await call(srv, 'DELETE', `/v1/api-keys/${created.id}`, { key: owner.apiKey.secret });
    expect(again.status).toBe(200);
    expect(again.body.data.revokedAt).toBe(res.body.data.revokedAt);
  });
});

describe('rotateApiKey', () => {
  it('keeps id, name, scopes and expiry; issues a new secret and prefix; the old secret stops at once', async () => {
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const created = (await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: { ...KEY, expiresAt } })).body.data;

    const res = await call(srv, 'POST', `/v1/api-keys/${created.id}/rotate`, { key: owner.apiKey.secret });
    expect(res.status).toBe(200);
    const rotated = res.body.data;
    expect(rotated).toMatchObject({ id: created.id, name: created.name, scopes: created.scopes, expiresAt: created.expiresAt });
    expect(rotated.prefix).not.toBe(created.prefix);
    expect(rotated.secret).not.toBe(created.secret);

    expect((await call(srv, 'GET', '/v1/api-keys', { key: created.secret })).status).toBe(401);
    expect((await call(srv, 'GET', '/v1/api-keys', { key: rotated.secret })).status).toBe(200);
  });

  it('refuses a revoked key with 409', async () => {
    const created = (await call(srv, 'POST', '/v1/api-keys', { key: owner.apiKey.secret, body: KEY })).body.data;
    await call(srv, 'DELETE', `/v1/api-keys/${created.id}`, { key: owner.apiKey.secret });
    const res = await call(srv, 'POST', `/v1/api-keys/${created.id}/rotate`, { key: owner.apiKey.secret });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('INVALID_STATE');
  });
});

describe('privileges of the calling key (rotate and revoke follow the same rule as create)', () => {
  const ALL = () => owner.apiKey.secret;

  it('a key with only api-keys:update cannot rotate a key holding more (403); the target is unchanged', async () => {
    const admin = await srv.newKey(owner.organizationId, ['api-keys:read', 'role:platform_admin', 'role:brand_admin']);
    const updater = await srv.newKey(owner.organizationId, ['api-keys:update']);
    const before = (await call(srv, 'GET', '/v1/api-keys?limit=100', { key: ALL() })).body.data.find(
      (k: { id: string }) => k.id === admin.id,
    );

    const res = await call(srv, 'POST', `/v1/api-keys/${admin.id}/rotate`, { key: updater.secret });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(res.body.message).toContain('role:platform_admin');
    expect(res.text).not.toMatch(/msk_[a-z0-9]{8}_/);

    const after = (await call(srv, 'GET', '/v1/api-keys?limit=100', { key: ALL() })).body.data.find(
      (k: { id: string }) => k.id === admin.id,
    );
    expect(after.prefix).toBe(before.prefix);
    expect((await call(srv, 'GET', '/v1/api-keys', { key: admin.secret })).status).toBe(200); // old secret still works
  });

  it('a key with only api-keys:delete cannot revoke a brand admin key (403); the target stays active', async () => {
    const brandAdmin = await srv.newKey(owner.organizationId, ['api-keys:read', 'role:brand_admin']);
    const deleter = await srv.newKey(owner.organizationId, ['api-keys:delete']);
    const res = await call(srv, 'DELETE', `/v1/api-keys/${brandAdmin.id}`, { key: deleter.secret });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(res.body.message).toContain('role:brand_admin');
    expect((await call(srv, 'GET', '/v1/api-keys', { key: brandAdmin.secret })).status).toBe(200);
    const row = await srv.context.db.selectFrom('api_keys').select('revoked_at').where('id', '=', brandAdmin.id).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeNull();
  });

  it('rotates and revokes a key whose scopes the caller holds, itself included', async () => {
    const manager = await srv.newKey(owner.organizationId, ['api-keys:read', 'api-keys:update', 'api-keys:delete', 'contacts:read']);
    const reader = await srv.newKey(owner.organizationId, ['contacts:read']);
    const rotated = await call(srv, 'POST', `/v1/api-keys/${reader.id}/rotate`, { key: manager.secret });
    expect(rotated.status).toBe(200);
    expect((await call(srv, 'DELETE', `/v1/api-keys/${reader.id}`, { key: manager.secret })).status).toBe(200);
    const self = await call(srv, 'POST', `/v1/api-keys/${manager.id}/rotate`, { key: manager.secret });
    expect(self.status).toBe(200);
    expect((await call(srv, 'GET', '/v1/api-keys', { key: self.body.data.secret })).status).toBe(200);
  });

  it("answers 404, not 403, for another organization's key even when it holds more than the caller", async () => {
    const other = await srv.newOrg('Privileged other org');
    const weak = await srv.newKey(owner.organizationId, ['api-keys:update', 'api-keys:delete']);
    expect((await call(srv, 'POST', `/v1/api-keys/${other.apiKey.id}/rotate`, { key: weak.secret })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/api-keys/${other.apiKey.id}`, { key: weak.secret })).status).toBe(404);
    expect((await call(srv, 'GET', '/v1/api-keys', { key: other.apiKey.secret })).status).toBe(200);
  });

  it('checks the privilege before the state: a revoked admin key answers 403 to a weaker key, 409 to a stronger one', async () => {
    const admin = await srv.newKey(owner.organizationId, ['role:platform_admin']);
    await call(srv, 'DELETE', `/v1/api-keys/${admin.id}`, { key: ALL() });
    const updater = await srv.newKey(owner.organizationId, ['api-keys:update']);
    expect((await call(srv, 'POST', `/v1/api-keys/${admin.id}/rotate`, { key: updater.secret })).status).toBe(403);
    expect((await call(srv, 'POST', `/v1/api-keys/${admin.id}/rotate`, { key: ALL() })).status).toBe(409);
  });
});

describe('listApiKeys', () => {
  it('paginates newest first with the documented shape', async () => {
    const org = await srv.newOrg('Paging org');
    for (let i = 0; i < 3; i++) await srv.newKey(org.organizationId, ['api-keys:read']);
    const page1 = await call(srv, 'GET', '/v1/api-keys?limit=2', { key: org.apiKey.secret });
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 4, hasMore: true });
    const page2 = await call(srv, 'GET', '/v1/api-keys?limit=2&page=2', { key: org.apiKey.secret });
    expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 4, hasMore: false });
    const all = [...page1.body.data, ...page2.body.data];
    const created = all.map((k: { createdAt: string }) => k.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    const beyond = await call(srv, 'GET', '/v1/api-keys?limit=2&page=9', { key: org.apiKey.secret });
    expect(beyond.body).toEqual({ data: [], pagination: { page: 9, limit: 2, total: 4, hasMore: false } });
  });

  it('rejects a limit above the maximum', async () => {
    const res = await call(srv, 'GET', '/v1/api-keys?limit=101', { key: owner.apiKey.secret });
    expect(res.status).toBe(400);
    expect(res.body.details[0].field).toBe('query.limit');
  });
});

describe('tenant isolation', () => {
  it("never shows, revokes or rotates another organization's key", async () => {
    const other = await srv.newOrg('Other org');
    const theirs = await srv.newKey(other.organizationId, ['api-keys:read']);

    const list = await call(srv, 'GET', '/v1/api-keys?limit=100', { key: owner.apiKey.secret });
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(theirs.id);

    const revoke = await call(srv, 'DELETE', `/v1/api-keys/${theirs.id}`, { key: owner.apiKey.secret });
    expect(revoke.status).toBe(404);
    expect(revoke.body.code).toBe('NOT_FOUND');
    const rotate = await call(srv, 'POST', `/v1/api-keys/${theirs.id}/rotate`, { key: owner.apiKey.secret });
    expect(rotate.status).toBe(404);

    expect((await call(srv, 'GET', '/v1/api-keys', { key: theirs.secret })).status).toBe(200);
  });
});
