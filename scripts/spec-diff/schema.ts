// Compares two dereferenced JSON Schemas in one direction.
// - 'request' (request bodies and parameters): every value an old client sent must still be accepted, so narrowing
//   (types, enums, bounds, patterns, new required fields) is breaking.
// - 'response' and 'payload' (2xx responses, webhook event bodies): every value the server sends must still be one
//   that an old client understands, so widening types, removing fields or dropping `required` is breaking. Removing a
//   response enum value is breaking too; adding one is not (the versioning policy in openapi.yaml info says so).
// allOf is merged into one schema; oneOf/anyOf are compared variant by variant by index (conservative: a reordering
// shows as changes); if/then/else/not are not compared. Cycles are cut when an (old, new) pair repeats on the
// current path.
import { isObj, type Obj } from './deref.ts';

export type Direction = 'request' | 'response' | 'payload';

interface SchemaChange {
  breaking: boolean;
  kind: string;
  location: string;
  detail: string;
}

type Emit = (c: SchemaChange) => void;

const MAX_DEPTH = 64; // safety net only: cycles are already cut by the (old, new) pair check

/** Emits every change found between `oldSchema` and `newSchema` (both dereferenced) at `location`. */
export function compareSchemas(oldSchema: unknown, newSchema: unknown, dir: Direction, location: string, emit: Emit): void {
  const onPath = new Map<Obj, Set<Obj>>();
  const seen = new Set<string>();
  const dedupEmit: Emit = (c) => {
    const key = `${c.kind}\u0000${c.location}\u0000${c.detail}`;
    if (!seen.has(key)) {
      seen.add(key);
      emit(c);
    }
  };
  walk(oldSchema, newSchema, { dir, emit: dedupEmit, onPath }, location, 0);
}

interface Ctx {
  dir: Direction;
  emit: Emit;
  onPath: Map<Obj, Set<Obj>>;
}

function walk(oldRaw: unknown, newRaw: unknown, ctx: Ctx, loc: string, depth: number): void {
  const a = flatten(oldRaw);
  const b = flatten(newRaw);
  if (a === b || depth > MAX_DEPTH) return;
  let set = ctx.onPath.get(a);
  if (set?.has(b)) return; // recursive schema: this pair is already being compared further up
  if (!set) ctx.onPath.set(a, (set = new Set()));
  set.add(b);
  try {
    compareTypes(a, b, ctx, loc);
    compareEnums(a, b, ctx, loc);
    if (ctx.dir === 'request') compareConstraints(a, b, ctx, loc);
    compareProperties(a, b, ctx, loc, depth);
    if (b.items !== undefined && a.items !== undefined) walk(a.items, b.items, ctx, `${loc}[]`, depth + 1);
    if (isObj(a.additionalProperties) && isObj(b.additionalProperties)) {
      walk(a.additionalProperties, b.additionalProperties, ctx, `${loc}{*}`, depth + 1);
    }
    compareVariants(a, b, ctx, loc, depth);
  } finally {
    set.delete(b);
  }
}

const kind = (ctx: Ctx, what: string): string => `${ctx.dir}-${what}`;

// ---- types ----------------------------------------------------------------------------------------------------

/** The JSON types a schema allows, or undefined for "any". 3.0 `nullable` and enum-only schemas are understood. */
function typesOf(s: Obj): Set<string> | undefined {
  let types: Set<string> | undefined;
  if (typeof s.type === 'string') types = new Set([s.type]);
  else if (Array.isArray(s.type)) types = new Set(s.type.filter((t): t is string => typeof t === 'string'));
  else {
    const values = enumOf(s);
    if (values) types = new Set(values.map(jsonType));
  }
  if (types && s.nullable === true) types.add('null');
  return types;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// `number` includes `integer`, so number -> integer narrows and integer -> number widens.
const covers = (types: Set<string>, t: string): boolean => types.has(t) || (t === 'integer' && types.has('number'));
const fmt = (types: Set<string> | undefined): string => (types ? [...types].join('|') : 'any');

function compareTypes(a: Obj, b: Obj, ctx: Ctx, loc: string): void {
  const before = typesOf(a);
  const after = typesOf(b);
  const change = `${fmt(before)} -> ${fmt(after)}`;
  if (ctx.dir === 'request') {
    if (!after) return;
    const lost = before ? [...before].filter((t) => !covers(after, t)) : ['any'];
    if (lost.length > 0) ctx.emit({ breaking: true, kind: kind(ctx, 'type-narrowed'), location: loc, detail: `type ${change}` });
    else if (before && [...after].some((t) => !covers(before, t))) {
      ctx.emit({ breaking: false, kind: kind(ctx, 'type-widened'), location: loc, detail: `type ${change}` });
    }
    return;
  }
  if (!before) return;
  const gained = after ? [...after].filter((t) => !covers(before, t)) : ['any'];
  if (gained.length > 0) ctx.emit({ breaking: true, kind: kind(ctx, 'type-changed'), location: loc, detail: `type ${change}` });
  else if (after && [...before].some((t) => !covers(after, t))) {
    ctx.emit({ breaking: false, kind: kind(ctx, 'type-narrowed'), location: loc, detail: `type ${change}` });
  }
}

// ---- enums ----------------------------------------------------------------------------------------------------

function enumOf(s: Obj): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum;
  if ('const' in s) return [s.const];
  return undefined;
}

const show = (values: unknown[]): string => values.map((v) => JSON.stringify(v)).join(', ');

function compareEnums(a: Obj, b: Obj, ctx: Ctx, loc: string): void {
  const before = enumOf(a);
  const after = enumOf(b);
  if (!before && !after) return;
  if (!before) {
    // A request value that was free is now restricted to a list; a response that now promises a list is fine.
    if (ctx.dir === 'request') {
      ctx.emit({ breaking: true, kind: kind(ctx, 'enum-value-removed'), location: loc, detail: `now restricted to ${show(after ?? [])}` });
    }
    return;
  }
  if (!after) {
    ctx.emit({ breaking: false, kind: kind(ctx, 'enum-value-added'), location: loc, detail: 'enum dropped: any value allowed' });
    return;
  }
  const afterKeys = new Set(after.map((v) => JSON.stringify(v)));
  const beforeKeys = new Set(before.map((v) => JSON.stringify(v)));
  const removed = before.filter((v) => !afterKeys.has(JSON.stringify(v)));
  const added = after.filter((v) => !beforeKeys.has(JSON.stringify(v)));
  if (removed.length > 0)
    ctx.emit({ breaking: true, kind: kind(ctx, 'enum-value-removed'), location: loc, detail: `removed ${show(removed)}` });
  if (added.length > 0) ctx.emit({ breaking: false, kind: kind(ctx, 'enum-value-added'), location: loc, detail: `added ${show(added)}` });
}

// ---- constraints (request only: a response's bounds do not restrict what a client may send) -------------------

const UPPER = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
const LOWER = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const patternsOf = (s: Obj): string[] =>
  typeof s.pattern === 'string' ? [s.pattern] : Array.isArray(s.pattern) ? s.pattern.filter((p): p is string => typeof p === 'string') : [];

function compareConstraints(a: Obj, b: Obj, ctx: Ctx, loc: string): void {
  const tightened = (detail: string): void => ctx.emit({ breaking: true, kind: 'request-constraint-tightened', location: loc, detail });
  for (const k of UPPER) {
    const before = num(a[k]);
    const after = num(b[k]);
    if (after !== undefined && (before === undefined || after < before)) tightened(`${k} ${before ?? 'none'} -> ${after}`);
  }
  for (const k of LOWER) {
    const before = num(a[k]);
    const after = num(b[k]);
    if (after !== undefined && (before === undefined || after > before)) tightened(`${k} ${before ?? 'none'} -> ${after}`);
  }
  const oldPatterns = new Set(patternsOf(a));
  for (const p of patternsOf(b)) if (!oldPatterns.has(p)) tightened(`pattern ${JSON.stringify(p)} added`);
  if (b.uniqueItems === true && a.uniqueItems !== true) tightened('uniqueItems added');
  const mult = num(b.multipleOf);
  const oldMult = num(a.multipleOf);
  if (mult !== undefined && (oldMult === undefined || oldMult % mult !== 0)) tightened(`multipleOf ${oldMult ?? 'none'} -> ${mult}`);
  // The server validates formats (ajv-formats), so a new or different format rejects values that used to pass.
  if (typeof b.format === 'string' && b.format !== a.format) tightened(`format ${String(a.format ?? 'none')} -> ${b.format}`);
  if (b.additionalProperties === false && a.additionalProperties !== false) tightened('additionalProperties: false added');
}

// ---- properties -----------------------------------------------------------------------------------------------

const propsOf = (s: Obj): Obj => (isObj(s.properties) ? s.properties : {});
const requiredOf = (s: Obj): Set<string> =>
  new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
const field = (loc: string, name: string): string => `${loc}.${name}`;

function compareProperties(a: Obj, b: Obj, ctx: Ctx, loc: string, depth: number): void {
  const oldProps = propsOf(a);
  const newProps = propsOf(b);
  const oldReq = requiredOf(a);
  const newReq = requiredOf(b);
  const emit = (breaking: boolean, what: string, name: string, detail: string): void =>
    ctx.emit({ breaking, kind: kind(ctx, what), location: field(loc, name), detail });

  for (const name of Object.keys(oldProps)) {
    if (!(name in newProps)) {
      if (ctx.dir === 'request') {
        // With additionalProperties: false (our request bodies) an old client sending the field now gets a 400.
        const closed = b.additionalProperties === false;
        emit(closed, 'field-removed', name, closed ? 'removed (unknown fields are rejected)' : 'removed');
      } else emit(true, 'field-removed', name, 'removed');
      continue;
    }
    if (ctx.dir !== 'request' && oldReq.has(name) && !newReq.has(name)) emit(true, 'field-became-optional', name, 'no longer required');
    walk(oldProps[name], newProps[name], ctx, field(loc, name), depth + 1);
  }
  if (ctx.dir === 'request') {
    for (const name of newReq) {
      if (oldReq.has(name)) continue;
      if (name in oldProps) emit(true, 'field-became-required', name, 'now required');
      else emit(true, 'field-added-required', name, 'new required field');
    }
  }
  for (const name of Object.keys(newProps)) {
    if (name in oldProps || (ctx.dir === 'request' && newReq.has(name))) continue;
    emit(false, 'field-added', name, ctx.dir === 'request' ? 'new optional field' : 'new field');
  }
}

// ---- oneOf / anyOf --------------------------------------------------------------------------------------------

function compareVariants(a: Obj, b: Obj, ctx: Ctx, loc: string, depth: number): void {
  for (const key of ['oneOf', 'anyOf'] as const) {
    const before = Array.isArray(a[key]) ? (a[key] as unknown[]) : undefined;
    const after = Array.isArray(b[key]) ? (b[key] as unknown[]) : undefined;
    if (!before && !after) continue;
    if (!before || !after) {
      ctx.emit({
        breaking: false,
        kind: 'schema-composition-changed',
        location: loc,
        detail: `${key} ${before ? 'removed' : 'added'}; variants not compared`,
      });
      continue;
    }
    const n = Math.min(before.length, after.length);
    for (let i = 0; i < n; i++) walk(before[i], after[i], ctx, `${loc}<${key}#${i}>`, depth + 1);
    if (before.length === after.length) continue;
    const detail = `${key} variants ${before.length} -> ${after.length}`;
    if (ctx.dir === 'request') {
      const lost = after.length < before.length;
      ctx.emit({ breaking: lost, kind: kind(ctx, lost ? 'type-narrowed' : 'type-widened'), location: loc, detail });
    } else {
      const gained = after.length > before.length;
      ctx.emit({ breaking: gained, kind: kind(ctx, gained ? 'type-changed' : 'type-narrowed'), location: loc, detail });
    }
  }
}

// ---- allOf merging --------------------------------------------------------------------------------------------

// Memoized per source object so that a recursive allOf yields a stable (cyclic) merged graph.
const flatMemo = new WeakMap<Obj, Obj>();

/** Merges allOf into one schema (properties and required united, types/enums intersected, bounds tightest). */
function flatten(schema: unknown): Obj {
  if (!isObj(schema)) return {}; // boolean schemas and junk: treat as "any"
  const hit = flatMemo.get(schema);
  if (hit) return hit;
  if (!Array.isArray(schema.allOf)) {
    flatMemo.set(schema, schema);
    return schema;
  }
  const out: Obj = {};
  flatMemo.set(schema, out);
  const { allOf, ...rest } = schema;
  mergeInto(out, rest);
  for (const part of allOf as unknown[]) {
    const flat = flatten(part);
    if (flat !== out) mergeInto(out, flat);
  }
  return out;
}

const MIN_WINS = new Set<string>(UPPER);
const MAX_WINS = new Set<string>(LOWER);

function mergeInto(target: Obj, src: Obj): void {
  for (const [k, v] of Object.entries(src)) {
    const cur = target[k];
    if (cur === undefined) {
      target[k] = k === 'properties' && isObj(v) ? { ...v } : k === 'required' && Array.isArray(v) ? [...v] : v;
      continue;
    }
    if (k === 'properties' && isObj(cur) && isObj(v)) {
      for (const [name, s] of Object.entries(v)) cur[name] = name in cur ? { allOf: [cur[name], s] } : s;
    } else if (k === 'required' && Array.isArray(cur) && Array.isArray(v)) {
      target[k] = [...new Set([...cur, ...v])];
    } else if (k === 'type') {
      const both = [cur, v].map((t) => new Set(typeof t === 'string' ? [t] : Array.isArray(t) ? t : []));
      const [x, y] = both as [Set<string>, Set<string>];
      const common = [...x].filter((t) => covers(y, t)).concat([...y].filter((t) => t === 'integer' && x.has('number')));
      target[k] = [...new Set(common)];
    } else if (k === 'enum' && Array.isArray(cur) && Array.isArray(v)) {
      const keys = new Set(v.map((e) => JSON.stringify(e)));
      target[k] = cur.filter((e) => keys.has(JSON.stringify(e)));
    } else if (MIN_WINS.has(k) && typeof cur === 'number' && typeof v === 'number') {
      target[k] = Math.min(cur, v);
    } else if (MAX_WINS.has(k) && typeof cur === 'number' && typeof v === 'number') {
      target[k] = Math.max(cur, v);
    } else if (k === 'pattern' && cur !== v) {
      target[k] = [...new Set([...(Array.isArray(cur) ? cur : [cur]), v])];
    } else if (k === 'items' || (k === 'additionalProperties' && isObj(cur) && isObj(v))) {
      target[k] = { allOf: [cur, v] };
    } else if (k === 'additionalProperties' && v === false) {
      target[k] = false;
    }
    // Anything else (descriptions, a second oneOf/anyOf, if/then): the first one wins; not compared further.
  }
}
