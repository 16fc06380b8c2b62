// Small things a newcomer meets in the first hour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

describe('first hour', () => {
  it('GET / points to the reference documentation', async () => {
    const res = await fetch(`${srv.baseUrl}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/docs');
  });

  it('the docs load nothing from a CDN', async () => {
    const page = await (await fetch(`${srv.baseUrl}/docs`)).text();
    const bundle = await (await fetch(`${srv.baseUrl}/docs/redoc.standalone.js`)).text();
    expect(page).not.toMatch(/https?:\/\//);
    expect(bundle).not.toContain('cdn.redoc.ly');
  });

  it('a local webhook receiver is refused with the setting that allows it in development', async () => {
    const { apiKey } = await srv.newOrg('Newcomer org');
    const res = await call(srv, 'POST', '/v1/webhook-endpoints', { key: apiKey.secret, body: { url: 'https://127.0.0.1:3001/hooks', events: ['message.delivered'] } });
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toMatchObject({ field: 'body.url', message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=1') });
  });
});
