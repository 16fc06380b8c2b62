// Small things a newcomer meets in the first hour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createApp } from '../src/app.ts';
import { createHttpServer } from '../src/http/http-server.ts';
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

  it('request logs carry query parameter names, never their values (a search can be a phone number)', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { express } = await createApp({ ...srv.context, log });
    const server = createHttpServer(express);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    await fetch(`http://127.0.0.1:${port}/v1/contacts?search=%2B14155550123&limit=5`);
    await new Promise<void>((r) => server.close(() => r()));
    const text = lines.join('');
    expect(text).toContain('/v1/contacts?search=…&limit=…');
    expect(text).not.toContain('14155550123');
  });

  it('a local webhook receiver is refused with the setting that allows it in development', async () => {
    const { apiKey } = await srv.newOrg('Newcomer org');
    const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: apiKey.secret,
      body: { url: 'https://127.0.0.1:3001/hooks', events: ['message.delivered'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toMatchObject({ field: 'body.url', message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=1') });
  });
});
