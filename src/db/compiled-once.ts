// Hot reads compiled once per process (README, Architecture: "Hot reads"). A marked query (`/* prepared:<name> */`)
// is also a named prepared statement (prepared.ts); compiledOnce() saves building and compiling it with Kysely on
// every request, and runs the tenant guard once per statement shape.
import { CompiledQuery, type Compilable } from 'kysely';
import type { Db } from './database.ts';
import { assertScoped, loadTenantTables, tenantGuardOf, TenantScopeError } from './tenant.ts';

/** What a compiled-once statement takes: named values, each a string or a number (an id, a limit, an offset). */
type Params = Record<string, string | number>;

/** A statement built, compiled and checked once, then executed with new values: see compiledOnce(). */
export type CompiledOnce<P extends Params, R> = { execute(db: Db, params: P): Promise<R[]> };

/**
 * A hot read, compiled once per process. `build` writes the query with Kysely as any other (and marks it
 * `/* prepared:<name> *\/`, so it is also a named prepared statement); it is called once, with a stand-in for each
 * value of `params`, and the SQL kept: each execution only puts the values in their places. Building and compiling
 * a query costs tens of microseconds a request (the read of bench part b is a few hundred).
 *
 * The tenant guard runs once per statement shape too: on the first execution the built query must pass it with
 * the stand-in of `params.organizationId` (so the organization's id is a parameter, never inlined), and each
 * execution on a handle bound to an organization (bindTenant) must give that organization's id as
 * `organizationId` (TenantScopeError otherwise). `build` must depend on nothing but its arguments, and put every
 * value of `params` in the query as a value (never `sql.raw`/`sql.lit`): a value that does not come back as a
 * parameter is refused on the first execution.
 */
export function compiledOnce<P extends Params, R>(name: string, build: (db: Db, params: P) => Compilable<R>): CompiledOnce<P, R> {
  let shape: Promise<Shape> | undefined;
  return {
    async execute(db, params) {
      shape ??= shapeOf(name, db, build as (db: Db, params: Params) => Compilable<unknown>, params).catch((error: unknown) => {
        shape = undefined;
        throw error;
      });
      const { sql, slots, scoped } = await shape;
      const guard = tenantGuardOf(db);
      if (guard && scoped && params.organizationId !== guard.organizationId) {
        throw new TenantScopeError(`Statement ${name} is not run for the handle's organization.`);
      }
      const values = slots.map((slot) => (typeof slot === 'string' ? params[slot] : slot.value));
      return (await db.executeQuery<R>(CompiledQuery.raw(sql, values))).rows;
    },
  };
}

/** The SQL of a compiled-once statement, and where each of its parameters comes from (a named value or a constant). */
type Shape = { sql: string; slots: Array<string | { value: unknown }>; scoped: boolean };

async function shapeOf(name: string, db: Db, build: (db: Db, params: Params) => Compilable<unknown>, params: Params): Promise<Shape> {
  // Stand-ins no caller passes: strings with a NUL, numbers far below any limit or offset.
  const standIns = new Map<unknown, string>();
  const keys = Object.keys(params);
  const sample: Params = {};
  keys.forEach((key, i) => {
    const standIn = typeof params[key] === 'number' ? -987_654_321_000 - i : `\u0000${name}:${key}`;
    sample[key] = standIn;
    standIns.set(standIn, key);
  });
  // Compiled without the guard (it would look for the real organization's id); checked below with the stand-in.
  const compiled = build(db.withoutPlugins() as Db, sample).compile();
  if (!new RegExp(`^(?:select )?/\\* prepared:${name} \\*/`).test(compiled.sql)) {
    throw new Error(`compiledOnce(${name}): the query must be marked /* prepared:${name} */`);
  }
  const slots = compiled.parameters.map((value) => standIns.get(value) ?? { value });
  const missing = keys.filter((key) => !slots.includes(key));
  if (missing.length) throw new Error(`compiledOnce(${name}): ${missing.join(', ')} did not become parameters`);
  const tables = await loadTenantTables(db);
  let scoped = false;
  try {
    assertScoped(compiled.query, sample.organizationId as string, tables);
    scoped = 'organizationId' in params;
  } catch (error) {
    throw new TenantScopeError(`compiledOnce(${name}): ${(error as Error).message}`);
  }
  return { sql: compiled.sql, slots, scoped };
}
