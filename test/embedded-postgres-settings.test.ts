// The embedded PostgreSQL runs with the settings embeddedDefaults() sizes for this service (src/db/postgres-server.ts):
// read back from the server the test run started with them (test/support/global-setup.ts), so a default that never
// reaches the server fails here. A run against DATABASE_URL (a server of one's own, which keeps its own settings)
// has nothing to check.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDefaults } from '../src/db/postgres-server.ts';
import { startTestServer, type TestServer } from './support/server.ts';

const embedded = !process.env.DATABASE_URL;
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
});

describe('the embedded server settings', () => {
  it.skipIf(!embedded)('gives shared buffers a quarter of the memory and the WAL buffers 64 MB (issue 33, bench part l)', async () => {
    // In bytes, whatever unit the server shows it in ('4GB', '64MB').
    const setting = async (name: string) =>
      Number((await sql<{ v: string }>`select pg_size_bytes(current_setting(${name})) as v`.execute(srv.context.db)).rows[0]!.v);
    const mb = (text: string) => Number(/^(\d+)MB$/.exec(text)![1]) * 1024 * 1024;
    const wanted = embeddedDefaults();
    expect(await setting('shared_buffers')).toBe(mb(wanted.shared_buffers!));
    expect(await setting('wal_buffers')).toBe(64 * 1024 * 1024);
    // A quarter of 24 GB, capped at 4 GB; an eighth of a small machine's memory no longer.
    expect(embeddedDefaults(24 * 1024 ** 3).shared_buffers).toBe('4096MB');
    expect(embeddedDefaults(8 * 1024 ** 3).shared_buffers).toBe('2048MB');
  });

  it.skipIf(!embedded)(
    'has autovacuum come back every 10 s, so a queue backlog is analyzed soon (issue 38, bench parts d then m)',
    async () => {
      const { rows } = await sql<{ v: string }>`select current_setting('autovacuum_naptime') as v`.execute(srv.context.db);
      expect(rows[0]!.v).toBe('10s'); // stock: 1min (test/job-table-statistics.test.ts shows what it changes)
    },
  );
});
