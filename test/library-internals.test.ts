// Where the service leans on a library's unpublished internals, this file pins the behaviour it relies on, so an
// upgrade that changes them fails here, loudly and by name, instead of somewhere downstream:
// - pg-boss 12.35 (src/jobs/queue.ts): `pg-boss/dist/plans.js` exports `insertJobs` and `notifyChannelSql`, and a
//   statement built from `jobInsertOf`'s head and tail queues a job pg-boss itself finds, with its NOTIFY.
// - pg 8.23 (src/db/prepared.ts): a pool client's `query(text, values)` can be replaced per client, and a config
//   object with `name` makes a named prepared statement (pg_prepared_statements shows it).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../src/db/database.ts';
import { withPreparedStatements } from '../src/db/prepared.ts';
import { jobInsertOf } from '../src/jobs/queue.ts';

const url = inject('databaseUrl');

describe('pg-boss internals (src/jobs/queue.ts)', () => {
  let boss: PgBoss;
  let db: Db;
  const schema = `internals_${process.pid}`;
  beforeAll(async () => {
    boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
    await boss.start();
    db = createDb(url, 2).db;
  });
  afterAll(async () => {
    await boss.stop({ graceful: false });
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
    await db.destroy();
  });

  it('dist/plans.js still exports the two builders the queue imports', async () => {
    const plans = (await import('pg-boss/dist/plans.js')) as Record<string, unknown>;
    expect(typeof plans.insertJobs).toBe('function');
    expect(typeof plans.notifyChannelSql).toBe('function');
  });

  it('a statement made of the captured head and tail queues a job pg-boss fetches, and notifies its listeners', async () => {
    const queue = `probe-${randomUUID().slice(0, 8)}`;
    await boss.createQueue(queue, { notify: true } as never);
    const insert = await jobInsertOf(boss, queue);
    expect(insert).not.toBeNull();
    expect(insert!.notify).toContain('pg_notify(');
    const payload = JSON.stringify([{ data: { probe: 1 } }]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      const channel = (await client.query(`select ${insert!.notify!.replace(/^pg_notify\((.*), '[^']*'\)$/, '$1')} as c`)).rows[0]
        .c as string;
      await listener.query(`listen "${channel}"`);
      await client.query(`${insert!.head}$1${insert!.tail}`, [payload]);
      await client.query(`select ${insert!.notify}`);
      const [job] = await boss.fetch(queue);
      expect(job?.data).toEqual({ probe: 1 });
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toContain(queue);
    } finally {
      await client.end();
      await listener.end();
    }
  });
});

describe('pg internals (src/db/prepared.ts)', () => {
  it('a marked statement is prepared under its name on the client that runs it, once per connection', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const wrapped = withPreparedStatements(pool);
    try {
      const client = await wrapped.connect();
      try {
        const text = `/* prepared:internals-probe */ select $1::int + 1 as n`;
        expect((await client.query(text, [41])).rows).toEqual([{ n: 42 }]);
        expect((await client.query(text, [1])).rows).toEqual([{ n: 2 }]);
        const prepared = (await client.query(`select name, statement from pg_prepared_statements`)).rows as Array<{
          name: string;
          statement: string;
        }>;
        expect(prepared.filter((p) => p.statement === text)).toEqual([
          { name: expect.stringMatching(/^internals-probe-[0-9a-f]{16}$/), statement: text },
        ]);
        // An unmarked statement stays unnamed.
        await client.query('select 1 as one', []);
        expect(
          (await client.query(`select count(*)::int as n from pg_prepared_statements where statement = 'select 1 as one'`)).rows[0].n,
        ).toBe(0);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });
});
