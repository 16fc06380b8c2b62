// One PostgreSQL for the whole run: DATABASE_URL when set, else an embedded server in a temporary folder
// with fsync off (tests trade durability for speed). Migrated once; test files create their own
// organizations, so they never see each other's rows.
import { freePort } from './processes.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDb, migrateToLatest } from '../../src/db/database.ts';
import { startEmbeddedPostgres, type PostgresHandle } from '../../src/db/postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

let handle: PostgresHandle | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.DATABASE_URL;
  if (!url) {
    dir = mkdtempSync(join(tmpdir(), 'msa-test-'));
    handle = await startEmbeddedPostgres({
      dataDir: dir,
      port: await freePort(),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' },
    });
    url = handle.url;
  }
  const { db } = createDb(url, 2);
  await migrateToLatest(db as never);
  await db.destroy();
  project.provide('databaseUrl', url);
}

export async function teardown(): Promise<void> {
  await handle?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
