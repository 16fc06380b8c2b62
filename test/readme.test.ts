// The README's runnable parts stay true: its typed-client example is examples/typed-client.ts verbatim (which
// `npm run typecheck` compiles against generated/api.d.ts), and its webhook receiver, run as written, verifies a
// real delivery.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('shows examples/typed-client.ts verbatim', () => {
    const example = readFileSync(new URL('../examples/typed-client.ts', import.meta.url), 'utf8');
    expect(readme).toContain('```ts\n' + example + '```');
  });

  describe('webhook receiver snippet', () => {
    let srv: TestServer;
    let receiver: ChildProcess | undefined;
    // Inside the repository, so the snippet's imports (express, standardwebhooks) resolve as in a user's project.
    const file = new URL('./.readme-receiver.tmp.mjs', import.meta.url);
    beforeAll(async () => {
      srv = await startTestServer({ workers: true, config: { webhookAllowPrivate: true } });
    });
    afterAll(async () => {
      receiver?.kill();
      rmSync(file, { force: true });
      await srv.close();
    });

    it('runs as written and verifies a test delivery', async () => {
      const snippet = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(readme)?.[1];
      expect(snippet).toBeDefined();
      writeFileSync(file, snippet!);
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const { apiKey } = await srv.newOrg('Receiver org');
      const created = await call(srv, 'POST', '/v1/webhook-endpoints', {
        key: apiKey.secret,
        body: { url: `http://127.0.0.1:${port}/hooks`, events: ['message.delivered'] },
      });
      expect(created.status).toBe(201);
      receiver = spawn(process.execPath, [file.pathname], {
        env: { ...process.env, WEBHOOK_SECRET: created.body.data.secret, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('receiver did not start')), 15_000);
        receiver!.stdout!.on('data', (c: Buffer) => {
          if (c.toString().includes('receiving webhooks')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const test = await call(srv, 'POST', `/v1/webhook-endpoints/${created.body.data.id}/test`, { key: apiKey.secret });
      expect(test.status).toBeLessThan(300);
      // The receiver answers 204 only to a delivery whose signature it verified (400 otherwise).
      const deadline = Date.now() + 15_000;
      let attempt: { success: boolean; statusCode: number } | undefined;
      while (!attempt && Date.now() < deadline) {
        const log = await call(srv, 'GET', `/v1/webhook-endpoints/${created.body.data.id}/deliveries`, { key: apiKey.secret });
        attempt = log.body.data?.[0];
        if (!attempt) await new Promise((r) => setTimeout(r, 100));
      }
      expect(attempt).toMatchObject({ success: true, statusCode: 204 });
    }, 60_000);
  });
});
