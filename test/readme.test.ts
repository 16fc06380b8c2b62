// The README stays true:
// - every repository path it (and openapi/README.md) names exists, and every `npm run <script>` is in package.json;
// - every shell block runs as written, in the order of the document, against a test server: placeholders are filled
//   from the outputs the README shows (`# {"id":"<contactId>",…}` binds <contactId>) or from PLACEHOLDERS below,
//   `http://localhost:3000` is the test server, and a curl answering 4xx/5xx fails the block. A block that cannot
//   run here is marked in the README source by `<!-- not run by test/readme.test.ts: <why> -->` on the line before;
//   so are the inline `npm run --silent admin -- …` commands of its prose, which run too;
// - its typed-client example is examples/typed-client.ts verbatim (which `npm run typecheck` compiles against
//   generated/api.d.ts), and its webhook receiver, run as written, verifies a real delivery.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { commandsOf, matchShown, parseShown } from './support/readme-commands.ts';

const root = new URL('..', import.meta.url).pathname;
/** README_FILE replaces the README under test (to check an older one, e.g. `git show <ref>:README.md > /tmp/old.md`). */
const readmePath = process.env.README_FILE ?? join(root, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const run = promisify(execFile);

/** Values for the placeholders no shown output binds (the Admin CLI section's). */
const PLACEHOLDERS: Record<string, string> = {
  '<name>': 'Readme',
  '<a,b,c|all>': 'contacts:read,messages:send',
  '<E.164>': '+14155550123',
  '<text>': 'HELLO',
  '<platformAccountId>': 'acct-readme',
};

/** Commands that would change the checkout or run for minutes: never run, whatever the README says. */
const NEVER_RUN = /\bnpm (ci|install|i|test|start|run dev)\b|\brm\s/;

/** Every file and folder of the repository (relative, `/`-separated), without dependencies and data. */
function repositoryEntries(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(root, dir))) {
      if (dir === '' && ['node_modules', '.git', '.data', '.tmp'].includes(name)) continue;
      const rel = dir ? `${dir}/${name}` : name;
      out.push(rel);
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
    }
  };
  walk('');
  return out;
}

/**
 * The repository paths a Markdown file names: words containing `/` whose first segment is an entry of the
 * repository root or of the file's own folder (`src/…`, `test/…`, `openapi/…`, in openapi/README.md `schemas/…`);
 * `<section>`, `<url>`, `*` and `…` are wildcards. URLs, `/v1/…` routes and `DATA_DIR/…` are not paths; nor are
 * `$ref`s (`…#/…`, relative to the file holding them) and the paths inside TypeScript, JavaScript and JSON examples
 * (relative to their own file: examples/typed-client.ts is checked whole below).
 */
function namedPaths(markdown: string, dir: string): string[] {
  const roots = new Set([...readdirSync(root), ...(dir ? readdirSync(join(root, dir)) : []), '..']);
  const text = markdown.replace(/^\s*```(ts|js|json)\n[\s\S]*?^\s*```/gm, '');
  const words = text.split(/[\s`'"()[\],;|]+/).map((w) => w.replace(/[.:,;]+$/, ''));
  return [...new Set(words.filter((w) => w.includes('/') && roots.has(w.split('/')[0]!) && !w.includes('://') && !w.includes('#')))];
}

function exists(entries: string[], dir: string, named: string): boolean {
  const candidates = [posix.normalize(dir ? `${dir}/${named}` : named), posix.normalize(named)].map((c) => c.replace(/\/$/, ''));
  return candidates.some((c) => {
    if (!/[<*…]/.test(c)) return existsSync(join(root, c));
    const pattern = c
      .split(/(<[^>]+>|\*|…)/)
      .map((part, i) => (i % 2 ? (part === '*' ? '[^/]*' : '.+') : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    const re = new RegExp(`^${pattern}$`);
    return entries.some((e) => re.test(e));
  });
}

describe('README references', () => {
  const entries = repositoryEntries();
  const docs = [
    { text: readme, dir: '' },
    { text: readFileSync(join(root, 'openapi/README.md'), 'utf8'), dir: 'openapi' },
  ];

  it('names only repository paths that exist', () => {
    const missing = docs.flatMap(({ text, dir }) => namedPaths(text, dir).filter((p) => !exists(entries, dir, p)));
    expect(missing).toEqual([]);
    expect(namedPaths(readme, '').length).toBeGreaterThan(50); // the check sees the README's paths
  });

  it('mentions only npm scripts that package.json has', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const mentioned = docs.flatMap(({ text }) => [
      ...[...text.matchAll(/\bnpm run (?:--silent )?([a-z][\w:-]*)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/\bnpm (start|test)\b/g)].map((m) => m[1]!),
    ]);
    expect([...new Set(mentioned.filter((name) => !(name in scripts)))]).toEqual([]);
    expect(new Set(mentioned).size).toBeGreaterThan(10);
  });
});

describe('README commands', () => {
  let srv: TestServer;
  const queueSchema = `pgboss_readme_${randomBytes(4).toString('hex')}`;
  const workdir = join(root, '.tmp', `readme-${process.pid}`);
  beforeAll(async () => {
    srv = await startTestServer();
    mkdirSync(workdir, { recursive: true });
  });
  afterAll(async () => {
    rmSync(workdir, { recursive: true, force: true });
    await sql`drop schema if exists ${sql.id(queueSchema)} cascade`.execute(srv.context.db);
    await srv.close();
  });

  it('marks every shell block it does not run, and never runs one that would change the checkout', () => {
    const commands = commandsOf(readme);
    expect(commands.filter((c) => c.skip === undefined && NEVER_RUN.test(c.text)).map((c) => `line ${c.line}: ${c.text}`)).toEqual([]);
    expect(commands.filter((c) => c.skip !== undefined && c.skip.trim() === '').map((c) => c.line)).toEqual([]);
  });

  it('runs every other command as written, in order, with the outputs the README shows', async () => {
    const bindings = new Map<string, string>();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATABASE_URL: inject('databaseUrl'),
      NODE_ENV: 'test',
      QUEUE_SCHEMA: queueSchema,
      CALLBACK_BASE_URL: srv.baseUrl,
    };
    delete env.KEY;
    const ran: string[] = [];
    for (const command of commandsOf(readme)) {
      if (command.skip !== undefined || NEVER_RUN.test(command.text)) continue;
      let text = command.text.replaceAll('http://localhost:3000', srv.baseUrl);
      for (const [placeholder, value] of [...bindings, ...Object.entries(PLACEHOLDERS)]) text = text.replaceAll(placeholder, value);
      const where = `README line ${command.line}: ${command.text}`;
      const unfilled = text.match(/<[A-Za-z][^>\s]*>|…/g);
      expect(unfilled, `${where}: placeholders nothing fills`).toBeNull();
      const exported = /^export (\w+)=(\S+)/.exec(text);
      if (exported) {
        env[exported[1]!] = exported[2]!;
        continue;
      }
      // curl answers 4xx/5xx with exit code 22 (the body still printed): a refused example fails here.
      const script = `curl() { command curl --fail-with-body "$@"; }\n${text}`;
      const result = await run('bash', ['-c', script], { cwd: workdir, env, maxBuffer: 64 * 1024 * 1024 }).catch(
        (error: { code?: number; stdout?: string; stderr?: string }) => {
          throw new Error(`${where}\nexit ${error.code}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`.slice(0, 4000));
        },
      );
      if (/^npm run --silent admin\b/.test(text)) {
        // "Each prints one JSON object."
        expect(() => JSON.parse(result.stdout), `${where}: ${result.stdout}`).not.toThrow();
        expect(typeof JSON.parse(result.stdout), where).toBe('object');
      }
      if (command.shown !== undefined) {
        let actual: unknown;
        expect(() => (actual = JSON.parse(result.stdout)), `${where}: not JSON: ${result.stdout.slice(0, 500)}`).not.toThrow();
        const problems = matchShown(parseShown(command.shown), actual, bindings);
        expect(problems, `${where}\n${result.stdout.slice(0, 2000)}`).toEqual([]);
      }
      ran.push(command.text);
    }
    // The quick start, the regenerated types, the MCP call and the Admin CLI: more than a dozen commands.
    expect(ran.length).toBeGreaterThan(12);
    expect(readFileSync(join(workdir, 'api.d.ts'), 'utf8')).toContain('export interface paths');
  }, 300_000);
});

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
