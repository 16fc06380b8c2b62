// What an operator meets: one-line start-up failures with the fix, 503 (not 401) while the database is away,
// and SIGTERM to `npm start` stopping the server itself.
import { execFile } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { startServing } from './support/processes.ts';

const run = promisify(execFile);
const env = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'test', LOG_LEVEL: 'info', RUN_WORKERS: '0' });

function listenOn(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((s) => s.destroy());
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

async function startFailure(extraEnv: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const err = await run(process.execPath, ['src/main.js'], { env: { ...env(), ...extraEnv }, timeout: 30_000 }).catch(
    (e: { code: number; stderr: string }) => e,
  );
  return err as { code: number; stderr: string };
}

describe('start-up failures are one line with the fix', () => {
  it('the HTTP port in use', async () => {
    const busy = await listenOn();
    const { code, stderr } = await startFailure({ PORT: String(busy.port), HOST: '127.0.0.1' });
    busy.server.close();
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot start: port ${busy.port} is already in use`);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('the embedded database’s port in use', async () => {
    const busy = await listenOn();
    const dataDir = mkdtempSync(join(tmpdir(), 'msa-busy-pg-'));
    try {
      const { DATABASE_URL: _unused, ...noDatabaseUrl } = env();
      const err = await run(process.execPath, ['src/main.js'], {
        env: { ...noDatabaseUrl, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(busy.port), PORT: '0' },
        timeout: 60_000,
      }).catch((e: { code: number; stderr: string }) => e);
      expect((err as { code: number }).code).toBe(1);
      expect((err as { stderr: string }).stderr).toContain(`Port ${busy.port} (EMBEDDED_PG_PORT) is already in use`);
    } finally {
      busy.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it.skipIf(process.getuid?.() !== 0)(
    'as root, a DATA_DIR the database’s own user cannot enter',
    async () => {
      const parent = mkdtempSync(join(tmpdir(), 'msa-private-')); // 0700, owned by root
      try {
        const { DATABASE_URL: _unused, ...noDatabaseUrl } = env();
        const err = await run(process.execPath, ['src/main.js'], {
          env: { ...noDatabaseUrl, DATA_DIR: join(parent, 'data'), PORT: '0' },
          timeout: 60_000,
        }).catch((e: { code: number; stderr: string }) => e);
        expect((err as { code: number }).code).toBe(1);
        expect((err as { stderr: string }).stderr).toMatch(
          /cannot start: The embedded PostgreSQL cannot use .*permission denied\. Running as root/,
        );
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    },
    90_000,
  );

  it('an unreachable DATABASE_URL', async () => {
    const closed = await listenOn();
    closed.server.close(); // a port nobody listens on
    const { code, stderr } = await startFailure({ DATABASE_URL: `postgres://app:secret@127.0.0.1:${closed.port}/app`, PORT: '0' });
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot connect to PostgreSQL at 127.0.0.1:${closed.port}/app (DATABASE_URL)`);
    expect(stderr).toContain('Unset DATABASE_URL to use the embedded server');
    expect(stderr).not.toContain('secret');
  });
});

describe('while the database is away', () => {
  // A TCP proxy in front of the test database that can be cut, as a failover or a restart would.
  let proxy: Server;
  let proxyPort: number;
  let up = true;
  const sockets = new Set<Socket>();
  let srv: TestServer;

  beforeAll(async () => {
    const target = new URL(inject('databaseUrl'));
    proxy = createServer((client) => {
      if (!up) return void client.destroy();
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    proxyPort = (proxy.address() as { port: number }).port;
    const url = new URL(inject('databaseUrl'));
    url.port = String(proxyPort);
    srv = await startTestServer({ databaseUrl: url.toString() });
  });
  afterAll(async () => {
    up = true;
    await srv.close().catch(() => {});
    proxy.close();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After to a valid key, then recovers', async () => {
    const { apiKey } = await srv.newOrg('Outage org');
    expect((await call(srv, 'GET', '/v1/api-keys', { key: apiKey.secret })).status).toBe(200);
    up = false;
    for (const s of sockets) s.destroy();
    const during = await call(srv, 'GET', '/v1/api-keys', { key: apiKey.secret });
    expect(during.status).toBe(503);
    expect(during.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(during.headers.get('retry-after')).toBe('5');
    up = true;
    let after = await call(srv, 'GET', '/v1/api-keys', { key: apiKey.secret });
    for (let i = 0; i < 20 && after.status !== 200; i++) after = await call(srv, 'GET', '/v1/api-keys', { key: apiKey.secret });
    expect(after.status).toBe(200);
  });
});

describe('npm start', () => {
  it('stops the server itself on SIGTERM (no node process left serving)', async () => {
    const { child, port, log: output } = await startServing('npm', ['start'], { ...env(), PORT: '0' });
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exited;
    const deadline = Date.now() + 10_000;
    let stillServing = true;
    while (stillServing && Date.now() < deadline) {
      stillServing = await fetch(`http://127.0.0.1:${port}/health`).then(
        () => true,
        () => false,
      );
      if (stillServing) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stillServing).toBe(false);
    expect(output()).toContain('"msg":"stopped"');
  }, 60_000);
});
