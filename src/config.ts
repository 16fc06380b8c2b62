// Configuration comes only from environment variables, validated once at start.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import express from 'express';
import { TEST_SECRETS_KEY, parseSecretsKey } from './lib/secrets.ts';
import { ProviderConfigError, providersConfig, type ProvidersConfig } from './providers/config.ts';

export type Config = {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
  logLevel: string;
  nodeEnv: 'production' | 'development' | 'test';
  validateResponses: boolean;
  webhookAllowPrivate: boolean;
  bodyLimitBytes: number;
  /** Bytes all multipart uploads of one process may hold in memory at once; more → 503 with Retry-After. */
  uploadMemoryLimitBytes: number;
  /** After SIGTERM, how long in-flight requests may take before their connections are closed. */
  shutdownGraceMs: number;
  /** statement_timeout of a request's SQL (an operation's `x-statement-timeout-seconds` overrides it); jobs have none. */
  statementTimeoutMs: number;
  runWorkers: boolean;
  /** Where providers (and the carrier simulator) send callbacks; default http://127.0.0.1:PORT. */
  callbackBaseUrl: string | undefined;
  /** Which provider plays PROVIDER_A and PROVIDER_B, and its credentials (src/providers/config.ts); never logged. */
  providers: ProvidersConfig;
  /** How often pg-boss looks for jobs whose worker stopped heart-beating (a crashed process). */
  queueSuperviseSeconds: number;
  /** PostgreSQL schema of the job queue (pg-boss). Processes that share work must share it. */
  queueSchema: string;
  /**
   * The 32-byte key sealing secrets at rest (AES-256-GCM, src/lib/secrets.ts): SECRETS_KEY; in NODE_ENV=test
   * without it, the fixed public test key; otherwise undefined, and startRuntime uses DATA_DIR/secrets.key
   * (generated on first start). Processes sharing a database must have the same key.
   */
  secretsKey: Buffer | undefined;
  /** Where asset files are kept (src/lib/storage/): the filesystem under DATA_DIR, or an S3-compatible bucket. */
  storage: StorageConfig;
  /** Base of the asset URLs the API answers (`url` of assets and variants); default http://localhost:PORT. */
  assetBaseUrl: string;
  /** Outgoing email (scheduled analytics reports, src/lib/mail.ts). */
  mail: MailConfig;
  /**
   * TRUST_PROXY, express's `trust proxy` setting as given to `app.set`: false (the socket's address is the
   * client's), true (the left-most X-Forwarded-For entry), a hop count, or a comma-separated list of addresses,
   * CIDR ranges and the names `loopback`, `linklocal`, `uniquelocal` (the proxies whose X-Forwarded-For is
   * believed). What the public forms' rate limits key on (src/http/client.ts).
   */
  trustProxy: TrustProxy;
  /**
   * The request rate limit of each API key (src/http/rate-limit.ts): RATE_LIMIT_PER_KEY requests (0: no limit)
   * per RATE_LIMIT_WINDOW_SECONDS, counted across every API process.
   */
  rateLimit: { perKey: number; windowSeconds: number };
};

type TrustProxy = boolean | number | string;

export type MailConfig = {
  /** SMTP_URL (smtp:// or smtps://, credentials in the URL); undefined: messages are written as .eml files to `dir`. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the sender address. */
  from: string;
  /** Where messages go without SMTP_URL: DATA_DIR/outbox. */
  dir: string;
};

export type StorageConfig =
  | { kind: 'fs'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      /** Custom endpoint (MinIO, R2, s3rver …); undefined = AWS. */
      endpoint: string | undefined;
      region: string;
      /** Both or neither; neither = the SDK's default credential chain. */
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
      /** Key prefix inside the bucket. */
      prefix: string;
    };

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be 1/true/yes or 0/false/no (got "${raw}")`);
}

function identifier(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError(`${name} must be a lower-case SQL identifier (got "${raw}")`);
  return raw;
}

function url(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
    return raw.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL (got "${raw}")`);
  }
}

function secretsKey(env: NodeJS.ProcessEnv, nodeEnv: Config['nodeEnv']): Buffer | undefined {
  const raw = env.SECRETS_KEY;
  if (raw === undefined || raw === '') return nodeEnv === 'test' ? TEST_SECRETS_KEY : undefined;
  const key = parseSecretsKey(raw);
  if (!key) {
    throw new ConfigError(
      `SECRETS_KEY must be 32 bytes as base64 (44 characters) or hex (64 characters), e.g. from \`openssl rand -base64 32\` (got ${raw.length} characters)`,
    );
  }
  return key;
}

function storage(env: NodeJS.ProcessEnv, dataDir: string, nodeEnv: Config['nodeEnv']): StorageConfig {
  const kind = env.STORAGE || 'fs';
  if (kind === 'fs') {
    // Tests that set neither directory keep their uploads out of the development DATA_DIR.
    const fallback = nodeEnv === 'test' && !env.DATA_DIR ? join(tmpdir(), 'messaging-service-test-assets') : resolve(dataDir, 'assets');
    return { kind: 'fs', dir: resolve(env.STORAGE_DIR || fallback) };
  }
  if (kind !== 's3') throw new ConfigError(`STORAGE must be fs or s3 (got "${kind}")`);
  const bucket = env.S3_BUCKET;
  if (!bucket || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(
      `STORAGE=s3 needs S3_BUCKET, a bucket name of 3–63 lower-case letters, digits, dots and hyphens (got "${bucket ?? ''}")`,
    );
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || undefined;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new ConfigError(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (or neither, for the default AWS credential chain)',
    );
  }
  const prefix = env.S3_PREFIX ?? '';
  if (prefix && (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/.test(prefix) || prefix.split('/').some((p) => p === '.' || p === '..')))
    throw new ConfigError(`S3_PREFIX must be a path like "media/" (got "${prefix}")`);
  return {
    kind: 's3',
    bucket,
    endpoint: url(env, 'S3_ENDPOINT'),
    region: env.S3_REGION || 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix,
  };
}

function mail(env: NodeJS.ProcessEnv, dataDir: string, nodeEnv: Config['nodeEnv']): MailConfig {
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl) {
    let protocol = '';
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {}
    if (protocol !== 'smtp:' && protocol !== 'smtps:')
      throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:pass@mail.example.com:587)');
  }
  const from = env.MAIL_FROM || 'Messaging Service <reports@localhost>';
  if (!/^[^\r\n]{1,254}$/.test(from) || !/@/.test(from)) throw new ConfigError(`MAIL_FROM must be an email address (got "${from}")`);
  // Tests that set no DATA_DIR keep their messages out of the development DATA_DIR.
  const dir = nodeEnv === 'test' && !env.DATA_DIR ? join(tmpdir(), 'messaging-service-test-outbox') : resolve(dataDir, 'outbox');
  return { smtpUrl, from, dir };
}

/**
 * TRUST_PROXY as express reads `trust proxy`: unset or `false` → false, `true` → true, digits → a hop count,
 * anything else → the comma-separated list. Checked by express itself (its compile function throws on an entry
 * that is neither an address, a CIDR range nor a known name), so the values and their meaning are express's.
 */
function trustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  const value: TrustProxy = raw === '' || raw === 'false' ? false : raw === 'true' ? true : /^\d{1,3}$/.test(raw) ? Number(raw) : raw;
  try {
    express().set('trust proxy', value);
  } catch (error) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (got "${raw}": ${(error as Error).message})`,
    );
  }
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = env.NODE_ENV ?? 'development';
  if (nodeEnv !== 'production' && nodeEnv !== 'development' && nodeEnv !== 'test') {
    throw new ConfigError(`NODE_ENV must be production, development or test (got "${nodeEnv}")`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const logLevel = env.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${logLevel}")`);
  }
  const port = int(env, 'PORT', 3000, 0, 65535);
  const dataDir = resolve(env.DATA_DIR || './.data');
  const callbackBaseUrl = url(env, 'CALLBACK_BASE_URL');
  let providers: ProvidersConfig;
  try {
    providers = providersConfig(env, callbackBaseUrl);
  } catch (error) {
    if (error instanceof ProviderConfigError) throw new ConfigError(error.message);
    throw error;
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    dataDir,
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 54329, 1024, 65535),
    logLevel,
    nodeEnv,
    validateResponses: bool(env, 'VALIDATE_RESPONSES', nodeEnv !== 'production'),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    uploadMemoryLimitBytes: int(env, 'UPLOAD_MEMORY_LIMIT_BYTES', 256 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_SECONDS', 20, 0, 3600) * 1000,
    statementTimeoutMs: int(env, 'STATEMENT_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    runWorkers: bool(env, 'RUN_WORKERS', true),
    callbackBaseUrl,
    providers,
    queueSuperviseSeconds: int(env, 'QUEUE_SUPERVISE_SECONDS', 60, 1, 3600),
    queueSchema: identifier(env, 'QUEUE_SCHEMA', 'pgboss'),
    secretsKey: secretsKey(env, nodeEnv),
    storage: storage(env, dataDir, nodeEnv),
    assetBaseUrl: url(env, 'ASSET_BASE_URL') ?? `http://localhost:${port}`,
    mail: mail(env, dataDir, nodeEnv),
    trustProxy: trustProxy(env),
    // The default lets one key use a whole API process (bench b: ~2,600 reads/s on 2 cores, m1: ~1,300 sends/s);
    // lower it where keys of several tenants share processes.
    rateLimit: {
      perKey: int(env, 'RATE_LIMIT_PER_KEY', 10_000, 0, 100_000_000),
      windowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 1, 1, 3600),
    },
  };
}

/** For entry points: the configuration, or a clear message and exit code 2. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}
