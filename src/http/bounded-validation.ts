// Request validation in time linear in the request. Ajv with `allErrors: true` is quadratic where it matters: a
// failing item validated by a separate function (a `$ref`'d schema, every item of a oneOf/anyOf) adds its errors
// with `vErrors.concat(...)`, a copy of every error so far, so 20,000 empty carousel cards held the event loop
// 4.7 s and 100,000 for minutes. So the API decides validity with first-error validators (they stop at the first
// failure, and at `maxItems` before any item), which also coerce and fill defaults on the real request when it is
// valid. Only a refused request is described in detail, by the all-errors validators run on a bounded copy of it:
// each array cut to its first KEPT_ITEMS items, each object to its first KEPT_KEYS fields, NODE_BUDGET values in
// all. Details the cut may have caused (a `required` field that was cut away, an `anyOf` over a shortened array)
// are dropped; the sizes the cut hides (`maxItems`, `maxProperties`) are read from the schema; and the first
// validator's failure is always reported. The details of a huge body are then a subset of what Ajv would list,
// and never empty.
//
// Ajv's `uniqueItems` compares every pair of items when they are not declared scalars (a `$ref`'d `Id` is not):
// 10,000 distinct contact ids, a valid blast, took 1.6 s. It is replaced by a linear keyword (useLinearUniqueItems).
import type { Ajv, ErrorObject, KeywordDefinition } from 'ajv';
import { MAX_REPORTED_ERRORS } from './request-guards.ts';

/** Items of one array kept in the copy: a few more than an answer reports. */
const KEPT_ITEMS = MAX_REPORTED_ERRORS + 5;
/** Fields of one object kept in the copy: every request schema's maps allow at most 100, objects have fewer fields. */
const KEPT_KEYS = 100;
/** Values (of any kind) in the copy. The all-errors run is quadratic in the worst case: bounded here. */
const NODE_BUDGET = 1_000;

type Json = Record<string, unknown>;
export type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null; schema?: unknown };
/** The oneOf narrower (src/http/one-of-errors.ts) for the operation's body. */
export type Narrow = (errors: ErrorObject[], body: unknown) => ErrorObject[];

type Cut = { pointer: string; size: number; kind: 'array' | 'object' };
type BoundedCopy = {
  value: unknown;
  /** JSON pointers (as Ajv's instancePath) of the values with something cut inside them, ancestors included. */
  tainted: Set<string>;
  /** Arrays and objects that lost items or fields, with their real size. */
  cuts: Cut[];
};

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const segmentsOf = (pointer: string) =>
  pointer === ''
    ? []
    : pointer
        .split('/')
        .slice(1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` with its arrays and objects cut (see the top of the file). */
function boundedCopy(value: unknown): BoundedCopy {
  const tainted = new Set<string>();
  const cuts: Cut[] = [];
  let budget = NODE_BUDGET;
  // Bodies are at most 32 levels deep (assertStorableValue); the cap only guards the recursion.
  const copy = (v: unknown, pointer: string, depth: number): [unknown, boolean] => {
    budget--;
    if (typeof v !== 'object' || v === null) return [v, false];
    const room = budget > 0 && depth < 64;
    let cut = false;
    let out: unknown;
    if (Array.isArray(v)) {
      const items: unknown[] = [];
      for (let i = 0; i < Math.min(v.length, room ? KEPT_ITEMS : 0) && budget > 0; i++) {
        const [item, below] = copy(v[i], `${pointer}/${i}`, depth + 1);
        items.push(item);
        cut ||= below;
      }
      if (items.length < v.length) cuts.push({ pointer, size: v.length, kind: 'array' });
      cut ||= items.length < v.length;
      out = items;
    } else {
      const entries: Array<[string, unknown]> = [];
      let size = 0;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        size++;
        if (!room || entries.length >= KEPT_KEYS || budget <= 0) continue;
        const [field, below] = copy((v as Json)[key], `${pointer}/${escape(key)}`, depth + 1);
        entries.push([key, field]);
        cut ||= below;
      }
      if (entries.length < size) cuts.push({ pointer, size, kind: 'object' });
      cut ||= entries.length < size;
      out = Object.fromEntries(entries); // own fields even for "__proto__"
    }
    if (cut) tainted.add(pointer);
    return [out, cut];
  };
  const [copied] = copy(value, '', 0);
  return { value: copied, tainted, cuts };
}

function valueAt(root: unknown, segments: string[]): unknown {
  let v = root;
  for (const s of segments) v = typeof v === 'object' && v !== null && Object.hasOwn(v, s) ? (v as Json)[s] : undefined;
  return v;
}

/**
 * Whether an error found in the copy is true of the request. Below an untouched value, always. At a value with
 * something cut inside it: its type, a field not allowed (it exists in the request too), a size over a maximum
 * (the request is at least as large), duplicates among untouched items, and a missing field the request lacks too;
 * anything else there (a minimum, anyOf, oneOf, if/then …) may come from the cut and is dropped.
 */
function trueOfRequest(e: ErrorObject, copy: BoundedCopy, request: unknown): boolean {
  if (!copy.tainted.has(e.instancePath)) return true;
  switch (e.keyword) {
    case 'type':
    case 'additionalProperties':
    case 'propertyNames':
    case 'maxItems':
    case 'maxProperties':
    case 'maxLength':
      return true;
    case 'required': {
      const missing = String((e.params as { missingProperty?: unknown }).missingProperty);
      const node = valueAt(request, segmentsOf(e.instancePath));
      return !(isObject(node) && Object.hasOwn(node, missing));
    }
    case 'uniqueItems': {
      const { i, j } = e.params as { i: number; j: number };
      return !copy.tainted.has(`${e.instancePath}/${i}`) && !copy.tainted.has(`${e.instancePath}/${j}`);
    }
    default:
      return false;
  }
}

/** Every schema that may apply at `segments` below `root` (through properties, items, maps, allOf/anyOf/oneOf, if/then/else). */
function schemasAt(root: Json, segments: string[]): Set<Json> {
  const resolve = (s: unknown): Json | undefined => {
    let n = s;
    for (let i = 0; isObject(n) && typeof n.$ref === 'string' && i < 20; i++) n = valueAt(root, segmentsOf(n.$ref.replace(/^#/, '')));
    return isObject(n) ? n : undefined;
  };
  const expand = (s: unknown, into: Set<Json>): void => {
    const r = resolve(s);
    if (!r || into.has(r)) return;
    into.add(r);
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(r[k])) for (const sub of r[k] as unknown[]) expand(sub, into);
    for (const k of ['then', 'else'] as const) if (r[k] !== undefined) expand(r[k], into);
  };
  let at = new Set<Json>();
  expand(root, at);
  for (const seg of segments) {
    const next = new Set<Json>();
    for (const s of at) {
      const properties = isObject(s.properties) ? s.properties : undefined;
      const child =
        properties && Object.hasOwn(properties, seg)
          ? properties[seg]
          : /^\d+$/.test(seg) && isObject(s.items)
            ? s.items
            : isObject(s.additionalProperties)
              ? s.additionalProperties
              : undefined;
      if (child !== undefined) expand(child, next);
    }
    at = next;
  }
  return at;
}

/** `maxItems` / `maxProperties` of the arrays and objects the copy cut: the copy is too small to show them. */
function sizeErrors(root: unknown, cuts: Cut[]): ErrorObject[] {
  if (!isObject(root)) return [];
  const out: ErrorObject[] = [];
  for (const cut of cuts) {
    const keyword = cut.kind === 'array' ? 'maxItems' : 'maxProperties';
    const limits = [...schemasAt(root, segmentsOf(cut.pointer))].map((s) => s[keyword]).filter((n): n is number => typeof n === 'number');
    if (limits.length === 0) continue;
    const limit = Math.max(...limits);
    if (cut.size <= limit) continue;
    const message = `must NOT have more than ${limit} ${cut.kind === 'array' ? 'items' : 'properties'}`;
    out.push({ instancePath: cut.pointer, schemaPath: `#/${keyword}`, keyword, params: { limit }, message });
  }
  return out;
}

const within = (path: string, ancestor: string) => path === ancestor || path.startsWith(`${ancestor}/`);
const bodyOf = (data: unknown) => (isObject(data) ? data.requestBody : undefined);

/**
 * The errors to report for `data`, which a first-error validator refused with `firsts`: what `detailed` (the
 * same schema with allErrors) finds in a bounded copy, narrowed and kept where true of the request, the sizes the
 * copy hides, and the first validator's own errors when those do not already cover its failure (a bad item past
 * the kept ones). The latter are not narrowed: a oneOf there would list each branch's first complaint, but every
 * array of oneOf values in the document allows fewer items than the copy keeps, so its `maxItems` fails first.
 */
export function describeFailure(data: unknown, firsts: ErrorObject[], detailed: Validate, narrow: Narrow): ErrorObject[] {
  const copy = boundedCopy(data);
  detailed(copy.value);
  const found = [
    ...narrow(detailed.errors ?? [], bodyOf(copy.value)).filter((e) => trueOfRequest(e, copy, data)),
    ...sizeErrors(detailed.schema, copy.cuts), // after narrowing, which would drop those below a oneOf
  ];
  const last = firsts.at(-1);
  if (!last || found.some((e) => within(e.instancePath, last.instancePath))) return found;
  return [...firsts, ...found];
}

/** A stable text for a JSON value: equal values (fields in any order) give equal texts. */
function canonical(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'undefined';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`)
    .join(',')}}`;
}

/** `uniqueItems` in one pass over the items (a map of their canonical texts), Ajv's error and message. */
const linearUniqueItems: KeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: function uniqueItems(this: unknown, schema: boolean, data: unknown[]): boolean {
    const self = uniqueItems as unknown as { errors: Array<Partial<ErrorObject>> | null };
    self.errors = null;
    if (!schema) return true;
    const seen = new Map<string, number>();
    for (let i = 0; i < data.length; i++) {
      const key = canonical(data[i]);
      const j = seen.get(key);
      if (j !== undefined) {
        self.errors = [
          { keyword: 'uniqueItems', params: { i, j }, message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)` },
        ];
        return false;
      }
      seen.set(key, i);
    }
    return true;
  },
};

/** Replaces Ajv's pairwise `uniqueItems` with the linear one (every Ajv the server compiles schemas with). */
export function useLinearUniqueItems(ajv: Ajv): Ajv {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(linearUniqueItems);
  return ajv;
}
