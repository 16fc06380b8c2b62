// Start-up builds only what answering /health needs (issue 38, bench part a): the server process answers /health
// before it has loaded any handler section but health's, the modules its workers' jobs run, migrations already
// run, the routes outside the document (landing pages, tracked links, provider callbacks: the send pipeline and
// libphonenumber-js behind them), the MCP SDK (the tool catalogue is built on the first MCP message), the provider SDKs of unconfigured providers,
// rate-limiter-flexible (the per-key limit's shared count, made on the first keyed request),
// or the libraries of assets, mail, QR codes and content-rule regexes; and the first requests that need them still
// get full answers
// (a section's first requests, concurrent ones too, validation of an operation compiled on its first request, the
// oneOf narrowing of a refused body, whose Ajv instance is built on the first one, the MCP tool list).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startServing } from './support/processes.ts';
import { until } from './support/wait.ts';

const run = promisify(execFile);
const LAZY = [
  '@modelcontextprotocol/sdk',
  'twilio',
  'telnyx',
  'google-auth-library',
  '@aws-sdk/client-s3',
  'nodemailer',
  'sharp',
  'qrcode',
  'file-type',
  're2-wasm',
  'libphonenumber-js',
  // The per-key request limit's shared count (src/http/rate-limit.ts): imported by the first keyed request.
  'rate-limiter-flexible',
  // Request validation's library (src/http/openapi-backend.ts): imported by the first request that validates;
  // /health, with no parameters and no body, is answered without it.
  'openapi-backend',
  // Ajv: the oneOf narrower's (made with openapi-backend's validators) and the provider-callback checks' (required
  // on the first callback, src/providers/callback-shape.ts).
  'ajv',
];
// Every handler section but health's (src/handlers/index.ts: imported on a first request of one of its operations),
// and the modules the busiest jobs run (src/jobs/: imported on their first job).
const SECTIONS = readdirSync('src/handlers')
  .filter((file) => !['index.ts', 'health.ts', 'not-implemented.ts'].includes(file))
  .map((file) => `src/handlers/${file}`);
const JOB_MODULES = [
  'src/domain/blasts/sending.ts',
  'src/domain/webhooks/attempts.ts',
  'src/domain/contacts/import-worker.ts',
  'src/domain/contacts/bulk-tag-worker.ts',
  'src/domain/assets/processing.ts',
  'src/domain/analytics/exports.ts',
  'src/domain/submissions/review.ts',
];
// The routes outside the API document (src/app.ts: imported on the first request under their prefix).
const MOUNTS = ['src/http/landing-pages.ts', 'src/http/links.ts', 'src/http/provider-callbacks.ts'];
// Migrations, on a database that has run them all (src/db/migrations/index.ts: imported when the Migrator runs).
const MIGRATIONS = ['src/db/migrations/0001_organizations_and_api_keys.ts', 'src/db/migrations/0049_message_carrier.ts'];
// The bundled document: start-up routes by generated/operations.json (src/http/operations.ts); the document is parsed
// on its first use (an operation's request body or responses, the MCP catalogue, /openapi.json).
const DOCUMENT = ['generated/openapi.json'];
// Kysely's own 257 modules: the server imports its bundle, generated/kysely/ (src/bundled-kysely.ts), at start and
// for every later request.
const BUNDLED = ['kysely'];

describe('start-up', () => {
  const env = {
    ...process.env,
    DATABASE_URL: inject('databaseUrl'),
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    // Workers run, as `npm start` runs them, on a queue schema of their own: no other file's jobs reach them.
    RUN_WORKERS: '1',
    QUEUE_SCHEMA: 'pgboss_startup_lazy',
    // Answers are not checked against the document, as in production (NODE_ENV=production turns it off): checking
    // one reads its schema from the document.
    VALIDATE_RESPONSES: '0',
    PORT: '0',
    MODULE_LOADS_WATCH: [...LAZY, ...SECTIONS, ...JOB_MODULES, ...MOUNTS, ...MIGRATIONS, ...DOCUMENT, ...BUNDLED].join(','),
  };
  let child: ChildProcess;
  let base: string;
  let log: () => string;
  let secret: string;
  const loaded = () => [...log().matchAll(/^module-loaded (\S+)$/gm)].map((m) => m[1]);

  beforeAll(async () => {
    const { stdout } = await run(process.execPath, ['src/cli/admin.ts', 'create-org', '--name', 'Lazy start org'], { env });
    secret = (JSON.parse(stdout) as { apiKey: { secret: string } }).apiKey.secret;
    const serving = await startServing(process.execPath, ['--import', './test/support/module-loads.ts', 'src/main.js'], env);
    ({ child, log } = serving);
    base = `http://127.0.0.1:${serving.port}`;
  });
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('answers /health before loading what only later requests need', async () => {
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(loaded()).toEqual([]);
  });

  it('refuses a query parameter /health does not declare, as before (that request validates)', async () => {
    const res = await fetch(`${base}/health?verbose=1`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: Array<{ field: string }> };
    expect([body.code, body.details.map((d) => d.field)]).toEqual(['VALIDATION_ERROR', ['query.verbose']]);
    expect(loaded()).toEqual(expect.arrayContaining(['openapi-backend', 'ajv']));
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it("answers a section's first request as before, its module imported then (and no other section's)", async () => {
    expect(loaded()).not.toContain('src/handlers/api-keys.ts');
    const res = await fetch(`${base}/v1/api-keys`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(200);
    // The key's rate limit counts from this first request: the shared count's library was imported for it.
    expect(res.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(loaded()).toContain('rate-limiter-flexible');
    const body = (await res.json()) as { data: Array<{ name: string; scopes: string[] }> };
    expect(body.data.map((k) => k.name)).toEqual(['Owner key']);
    expect(loaded()).toContain('src/handlers/api-keys.ts');
    expect(loaded().filter((name) => name!.startsWith('src/handlers/'))).toEqual(['src/handlers/api-keys.ts']);
  });

  it('answers two concurrent first requests of a section, both from the one import of its module', async () => {
    expect(loaded()).not.toContain('src/handlers/blasts.ts');
    const [a, b] = await Promise.all(
      [0, 1].map(() => fetch(`${base}/v1/blasts?limit=5`, { headers: { authorization: `Bearer ${secret}` } })),
    );
    expect([a!.status, b!.status]).toEqual([200, 200]);
    const [bodyA, bodyB] = (await Promise.all([a!.json(), b!.json()])) as Array<{ data: unknown[] }>;
    expect(bodyA!.data).toEqual([]);
    expect(bodyB!.data).toEqual([]);
    expect(loaded()).toContain('src/handlers/blasts.ts');
  });

  it('serves the routes outside the document from their first request (tracked links, landing pages)', async () => {
    expect(loaded()).not.toContain('src/http/links.ts');
    const link = await fetch(`${base}/l/notacode`, { redirect: 'manual' });
    expect([link.status, await link.text()]).toEqual([404, 'Not found']);
    const page = await fetch(`${base}/p/00000000-0000-0000-0000-000000000000/nothing`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(loaded()).toEqual(expect.arrayContaining(['src/http/links.ts', 'src/http/landing-pages.ts']));
    expect(loaded()).not.toContain('src/http/provider-callbacks.ts');
  });

  it("validates an operation's first request (its validators are compiled then)", async () => {
    const res = await fetch(`${base}/v1/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone: 12 }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; details: Array<{ field: string }> };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.map((d) => d.field)).toContain('body.phone');
    expect(loaded()).toContain('generated/openapi.json'); // its body's schema is read from the document by now
  });

  it("narrows a oneOf mistake to the branch its type names on the process's first refused body (that Ajv is built then)", async () => {
    const res = await fetch(`${base}/v1/messages/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { type: 'card', text: 5 } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: Array<{ field: string; code: string }> };
    expect(body.details.map((d) => `${d.field}:${d.code}`).sort()).toEqual(['body.content.text:type', 'body.content.title:required']);
  });

  it('builds the MCP server on its first message', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { tools: Array<{ name: string }> } };
    expect(body.result.tools.map((t) => t.name)).toContain('sendMessage');
    expect(loaded()).toContain('@modelcontextprotocol/sdk');
  });

  it("ran every query above through Kysely's bundle, never loading Kysely's own modules", () => {
    expect(loaded()).not.toContain('kysely');
  });

  it("a start after the first on the same compile cache never loads Node's type stripper (src/main.js is JavaScript)", async () => {
    const cache = mkdtempSync(join(tmpdir(), 'msa-compile-cache-'));
    const stripperLoaded = async () => {
      const serving = await startServing(process.execPath, ['--import', './test/support/type-stripper.mjs', 'src/main.js'], {
        ...env,
        NODE_COMPILE_CACHE: cache,
        MODULE_LOADS_WATCH: '',
      });
      try {
        expect((await fetch(`http://127.0.0.1:${serving.port}/health`)).status).toBe(200);
        serving.child.kill('SIGUSR2');
        const line = await until(
          async () => /^type-stripper-loaded (\w+)$/m.exec(serving.log())?.[1],
          (v) => v !== undefined,
          'the type-stripper line',
        );
        return line;
      } finally {
        // A graceful stop: Node writes the compile cache as the process exits.
        const exited = new Promise((resolve) => serving.child.once('exit', resolve));
        serving.child.kill('SIGTERM');
        await exited;
      }
    };
    try {
      expect(await stripperLoaded()).toBe('true'); // an empty cache: every .ts file is stripped once, and kept
      expect(await stripperLoaded()).toBe('false');
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it("starts `npm run worker` (src/worker.js) on Kysely's bundle too", async () => {
    const worker = spawn(process.execPath, ['--import', './test/support/module-loads.ts', 'src/worker.js'], {
      env: { ...env, MODULE_LOADS_WATCH: 'kysely' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 30_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('worker started')) {
            clearTimeout(timer);
            resolve();
          }
        };
        worker.stdout.on('data', onData);
        worker.stderr.on('data', onData);
        worker.once('exit', (code) => reject(new Error(`worker exited ${code}:\n${output}`)));
      });
      expect(output).not.toContain('module-loaded kysely');
    } finally {
      worker.kill('SIGTERM');
    }
  });
});
