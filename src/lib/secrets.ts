// Secrets at rest (webhook signing secrets today): AES-256-GCM with one 32-byte key per deployment, opened only
// where a secret is used (to sign a delivery).
//
// Stored form: `v1:` + base64(iv[12] | tag[16] | ciphertext). The version names the scheme and the key, so a
// later rotation can add `v2:` (a new key, or a key id) and re-encrypt rows lazily or at start.
//
// The key, in order (installed once at start by startRuntime, src/runtime.ts):
// 1. SECRETS_KEY (base64 or hex of 32 bytes; checked by loadConfig, which puts it in Config.secretsKey);
// 2. NODE_ENV=test without SECRETS_KEY: TEST_SECRETS_KEY, a fixed key derived from a public label, so every test
//    process (test servers, spawned API/worker processes, the CLI) reads what the others wrote. Not a secret;
//    never for real data;
// 3. otherwise DATA_DIR/secrets.key, generated on first start (mode 0600, created atomically) and reused. Processes
//    that share a database (DATABASE_URL, several machines) must share the key: set SECRETS_KEY to the same
//    value on all of them (the contents of that file will do).
// Code that builds its context without startRuntime (the test server, test/support/server.ts) gets the test key
// from secretsKey() when NODE_ENV is test; anywhere else an uninstalled key is a programming error.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const SEALED_PREFIX = 'v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export const TEST_SECRETS_KEY: Buffer = createHash('sha256')
  .update('messaging-service NODE_ENV=test secrets key (public, tests only)')
  .digest();

/** 32 bytes from base64 (44 characters, or 43 unpadded / base64url) or hex (64 characters); undefined otherwise. */
export function parseSecretsKey(raw: string): Buffer | undefined {
  const s = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) return undefined;
  const key = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

export class SecretsKeyError extends Error {}

/**
 * The key in `DATA_DIR/secrets.key`, created on first use: written to a temporary file (0600, fsynced) and
 * hard-linked into place, so a concurrent starter either wins or reads the winner's complete file.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = join(dataDir, 'secrets.key');
  const existing = readKeyFile(file);
  if (existing) return existing;
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(dataDir, { recursive: true });
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(KEY_BYTES).toString('base64')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another process created it first
    }
  } catch (error) {
    throw new SecretsKeyError(
      `cannot create ${file} (${(error as Error).message}): set SECRETS_KEY (32 bytes, base64 or hex; e.g. \`openssl rand -base64 32\`) or a writable DATA_DIR`,
    );
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
  }
  const key = readKeyFile(file);
  if (!key) throw new SecretsKeyError(`${file} disappeared while it was being created`);
  return key;
}

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretsKeyError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const key = parseSecretsKey(text);
  if (!key) throw new SecretsKeyError(`${file} does not hold a 32-byte key (base64 or hex)`);
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    throw new SecretsKeyError(`${file} is readable by other users (mode ${(statSync(file).mode & 0o777).toString(8)}): chmod 600 it`);
  }
  return key;
}

let installed: Buffer | undefined;

/** Makes `key` the process's secrets key (start-up). */
export function installSecretsKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new SecretsKeyError(`a secrets key is ${KEY_BYTES} bytes`);
  installed = key;
}

/** The installed key; in NODE_ENV=test without one, the fixed test key (see the top of this file). */
export function secretsKey(): Buffer {
  if (installed) return installed;
  if (process.env.NODE_ENV === 'test') return TEST_SECRETS_KEY;
  throw new Error('no secrets key installed: entry points call startRuntime(), which installs it');
}

export const isSealed = (stored: string) => stored.startsWith(SEALED_PREFIX);

export function sealSecret(plain: string, key: Buffer = secretsKey()): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

export class SecretDecryptionError extends Error {}

/** The plain secret of a sealed one. Throws SecretDecryptionError when it was sealed with another key or altered. */
export function openSecret(stored: string, key: Buffer = secretsKey()): string {
  if (!isSealed(stored)) throw new SecretDecryptionError('not a sealed secret (expected the v1: prefix)');
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError('sealed secret too short');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError(
      'the secret cannot be decrypted with this key (SECRETS_KEY differs from the key that sealed it, or the value was altered)',
    );
  }
}
