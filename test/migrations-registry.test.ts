// The migration registry (src/db/migrations/index.ts) says what runs and in which order. Kysely's Migrator runs the
// migrations sorted by name whatever the order of the object, so the registry must be written in that order to
// tell the truth, and every migration file must be in it (a file left out would never run: no directory scan).
import { readdirSync } from 'node:fs';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../src/db/database.ts';
import { loadMigrations, migrations } from '../src/db/migrations/index.ts';

const folder = new URL('../src/db/migrations/', import.meta.url);
let db: Db;
beforeAll(() => {
  db = createDb(inject('databaseUrl'), 1).db;
});
afterAll(() => db.destroy());

describe('migration registry', () => {
  it('is written in the order Kysely runs it (by name)', async () => {
    const ran = (await new Migrator({ db, provider: { getMigrations: loadMigrations } }).getMigrations()).map((m) => m.name);
    expect(Object.keys(migrations)).toEqual(ran);
    expect(ran).toHaveLength(Object.keys(migrations).length);
  });

  it('registers every migration file of the folder under its file name', async () => {
    const files = readdirSync(folder)
      .filter((f) => /^\d{4}_.+\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(migrations).sort()).toEqual(files);
    const loaded = await loadMigrations();
    for (const name of files) expect(loaded[name], name).toBe(await import(new URL(`${name}.ts`, folder).href));
  });
});
