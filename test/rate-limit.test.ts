// The request rate limit of an API key (src/http/rate-limit.ts), through HTTP: two servers on one database stand
// for two API processes, each with its own memory; the count is the key's, shared by both, over every
// authenticated call (HTTP operations and /mcp messages alike).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

const LIMIT = 5;
let a: TestServer;
let b: TestServer;
let quick: TestServer;

beforeAll(async () => {
  [a, b, quick] = await Promise.all([
    startTestServer({ config: { rateLimit: { perKey: LIMIT, windowSeconds: 60 } } }),
    startTestServer({ config: { rateLimit: { perKey: LIMIT, windowSeconds: 60 } } }),
    startTestServer({ config: { rateLimit: { perKey: 2, windowSeconds: 1 } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([a, b, quick].map((s) => s?.close()));
});

const limitHeaders = (res: { headers: Headers }) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: Number(res.headers.get('ratelimit-reset')),
});

describe('the request rate limit of an API key', () => {
  it('counts a key’s requests across processes, then answers 429 RATE_LIMITED with Retry-After on both', async () => {
    const org = await a.newOrg('Rate limited');
    const key = org.apiKey.secret;
    const served = [a, a, a, b, b];
    for (const [i, server] of served.entries()) {
      const res = await call(server, 'GET', '/v1/contacts', { key });
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect(limitHeaders(res)).toMatchObject({ limit: String(LIMIT), remaining: String(LIMIT - 1 - i) });
      expect(limitHeaders(res).reset).toBeGreaterThan(0);
      expect(limitHeaders(res).reset).toBeLessThanOrEqual(60);
    }
    for (const server of [a, b]) {
      const refused = await call(server, 'GET', '/v1/contacts', { key });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        code: 'RATE_LIMITED',
        message: expect.stringContaining(`at most ${LIMIT} per 60 s`),
        requestId: expect.any(String),
      });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limitHeaders(refused)).toMatchObject({ limit: String(LIMIT), remaining: '0' });
    }
    // Before the body is read, as the key and scopes are: a refused key's oversized body is 429, not 413.
    const big = await call(a, 'POST', '/v1/contacts', { key, body: { phone: '+14155550100', name: 'x'.repeat(2 * 1024 * 1024) } });
    expect(big.status).toBe(429);
    // Per key: another key of the organization, and calls without a key, are not affected.
    const other = await a.newKey(org.organizationId, ['contacts:read']);
    const otherRes = await call(a, 'GET', '/v1/contacts', { key: other.secret });
    expect(otherRes.status).toBe(200);
    expect(limitHeaders(otherRes).remaining).toBe(String(LIMIT - 1));
    const health = await call(a, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.headers.get('ratelimit-limit')).toBeNull();
  });

  it('counts every message of an /mcp batch, with the HTTP requests of the same key', async () => {
    const org = await a.newOrg('Rate limited MCP');
    const key = (await a.newKey(org.organizationId, ['contacts:read'])).secret;
    const mcp = (server: TestServer, messages: number) =>
      call(server, 'POST', '/mcp', {
        key,
        body: Array.from({ length: messages }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })),
        headers: { accept: 'application/json, text/event-stream' },
      });
    const three = await mcp(a, 3);
    expect(three.status).toBe(200);
    expect(limitHeaders(three).remaining).toBe('2');
    expect((await call(b, 'GET', '/v1/contacts', { key })).status).toBe(200);
    // One request left: a batch of two does not fit.
    const two = await mcp(b, 2);
    expect(two.status).toBe(429);
    expect(two.body.code).toBe('RATE_LIMITED');
    expect((await mcp(a, 1)).status).toBe(429);
    expect((await call(a, 'GET', '/v1/contacts', { key })).status).toBe(429);
  });

  it('gives the key its requests again when the window ends', async () => {
    const org = await quick.newOrg('Rate limited, short window');
    const key = org.apiKey.secret;
    let refused = undefined as Awaited<ReturnType<typeof call>> | undefined;
    // Two per second: the third request of a window is refused (a window may end between two requests).
    for (let i = 0; i < 6 && !refused; i++) {
      const res = await call(quick, 'GET', '/v1/contacts', { key });
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(200);
    }
    expect(refused?.headers.get('retry-after')).toBe('1');
    await new Promise((r) => setTimeout(r, 1100));
    const again = await call(quick, 'GET', '/v1/contacts', { key });
    expect(again.status).toBe(200);
    expect(limitHeaders(again).limit).toBe('2');
  });
});
