// Two API processes on one database (how users scale out): a key revoked or rotated through one stops
// working on the other, although the other has it cached; a cache that lost its LISTEN connection is bypassed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, startTestServer, type TestServer } from './support/server.ts';

let a: TestServer;
let b: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  owner = await a.newOrg('Two processes');
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

/** Waits until `b` answers 401 for the secret; returns how long that took. */
async function untilRejected(secret: string): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < 2000) {
    if ((await call(b, 'GET', '/v1/api-keys', { key: secret })).status === 401) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('still accepted after 2 s');
}

describe('API key cache across processes', () => {
  it('a revoke through one process stops the key on the other', async () => {
    const key = await a.newKey(owner.organizationId, ['api-keys:read']);
    expect((await call(b, 'GET', '/v1/api-keys', { key: key.secret })).status).toBe(200); // now cached in b
    expect(b.context.apiKeyCache?.get(key.secret.slice(0, 12))).toMatchObject({ id: key.id });

    expect((await call(a, 'DELETE', `/v1/api-keys/${key.id}`, { key: owner.apiKey.secret })).status).toBe(200);
    expect((await call(a, 'GET', '/v1/api-keys', { key: key.secret })).status).toBe(401); // same process: at once
    expect(await untilRejected(key.secret)).toBeLessThan(500);
  });

  it('a rotation through one process stops the old secret on the other', async () => {
    const key = await a.newKey(owner.organizationId, ['api-keys:read']);
    expect((await call(b, 'GET', '/v1/api-keys', { key: key.secret })).status).toBe(200);
    const rotated = await call(a, 'POST', `/v1/api-keys/${key.id}/rotate`, { key: owner.apiKey.secret });
    expect(rotated.status).toBe(200);
    expect(await untilRejected(key.secret)).toBeLessThan(500);
    expect((await call(b, 'GET', '/v1/api-keys', { key: rotated.body.data.secret })).status).toBe(200);
  });

  it('bypasses the cache while its LISTEN connection is down', async () => {
    const key = await a.newKey(owner.organizationId, ['api-keys:read']);
    expect((await call(b, 'GET', '/v1/api-keys', { key: key.secret })).status).toBe(200);
    // Cut b's listener, then revoke behind its back with plain SQL (no notification reaches b).
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'messaging-service-api:key-cache' and pid <> pg_backend_pid()`.execute(
      a.context.db,
    );
    const deadline = Date.now() + 2000;
    while (b.context.apiKeyCache?.active && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await a.context.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', key.id).execute();
    const res = await call(b, 'GET', '/v1/api-keys', { key: key.secret });
    expect(res.status).toBe(401);
    // The listeners reconnect on their own.
    const back = Date.now() + 5000;
    while (!(b.context.apiKeyCache?.active && a.context.apiKeyCache?.active) && Date.now() < back)
      await new Promise((r) => setTimeout(r, 20));
    expect(b.context.apiKeyCache?.active).toBe(true);
  });
});
