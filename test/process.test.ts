// The server and the admin CLI as processes, the way users run them: configuration errors, graceful
// shutdown, and the CLI's one-JSON-object output against the same database.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server.ts';
import { startServing } from './support/processes.ts';

const run = promisify(execFile);
const env = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'test', LOG_LEVEL: 'info', RUN_WORKERS: '0' });

describe('server process', () => {
  it('refuses a bad configuration with a clear message and exit code 2', async () => {
    const err = await run(process.execPath, ['src/main.js'], { env: { ...env(), PORT: 'eighty' } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toContain('PORT must be an integer');
  });

  it('serves, then shuts down gracefully on SIGTERM with exit code 0', async () => {
    const { child, port, log: output } = await startServing(process.execPath, ['src/main.js'], { ...env(), PORT: '0' });
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
  });
});

describe('server process shutdown with a slow client', () => {
  it('closes a connection still sending its body after the grace period, then closes the runtime and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['src/cli/admin.ts', 'create-org', '--name', 'Slow client org'], { env: env() });
    const secret = JSON.parse(stdout).apiKey.secret as string;
    const {
      child,
      port,
      log: output,
    } = await startServing(process.execPath, ['src/main.js'], { ...env(), PORT: '0', SHUTDOWN_GRACE_SECONDS: '1' });
    // An authenticated request whose body arrives one byte at a time, for longer than the grace period.
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(
      `POST /v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    const drip = setInterval(() => socket.write(' '), 200);
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    const code = await exited;
    clearInterval(drip);
    socket.destroy();
    expect(code).toBe(0);
    expect(output()).toContain('grace period over');
    expect(output()).toContain('"msg":"stopped"');
  });
});

describe('admin CLI', () => {
  const admin = (...args: string[]) => run(process.execPath, ['src/cli/admin.ts', ...args], { env: env() });

  it('create-org prints the organization, a full-scope key and an active sandbox sender', async () => {
    const { stdout } = await admin('create-org', '--name', 'CLI org');
    const out = JSON.parse(stdout);
    expect(out).toEqual({
      organizationId: expect.any(String),
      apiKey: { id: expect.any(String), secret: expect.stringMatching(/^msk_/) },
      senderId: expect.any(String),
    });

    const { stdout: keyOut } = await admin(
      'create-key',
      '--org',
      out.organizationId,
      '--name',
      'ci',
      '--scopes',
      'api-keys:read,contacts:read',
    );
    const key = JSON.parse(keyOut);
    expect(key).toEqual({ id: expect.any(String), secret: expect.stringMatching(/^msk_/), scopes: ['api-keys:read', 'contacts:read'] });
  });

  it('rejects unknown scopes and missing options with usage and exit code 2', async () => {
    const bad = await admin('create-key', '--org', '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b', '--name', 'x', '--scopes', 'nope:read').catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toContain('unknown scopes: nope:read');
    // The error lists what is valid, so a mistyped scope (messages:create for messages:send) is fixed at once.
    expect((bad as { stderr: string }).stderr).toMatch(/valid scopes: .*\bmessages:send\b.*\(or all\)/);
    const missing = await admin('create-org').catch((e: { code: number; stderr: string }) => e);
    expect((missing as { code: number }).code).toBe(2);
    expect((missing as { stderr: string }).stderr).toContain('--name is required');
  });
});

describe('admin CLI simulate-inbound', () => {
  // The CLI enqueues into this schema, which this file's workers take from (and no other file's).
  const CLI_QUEUE_SCHEMA = 'pgboss_process_cli';
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ workers: true, queueSchema: CLI_QUEUE_SCHEMA });
  });
  afterAll(() => srv.close());

  it('delivers an inbound message to the organization’s sandbox sender through a running server', async () => {
    const org = await srv.newOrg('Inbound CLI org');
    const { stdout } = await run(
      process.execPath,
      ['src/cli/admin.ts', 'simulate-inbound', '--org', org.organizationId, '--from', '+14155550142', '--text', 'Hello there'],
      { env: { ...env(), QUEUE_SCHEMA: CLI_QUEUE_SCHEMA } },
    );
    expect(JSON.parse(stdout)).toMatchObject({ providerMessageId: expect.any(String), from: '+14155550142' });
    const deadline = Date.now() + 15_000;
    let row;
    while (!row && Date.now() < deadline) {
      row = await srv.context.db
        .selectFrom('messages')
        .select(['direction', 'status', 'content'])
        .where('organization_id', '=', org.organizationId)
        .executeTakeFirst();
      if (!row) await new Promise((r) => setTimeout(r, 50));
    }
    expect(row).toMatchObject({ direction: 'inbound', status: 'received', content: { type: 'text', text: 'Hello there' } });
  });
});
