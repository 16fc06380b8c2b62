// pg-boss's job tables are analyzed soon after a backlog arrives: the embedded server's autovacuum_naptime is 10 s
// (embeddedDefaults, src/db/postgres-server.ts). Issue 38: analyzed while a queue was empty (a bulk
// import's quiet minute, or an operator's VACUUM ANALYZE), a backlog queued right after was planned as 2 rows: every
// fetch read all queued jobs and sorted them, and dispatch ran 4.7 times slower until autovacuum came back.
import { sql } from 'kysely';
import { fetchNextJob } from 'pg-boss/dist/plans.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../src/jobs/queue-names.ts';
import { jobInsertOf } from '../src/jobs/queue.ts';
import { startTestServer, type TestServer } from './support/server.ts';

const embedded = !process.env.DATABASE_URL;
let srv: TestServer;
let schema: string;
beforeAll(async () => {
  srv = await startTestServer(); // no workers: a backlog stays queued
  // The server's own queue schema (each test server has one), as pg-boss names it in its job insert.
  const insert = await jobInsertOf(srv.context.queue!, QUEUES.messageDispatch);
  schema = /INSERT INTO\s+(\w+)\./i.exec(insert!.head)![1]!;
});
afterAll(() => srv.close());

/** The plan of the fetch pg-boss runs for the dispatch queue's workers (200 jobs), with its values inlined. */
async function fetchPlan(): Promise<string> {
  const q = fetchNextJob({
    schema,
    table: 'job_common',
    name: QUEUES.messageDispatch,
    limit: 200,
    includeMetadata: false,
    policy: 'standard',
  } as never);
  const text = q.text.replace(/\$(\d+)/g, (_: string, i: string) => {
    const v = (q.values as unknown[])[Number(i) - 1];
    return typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
  });
  return srv.context.db.transaction().execute(async (tx) => {
    const r = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${text}`).execute(tx);
    return r.rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

describe("the statistics of pg-boss's job tables", () => {
  it.skipIf(!embedded)(
    'a backlog queued after the table was analyzed empty is analyzed within the naptime, and fetched in index order',
    { timeout: 60_000 },
    async () => {
      const db = srv.context.db;
      expect((await sql<{ v: string }>`select current_setting('autovacuum_naptime') as v`.execute(db)).rows[0]!.v).toBe('10s');
      const table = sql.table(`${schema}.job_common`);
      await sql`vacuum (analyze) ${table}`.execute(db); // empty: what the settle after a bulk import saw
      const boss = srv.context.queue!;
      for (let i = 0; i < 15; i++) {
        await boss.insert(
          QUEUES.messageDispatch,
          Array.from({ length: 1000 }, () => ({ data: { messageIds: [crypto.randomUUID()] } })),
        );
      }
      // Planned on the empty table's statistics: every queued job read and sorted (the slow fetch).
      expect(await fetchPlan()).toMatch(/Sort Key: j_1\.priority DESC, j_1\.created_on/);
      const analyzed = async () =>
        (
          await sql<{ at: Date | null }>`select last_autoanalyze as at from pg_stat_user_tables
          where relid = ${`${schema}.job_common`}::regclass`.execute(db)
        ).rows[0]!.at;
      // Stock autovacuum (a 1 min naptime) comes back within this only now and then; the embedded server's 10 s does.
      const deadline = Date.now() + 30_000;
      while (!(await analyzed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
      expect(await analyzed()).not.toBeNull();
      const plan = await fetchPlan();
      expect(plan).not.toMatch(/Sort Key/);
      expect(plan).toMatch(/Index Scan using job_common_i11/);
    },
  );
});
