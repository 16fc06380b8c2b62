// Statements marked `/* prepared:<name> */` are named prepared statements (src/db/prepared.ts). A column change
// while the process runs (a migration during a rolling deploy) must not fail them: the stale statement is prepared
// again and the call answers with the new columns.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, type Db } from '../src/db/database.ts';

let db: Db;
beforeAll(() => {
  db = createDb(inject('databaseUrl'), 1).db; // one connection: the statement is prepared on it once
});
afterAll(() => db.destroy());

describe('prepared statements', () => {
  it('survive a column added to their table: prepared again, and the retry answers with the new column', async () => {
    const table = `prepared_probe_${process.pid}_${Date.now()}`;
    await sql`create table ${sql.table(table)} (id int primary key, a text)`.execute(db);
    try {
      await sql`insert into ${sql.table(table)} values (1, 'x')`.execute(db);
      const read = () => sql<Record<string, unknown>>`/* prepared:probe */ select * from ${sql.table(table)} where id = ${1}`.execute(db);
      expect((await read()).rows).toEqual([{ id: 1, a: 'x' }]);
      expect((await read()).rows).toEqual([{ id: 1, a: 'x' }]);
      await sql`alter table ${sql.table(table)} add column b text not null default 'y'`.execute(db);
      expect((await read()).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
      expect((await read()).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    } finally {
      await sql`drop table ${sql.table(table)}`.execute(db);
    }
  });
});
