// text[] values read through the server's pool (src/db/text-array.ts): every element PostgreSQL can print comes
// back as written, whether the plain split or pg-types' parser reads it.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDb, type Db } from '../src/db/database.ts';
import { parseTextArray } from '../src/db/text-array.ts';

let db: Db;
beforeAll(() => {
  db = createDb(inject('databaseUrl'), 1).db;
});
afterAll(() => db.destroy());

const CASES: Array<Array<string | null>> = [
  [],
  ['messages:write', 'contacts:read', 'brand:admin'],
  ['one'],
  [null],
  ['a', null, 'b'],
  ['NULL', 'null', ''],
  ['with space', 'comma,inside', 'quote"inside', 'back\\slash', '{braces}', 'curly}', '{'],
  ['ünïcödé', 'emoji 🎉', 'tab\there', 'new\nline'],
];

describe('text[] columns', () => {
  it.each(CASES.map((value) => [JSON.stringify(value), value]))('%s comes back as written', async (_, value) => {
    const { rows } = await sql<{ v: Array<string | null> }>`select ${value}::text[] as v`.execute(db);
    expect(rows[0]!.v).toEqual(value);
  });

  it('a two-dimensional array and explicit bounds take the general parser', async () => {
    const { rows } = await sql<{ a: unknown; b: unknown }>`select '{{a,b},{c,d}}'::text[] as a, '[0:1]={x,y}'::text[] as b`.execute(db);
    const general = pg.types.getTypeParser(1009 as Parameters<typeof pg.types.getTypeParser>[0], 'text') as (text: string) => unknown;
    expect(rows[0]!.a).toEqual(general('{{a,b},{c,d}}'));
    expect(rows[0]!.b).toEqual(general('[0:1]={x,y}'));
  });

  it("agrees with pg-types' parser on PostgreSQL's own output of many arrays", async () => {
    const words = ['a', 'b c', 'x,y', 'NULL', '', 'q"', 'b\\', '{', '}', 'scope:write', 'é'];
    const arrays = Array.from({ length: 300 }, (_, i) =>
      Array.from({ length: i % 7 }, (_, j) => (j === 3 && i % 5 === 0 ? null : words[(i * 7 + j * 3) % words.length]!)),
    );
    const { rows } = await sql<{ t: string }>`select v::text as t from unnest(${arrays.map((a) => JSON.stringify(a))}::jsonb[]) as j(x),
      lateral (select array(select jsonb_array_elements_text(x)) as v) s`.execute(db);
    const general = pg.types.getTypeParser(1009 as Parameters<typeof pg.types.getTypeParser>[0], 'text') as (text: string) => unknown;
    expect(rows).toHaveLength(arrays.length);
    for (const { t } of rows) expect(parseTextArray(t)).toEqual(general(t));
  });
});
