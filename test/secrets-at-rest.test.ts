// Secrets at rest (src/lib/secrets.ts): the sealed format, SECRETS_KEY validation, DATA_DIR/secrets.key (0600,
// created once, reused, atomic under concurrent starts), and the start-up pass that seals webhook secrets written
// in plain text before migration 0008 and refuses a key that does not open the stored ones.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { generateWebhookSecret, sealStoredWebhookSecrets } from '../src/domain/webhooks/signing.ts';
import {
  SecretDecryptionError,
  TEST_SECRETS_KEY,
  loadOrCreateKeyFile,
  openSecret,
  parseSecretsKey,
  sealSecret,
  secretsKey,
} from '../src/lib/secrets.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

const KEY = Buffer.alloc(32, 1);

describe('sealing', () => {
  it('round-trips, is versioned, random per call, and refuses another key or an altered value', () => {
    const secret = generateWebhookSecret();
    const a = sealSecret(secret, KEY);
    const b = sealSecret(secret, KEY);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b); // fresh IV each time
    expect(openSecret(a, KEY)).toBe(secret);
    expect(() => openSecret(a, Buffer.alloc(32, 2))).toThrow(SecretDecryptionError);
    const raw = Buffer.from(a.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => openSecret(`v1:${raw.toString('base64')}`, KEY)).toThrow(SecretDecryptionError);
    expect(() => openSecret(secret, KEY)).toThrow(/v1: prefix/);
  });

  it('in NODE_ENV=test without an installed key, uses the fixed test key (what loadConfig puts in Config)', () => {
    expect(secretsKey()).toEqual(TEST_SECRETS_KEY);
    expect(loadConfig({ NODE_ENV: 'test' }).secretsKey).toEqual(TEST_SECRETS_KEY);
    expect(loadConfig({ NODE_ENV: 'development' }).secretsKey).toBeUndefined();
  });
});

describe('SECRETS_KEY', () => {
  it('accepts 32 bytes as base64, base64url or hex, and stops the start with a clear ConfigError otherwise', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 250));
    for (const raw of [key.toString('base64'), key.toString('base64url'), key.toString('hex'), ` ${key.toString('base64')}\n`]) {
      expect(loadConfig({ SECRETS_KEY: raw }).secretsKey).toEqual(key);
    }
    for (const bad of ['short', Buffer.alloc(16).toString('base64'), Buffer.alloc(33).toString('base64'), 'z'.repeat(64)]) {
      expect(parseSecretsKey(bad)).toBeUndefined();
      expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(
        /SECRETS_KEY must be 32 bytes as base64 \(44 characters\) or hex \(64 characters\)/,
      );
    }
  });
});

describe('DATA_DIR/secrets.key', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'msa-secrets-'));
    dirs.push(d);
    return join(d, 'data');
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is generated once with mode 0600 and reused', () => {
    const dir = fresh();
    const key = loadOrCreateKeyFile(dir);
    expect(key).toHaveLength(32);
    const file = join(dir, 'secrets.key');
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(parseSecretsKey(readFileSync(file, 'utf8'))).toEqual(key);
    expect(loadOrCreateKeyFile(dir)).toEqual(key);
  });

  it('gives every concurrent starter the same key', async () => {
    const dir = fresh();
    const { spawn } = await import('node:child_process');
    const script = `import { loadOrCreateKeyFile } from ${JSON.stringify(new URL('../src/lib/secrets.ts', import.meta.url).href)};
      process.stdout.write(loadOrCreateKeyFile(process.env.KEY_DIR).toString('hex'));`;
    const keys = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
              env: { ...process.env, KEY_DIR: dir },
              stdio: ['ignore', 'pipe', 'inherit'],
            });
            let out = '';
            child.stdout.on('data', (c: Buffer) => (out += c));
            child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
          }),
      ),
    );
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe(loadOrCreateKeyFile(dir).toString('hex'));
  });

  it('refuses a key file others can read, or one that holds no key', () => {
    if (process.platform === 'win32') return;
    const dir = fresh();
    loadOrCreateKeyFile(dir);
    const file = join(dir, 'secrets.key');
    writeFileSync(file, `${Buffer.alloc(32, 3).toString('base64')}\n`);
    chmodSync(file, 0o644);
    expect(() => loadOrCreateKeyFile(dir)).toThrow(/readable by other users.*chmod 600/);
    chmodSync(file, 0o600);
    writeFileSync(file, 'not a key\n');
    expect(() => loadOrCreateKeyFile(dir)).toThrow(/does not hold a 32-byte key/);
  });
});

describe('sealing stored secrets at start (sealStoredWebhookSecrets)', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it('seals rows written in plain text before migration 0008, once, and validates the constraint', async () => {
    const org = await srv.newOrg('Plain secrets org');
    // A row from before migration 0008 can only exist without its constraint: recreate that state inside a
    // transaction that is rolled back (it holds the table's lock for a moment; other files only wait).
    const rollback = new Error('rollback');
    const outcome = await srv.context.db
      .transaction()
      .execute(async (tx) => {
        await sql`alter table webhook_endpoints drop constraint webhook_endpoints_secret_sealed`.execute(tx);
        const plain = generateWebhookSecret();
        const { id } = await tx
          .insertInto('webhook_endpoints')
          .values({ organization_id: org.organizationId, url: 'https://hooks.example.com/old', events: ['message.sent'], secret: plain })
          .returning('id')
          .executeTakeFirstOrThrow();
        await sql`alter table webhook_endpoints add constraint webhook_endpoints_secret_sealed check (secret like 'v1:%') not valid`.execute(
          tx,
        );
        const first = await sealStoredWebhookSecrets(tx, TEST_SECRETS_KEY);
        const again = await sealStoredWebhookSecrets(tx, TEST_SECRETS_KEY);
        const row = await tx.selectFrom('webhook_endpoints').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
        const { rows } = await sql<{
          convalidated: boolean;
        }>`select convalidated from pg_constraint where conname = 'webhook_endpoints_secret_sealed'`.execute(tx);
        const refused = await tx
          .updateTable('webhook_endpoints')
          .set({ secret: plain })
          .where('id', '=', id)
          .execute()
          .then(
            () => 'stored',
            (e: { code?: string }) => e.code,
          );
        throw Object.assign(rollback, { result: { plain, first, again, row, rows, refused } });
      })
      .catch((e: unknown) => {
        if (e !== rollback) throw e;
        return (e as Error & { result: Record<string, unknown> }).result as any;
      });
    expect(outcome.first.sealed).toBeGreaterThanOrEqual(1);
    expect(outcome.again).toEqual({ sealed: 0 });
    expect(outcome.row.secret.startsWith('v1:')).toBe(true);
    expect(openSecret(outcome.row.secret, TEST_SECRETS_KEY)).toBe(outcome.plain);
    expect(outcome.rows).toEqual([{ convalidated: true }]);
    expect(outcome.refused).toBe('23514'); // a plain secret cannot be written again
  });

  it('refuses to start with a key that does not open the stored secrets', async () => {
    const org = await srv.newOrg('Key mismatch org');
    const res = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: org.apiKey.secret,
      body: { url: 'https://93.184.216.34/hooks', events: ['message.sent'] },
    });
    expect(res.status, res.text).toBe(201);
    await expect(sealStoredWebhookSecrets(srv.context.db, Buffer.alloc(32, 9))).rejects.toThrow(
      /sealed with another key than this process has\. Set SECRETS_KEY/,
    );
    await expect(sealStoredWebhookSecrets(srv.context.db, TEST_SECRETS_KEY)).resolves.toEqual({ sealed: 0 });
  });
});
