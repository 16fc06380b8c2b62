// Webhooks section through HTTP, on a server WITHOUT WEBHOOK_ALLOW_PRIVATE: endpoint CRUD, the secret shown
// once, destination rules (scheme, credentials, SSRF at creation and at connect time), enabling and disabling,
// and tenant walls. Host names resolve through an injected resolver so no test depends on real DNS or leaves
// the machine. Deliveries through the job queue are in webhooks-delivery.test.ts.
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setResolverForTests } from '../src/net/destination-guard.ts';
import { openSecret } from '../src/lib/secrets.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

// Names this file resolves; everything else (localhost included) goes to the system resolver.
const names = new Map<string, string[]>([
  ['hooks.example.com', ['93.184.216.34']],
  ['v6.example.com', ['2606:2800:220:1:248:1893:25c8:1946']],
  ['loopback.example.com', ['127.0.0.1']],
  ['private.example.com', ['10.1.2.3']],
  ['metadata.example.com', ['169.254.169.254']],
  ['mapped.example.com', ['::ffff:127.0.0.1']],
  ['mixed.example.com', ['93.184.216.34', '192.168.1.10']],
  ['rebind.example.com', ['93.184.216.34']],
]);
const family = (a: string) => (a.includes(':') ? 6 : 4);

beforeAll(async () => {
  setResolverForTests(async (host) => {
    const known = names.get(host);
    if (known) return known.map((address): LookupAddress => ({ address, family: family(address) }));
    if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  });
  srv = await startTestServer();
  owner = await srv.newOrg('Webhooks org');
  other = await srv.newOrg('Other webhooks org');
});
afterAll(async () => {
  setResolverForTests(null);
  await srv.close();
});

const ENDPOINT = { url: 'https://hooks.example.com/messaging/events', events: ['message.sent', 'message.delivered'], description: 'CRM' };

async function create(body: Record<string, unknown> = ENDPOINT, key = owner.apiKey.secret) {
  return call(srv, 'POST', '/v1/webhook-endpoints', { key, body });
}

describe('createWebhookEndpoint', () => {
  it('creates an active endpoint and returns its secret once', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    const ep = res.body.data;
    expect(ep).toMatchObject({
      url: ENDPOINT.url,
      events: ENDPOINT.events,
      description: 'CRM',
      isActive: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
    });
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(ep.secret.slice(6), 'base64')).toHaveLength(24);

    const list = await call(srv, 'GET', '/v1/webhook-endpoints', { key: owner.apiKey.secret });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(ep.id);
    expect(list.text).not.toContain(ep.secret.slice(6));
    expect(list.body.data.every((e: object) => !('secret' in e))).toBe(true);

    // At rest the secret is sealed (AES-256-GCM, `v1:` + base64(iv|tag|ciphertext)): the row holds neither the
    // secret nor its key bytes, and two endpoints never share a ciphertext.
    const row = await srv.context.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', ep.id).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(ep.secret);
    expect(stored).not.toContain(ep.secret.slice(6));
    expect(stored).not.toContain(Buffer.from(ep.secret.slice(6), 'base64').toString('hex'));
    expect(row.secret).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(row.secret.slice(3), 'base64').length).toBe(12 + 16 + ep.secret.length);
    expect(openSecret(row.secret)).toBe(ep.secret);

    const patched = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: owner.apiKey.secret, body: { description: 'x' } });
    expect(patched.status).toBe(200);
    expect(patched.text).not.toContain(ep.secret.slice(6));
  });

  it('gives every endpoint its own secret and lists newest first', async () => {
    const a = (await create()).body.data;
    const b = (await create()).body.data;
    expect(a.secret).not.toBe(b.secret);
    const ids = (await call(srv, 'GET', '/v1/webhook-endpoints', { key: owner.apiKey.secret })).body.data.map((e: { id: string }) => e.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
  });

  it('accepts a host whose addresses are all public (IPv6 too) and a public literal IP', async () => {
    for (const url of ['https://v6.example.com/h', 'https://93.184.216.34/h', 'https://[2606:2800:220:1:248:1893:25c8:1946]:8443/h']) {
      const res = await create({ url, events: ['message.read'] });
      expect(res.status, url).toBe(201);
    }
  });

  it('validates the body against the document', async () => {
    const res = await create({ url: ENDPOINT.url, events: [], extra: 1 });
    expect(res.status).toBe(400);
    const fields = res.body.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.events', 'body.extra']));
    const unknown = await create({ url: ENDPOINT.url, events: ['message.exploded'] });
    expect(unknown.status).toBe(400);
    const dup = await create({ url: ENDPOINT.url, events: ['message.sent', 'message.sent'] });
    expect(dup.status).toBe(400);
  });
});

describe('destination rules', () => {
  const refused: Array<[string, string]> = [
    ['plain http', 'http://hooks.example.com/h'],
    ['credentials in the URL', 'https://user:pass@hooks.example.com/h'],
    ['a user name alone', 'https://user@hooks.example.com/h'],
    ['IPv4 loopback', 'https://127.0.0.1/h'],
    ['another loopback address', 'https://127.8.9.10:8443/h'],
    ['localhost', 'https://localhost/h'],
    ['a subdomain of localhost', 'https://api.localhost/h'],
    ['10/8', 'https://10.0.0.1/h'],
    ['172.16/12', 'https://172.16.5.4/h'],
    ['192.168/16', 'https://192.168.0.1/h'],
    ['cloud metadata (link-local)', 'https://169.254.169.254/latest/meta-data'],
    ['carrier-grade NAT', 'https://100.64.0.1/h'],
    ['0.0.0.0', 'https://0.0.0.0/h'],
    ['a decimal spelling of loopback', 'https://2130706433/h'],
    ['multicast', 'https://224.0.0.1/h'],
    ['IPv6 loopback', 'https://[::1]/h'],
    ['IPv6 unspecified', 'https://[::]/h'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/h'],
    ['IPv4-mapped loopback, hex', 'https://[::ffff:7f00:1]/h'],
    ['IPv4-mapped public address', 'https://[::ffff:93.184.216.34]/h'],
    ['IPv4-compatible loopback', 'https://[::127.0.0.1]/h'],
    ['NAT64 of loopback', 'https://[64:ff9b::7f00:1]/h'],
    ['unique-local', 'https://[fd00::1]/h'],
    ['IPv6 link-local', 'https://[fe80::1]/h'],
    ['6to4 of a private address', 'https://[2002:a00:1::1]/h'],
    ['a name resolving to loopback', 'https://loopback.example.com/h'],
    ['a name resolving to 10/8', 'https://private.example.com/h'],
    ['a name resolving to the metadata address', 'https://metadata.example.com/h'],
    ['a name resolving to IPv4-mapped loopback', 'https://mapped.example.com/h'],
    ['a name with one private address among public ones', 'https://mixed.example.com/h'],
    ['a name that does not resolve', 'https://nowhere.invalid/h'],
  ];
  for (const [what, url] of refused) {
    it(`refuses ${what}`, async () => {
      const res = await create({ url, events: ['message.sent'] });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.url' })]);
      expect(res.body.details[0].message).toMatch(/^url (must|destination|host)/); // our rule, not the schema's pattern
    });
  }

  it('applies the same rules to a new url on PATCH', async () => {
    const ep = (await create()).body.data;
    for (const url of ['https://10.0.0.1/h', 'http://hooks.example.com/h', 'https://[::ffff:7f00:1]/h']) {
      const res = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: owner.apiKey.secret, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.url' })]);
    }
    const ok = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
      key: owner.apiKey.secret,
      body: { url: 'https://v6.example.com/new' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.url).toBe('https://v6.example.com/new');
  });

  it('checks the addresses again when a delivery connects (DNS rebinding)', async () => {
    const ep = (await create({ url: 'https://rebind.example.com/h', events: ['message.sent'] })).body.data;
    for (const answer of [['127.0.0.1'], ['93.184.216.34', '10.0.0.7'], ['::ffff:169.254.169.254']]) {
      names.set('rebind.example.com', answer);
      const res = await call(srv, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: owner.apiKey.secret });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        success: false,
        statusCode: null,
        durationMs: null,
        error: 'destination resolves to a non-public address',
        test: true,
        nextRetryAt: null,
      });
    }
    names.set('rebind.example.com', ['93.184.216.34']);
    const log = await call(srv, 'GET', `/v1/webhook-endpoints/${ep.id}/deliveries`, { key: owner.apiKey.secret });
    expect(log.body.pagination.total).toBe(3);
  });
});

describe('updateWebhookEndpoint', () => {
  it('replaces events, changes or clears the description', async () => {
    const ep = (await create()).body.data;
    const res = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
      key: owner.apiKey.secret,
      body: { events: ['message.received'], description: null },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ events: ['message.received'], description: null, url: ENDPOINT.url });
    expect(new Date(res.body.data.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(ep.updatedAt).getTime());
  });

  it('disables by hand, treats the same value as a no-op, and re-enables with a reset streak', async () => {
    const ep = (await create()).body.data;
    const path = `/v1/webhook-endpoints/${ep.id}`;
    const key = owner.apiKey.secret;

    const off = await call(srv, 'PATCH', path, { key, body: { isActive: false } });
    expect(off.body.data).toMatchObject({ isActive: false, disabledReason: 'manual' });
    expect(off.body.data.disabledAt).not.toBeNull();

    const again = await call(srv, 'PATCH', path, { key, body: { isActive: false } });
    expect(again.body.data).toEqual(off.body.data);

    await srv.context.db.updateTable('webhook_endpoints').set({ consecutive_failures: 4 }).where('id', '=', ep.id).execute();
    const on = await call(srv, 'PATCH', path, { key, body: { isActive: true } });
    expect(on.body.data).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });

    await srv.context.db.updateTable('webhook_endpoints').set({ consecutive_failures: 2 }).where('id', '=', ep.id).execute();
    const noop = await call(srv, 'PATCH', path, { key, body: { isActive: true } });
    expect(noop.body.data.consecutiveFailures).toBe(2); // already active: nothing to re-enable
  });

  it('needs at least one field', async () => {
    const ep = (await create()).body.data;
    const res = await call(srv, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: owner.apiKey.secret, body: {} });
    expect(res.status).toBe(400);
  });
});

describe('deleteWebhookEndpoint', () => {
  it('deletes once, then answers 404 everywhere', async () => {
    const ep = (await create()).body.data;
    const path = `/v1/webhook-endpoints/${ep.id}`;
    const res = await call(srv, 'DELETE', path, { key: owner.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: ep.id, deleted: true });
    expect((await call(srv, 'DELETE', path, { key: owner.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', `${path}/deliveries`, { key: owner.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'POST', `${path}/test`, { key: owner.apiKey.secret })).status).toBe(404);
    const ids = (await call(srv, 'GET', '/v1/webhook-endpoints', { key: owner.apiKey.secret })).body.data.map((e: { id: string }) => e.id);
    expect(ids).not.toContain(ep.id);
  });
});

describe('tenant walls', () => {
  it("answers 404 for another organization's endpoint on every operation with an id", async () => {
    const ep = (await create()).body.data;
    const key = other.apiKey.secret;
    const path = `/v1/webhook-endpoints/${ep.id}`;
    const answers = [
      await call(srv, 'PATCH', path, { key, body: { isActive: false } }),
      await call(srv, 'PATCH', path, { key, body: { url: 'https://hooks.example.com/stolen' } }),
      await call(srv, 'POST', `${path}/test`, { key }),
      await call(srv, 'GET', `${path}/deliveries`, { key }),
      await call(srv, 'DELETE', path, { key }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    const list = await call(srv, 'GET', '/v1/webhook-endpoints', { key });
    expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(ep.id);
    const mine = await call(srv, 'GET', '/v1/webhook-endpoints', { key: owner.apiKey.secret });
    expect(mine.body.data.find((e: { id: string }) => e.id === ep.id)).toMatchObject({ isActive: true, url: ENDPOINT.url });
  });

  it('checks scopes', async () => {
    const reader = await srv.newKey(owner.organizationId, ['webhooks:read']);
    expect((await call(srv, 'GET', '/v1/webhook-endpoints', { key: reader.secret })).status).toBe(200);
    expect((await create(ENDPOINT, reader.secret)).status).toBe(403);
  });
});
