// Hot statements compiled once per statement shape (README, Architecture: "Hot reads"). A marked query
// (`/* prepared:<name> */`) is also a named prepared statement (prepared.ts); compiledOnce() saves building and
// compiling it with Kysely on every request, and runs the tenant guard once per statement shape.
//
// A statement's shape is what its SQL text depends on in its values: the booleans, nulls and undefineds, the
// lengths of arrays, the keys of objects, the empty strings and zeros (values a builder may branch on), and the
// values of the properties named in `keep` (a string the builder branches on, raw SQL). Every other string, number
// and Date, and every array as a whole, is a value: on the first execution of a shape it is replaced by a stand-in,
// and the stand-ins must come back as the compiled statement's parameters (each one, or each element of an array
// built from them); each execution of the shape puts its own values in their places.
import { CompiledQuery, type Compilable, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import { assertScoped, loadTenantTables, tenantGuardOf, TenantScopeError } from './tenant.ts';

/** What a compiled-once statement takes: plain data (an id, a limit, a flag, a list, a record of them). */
type Value = string | number | boolean | null | undefined | Date | readonly Value[] | { readonly [key: string]: Value };
type Params = { readonly [key: string]: Value };

/** A statement built, compiled and checked once per shape, then executed with new values: see compiledOnce(). */
export type CompiledOnce<P extends Params, R> = { execute(db: Db, params: P): Promise<R[]> };

/**
 * Shapes kept per statement (each a few kilobytes of SQL, and a prepared statement per connection): the direct send's
 * accepting statement has one per requested channel, origin, conversation source and flag that occur, tens in
 * practice. A builder whose shapes grow without bound is built and checked on every execution past this.
 */
const MAX_SHAPES = 256;

/**
 * A hot statement, compiled once per process and shape. `build` writes the query with Kysely as any other (and marks
 * it `/* prepared:<name> *\/`, so it is also a named prepared statement); it is called once per shape (above), with a
 * stand-in for each value of `params`, and the SQL kept: each execution only puts the values in their places.
 * Building and compiling a query costs tens of microseconds a request (the read of bench part b is a few hundred);
 * the send's two statements, with the tenant guard, were a quarter of the API's CPU per send (bench part m1).
 *
 * The tenant guard runs once per shape too: on the first execution the built query must pass it with the stand-in
 * of `params.organizationId` (so the organization's id is a parameter, never inlined), and each execution on a
 * handle bound to an organization (bindTenant) must give that organization's id as `organizationId`
 * (TenantScopeError otherwise). `build` must depend on nothing but its arguments, branch only on what the shape
 * holds (name any other value it branches on in `keep`), and put every other value in the query as a value, or
 * an array of values (never `sql.raw`/`sql.lit`, never transformed: JSON.stringify it before): a value that does not
 * come back as a parameter is refused on the first execution of its shape.
 */
export function compiledOnce<P extends Params, R>(
  name: string,
  build: (db: Db, params: P) => Compilable<R> | RawBuilder<R>,
  options: { keep?: readonly string[] } = {},
): CompiledOnce<P, R> {
  const keep = new Set(options.keep);
  const shapes = new Map<string, Promise<Shape>>();
  return {
    async execute(db, params) {
      const values: unknown[] = [];
      const key = walk(name, params, keep, values, undefined);
      let shape = shapes.get(key);
      if (!shape) {
        shape = shapeOf(name, db, build as unknown as Build, params, keep);
        if (shapes.size < MAX_SHAPES) {
          shapes.set(key, shape);
          shape.catch(() => shapes.delete(key));
        }
      }
      const { sql, slots, scoped } = await shape;
      const guard = tenantGuardOf(db);
      if (guard && scoped && params.organizationId !== guard.organizationId) {
        throw new TenantScopeError(`Statement ${name} is not run for the handle's organization.`);
      }
      return (
        await db.executeQuery<R>(
          CompiledQuery.raw(
            sql,
            slots.map((slot) => valueOf(slot, values)),
          ),
        )
      ).rows;
    },
  };
}

/** Where a parameter comes from: the nth value of the execution, an array of such, or a constant of the shape. */
type Slot = number | { array: Slot[] } | { value: unknown };

const valueOf = (slot: Slot, values: readonly unknown[]): unknown =>
  typeof slot === 'number' ? values[slot] : 'array' in slot ? slot.array.map((s) => valueOf(s, values)) : slot.value;

/** A statement's builder: a Kysely query builder, or a raw `sql` statement. */
type Build = (db: Db, params: Params) => { compile(db: Db): CompiledQuery<unknown> };

/** The SQL of a compiled-once statement's shape, and where each of its parameters comes from. */
type Shape = { sql: string; slots: Slot[]; scoped: boolean };

/**
 * Walks `value` in a fixed order: appends its values (above) to `values` — or, making a shape (`standIns` given),
 * appends and returns stand-ins in their places — and answers the shape's key.
 */
function walk(name: string, value: unknown, keep: ReadonlySet<string>, values: unknown[], standIns: unknown[] | undefined): string {
  let key = '';
  const visit = (v: unknown, path: string, setInPlace: (standIn: unknown) => void): void => {
    if (v === null || v === undefined || typeof v === 'boolean' || v === '' || v === 0) {
      key += v === undefined ? 'u,' : `${JSON.stringify(v)},`;
      return;
    }
    if (typeof v === 'string' || typeof v === 'number' || v instanceof Date) {
      const i = values.push(v) - 1;
      key += typeof v === 'string' ? 's,' : typeof v === 'number' ? 'n,' : 'd,';
      if (standIns) setInPlace((standIns[i] = standInOf(name, v, i)));
      return;
    }
    if (Array.isArray(v)) {
      const i = values.push(v) - 1;
      const copy: unknown[] | undefined = standIns ? [...(v as unknown[])] : undefined;
      if (standIns) setInPlace((standIns[i] = copy));
      key += '[';
      v.forEach((x: unknown, j) => visit(x, `${path}[${j}]`, (s) => (copy![j] = s)));
      key += '],';
      return;
    }
    if (Object.getPrototypeOf(v) === Object.prototype) {
      // Kept values, and values of the shape, stay as they are in the stand-in copy.
      const copy: Record<string, unknown> | undefined = standIns ? { ...(v as Record<string, unknown>) } : undefined;
      if (standIns) setInPlace(copy);
      key += '{';
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        key += `${k}:`;
        if (keep.has(k)) key += `=${JSON.stringify(x) ?? 'u'},`;
        else visit(x, `${path}.${k}`, (s) => (copy![k] = s));
      }
      key += '},';
      return;
    }
    throw new TypeError(`compiledOnce(${name}): ${path || 'params'} is not data (a string, number, boolean, Date, array or plain object)`);
  };
  let root: unknown;
  visit(value, '', (s) => (root = s));
  if (standIns) standIns.push(root); // the stand-in of the whole params, last (walk() answers only the key)
  return key;
}

/** A stand-in no caller passes: a string with a NUL, a number far below any limit or offset, a date before any. */
function standInOf(name: string, v: string | number | Date, i: number): unknown {
  if (typeof v === 'string') return `\u0000${name}:${i}`;
  if (typeof v === 'number') return -987_654_321_000 - i;
  return new Date(-8.64e15 + i);
}

async function shapeOf(name: string, db: Db, build: Build, params: Params, keep: ReadonlySet<string>): Promise<Shape> {
  const values: unknown[] = [];
  const standIns: unknown[] = [];
  walk(name, params, keep, values, standIns);
  const sample = standIns.pop() as Params;
  const index = new Map<unknown, number>();
  standIns.forEach((s, i) => index.set(s, i));
  // Compiled without the guard (it would look for the real organization's id); checked below with the stand-in.
  const plain = db.withoutPlugins() as Db;
  const compiled = build(plain, sample).compile(plain); // a raw `sql` statement compiles on a handle, a builder on its own
  if (!new RegExp(`^(?:select )?/\\* prepared:${name} \\*/`).test(compiled.sql)) {
    throw new Error(`compiledOnce(${name}): the query must be marked /* prepared:${name} */`);
  }
  const slotOf = (p: unknown): Slot => {
    const i = index.get(p);
    if (i !== undefined) return i;
    if (Array.isArray(p) && p.some((x) => index.has(x))) return { array: p.map(slotOf) };
    return { value: p };
  };
  const slots = compiled.parameters.map(slotOf);
  // A value is a parameter, or is not used by this shape (a CHATAPP request's session length): a stand-in written
  // into the SQL (sql.raw, sql.lit) or into a constant (transformed: JSON.stringify, arithmetic) is refused.
  const leaked = standIns.flatMap((s, i) => {
    if (Array.isArray(s)) return [];
    // A string's stand-in as it is and as JSON writes it (its NUL escaped); a number's digits; a date's year.
    const marks = s instanceof Date ? ['-271821'] : [String(s), JSON.stringify(s).slice(1, -1)];
    const found = (text: string) => marks.some((mark) => text.includes(mark));
    const inConstant = slots.some((slot) => typeof slot === 'object' && 'value' in slot && found(textOf(slot.value)));
    return found(compiled.sql) || inConstant ? [describe(values[i])] : [];
  });
  if (leaked.length)
    throw new Error(`compiledOnce(${name}): ${leaked.join(', ')} did not become parameters (written into the SQL or transformed)`);
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

const textOf = (v: unknown): string => (typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : (JSON.stringify(v) ?? ''));

const describe = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v) : String(v));
