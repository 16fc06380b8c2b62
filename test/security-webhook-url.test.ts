// Webhook destinations must not carry user info, not even an empty one (`https://:@host/`, `https://@host/`),
// which the URL parser reports as an empty user name and password. Refused at creation and on PATCH with 400
// VALIDATION_ERROR naming body.url; the endpoint is left unchanged.
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setResolverForTests } from '../src/net/destination-guard.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  setResolverForTests(async (host) => {
    if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 } satisfies LookupAddress];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  });
  srv = await startTestServer();
  owner = await srv.newOrg('Webhook URL org');
});
afterAll(async () => {
  setResolverForTests(null);
  await srv.close();
});

const GOOD = 'https://hooks.example.com/h';
const WITH_USERINFO = [
  'https://:@hooks.example.com/h',
  'https://@hooks.example.com/h',
  'https://:pw@hooks.example.com/h',
  'https://user:pw@hooks.example.com/h',
  'https://user@hooks.example.com/h',
  'https:user@hooks.example.com/h',
  'https:\\\\user@hooks.example.com/h',
];

/** `https:user@…` and `https:\\user@…` already fail the schema's `^https?://` pattern; the others reach our rule. */
function expectUrlRefused(url: string, res: { status: number; body: any }) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('VALIDATION_ERROR');
  if (url.startsWith('https://')) {
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.url', message: expect.stringMatching(/credentials/) })]);
  } else {
    expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['body.url']));
  }
}

describe('webhook URLs with user info', () => {
  for (const url of WITH_USERINFO) {
    it(`refuses ${url} at creation`, async () => {
      expectUrlRefused(
        url,
        await call(srv, 'POST', '/v1/webhook-endpoints', { key: owner.apiKey.secret, body: { url, events: ['message.sent'] } }),
      );
    });
  }

  it('refuses them on PATCH and keeps the endpoint unchanged', async () => {
    const created = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: owner.apiKey.secret,
      body: { url: GOOD, events: ['message.sent'] },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    for (const url of WITH_USERINFO) {
      expectUrlRefused(url, await call(srv, 'PATCH', `/v1/webhook-endpoints/${id}`, { key: owner.apiKey.secret, body: { url } }));
    }
    const list = await call(srv, 'GET', '/v1/webhook-endpoints', { key: owner.apiKey.secret });
    expect(list.body.data.find((e: { id: string }) => e.id === id).url).toBe(GOOD);
  });

  it('still accepts an @ in the path, query or fragment', async () => {
    for (const url of ['https://hooks.example.com/a@b', 'https://hooks.example.com/h?to=a@b', 'https://hooks.example.com/h#@']) {
      const res = await call(srv, 'POST', '/v1/webhook-endpoints', { key: owner.apiKey.secret, body: { url, events: ['message.sent'] } });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });
});
