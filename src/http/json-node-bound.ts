// How many JSON nodes (objects, arrays and object keys) a valid body of an operation can hold, and a scan of the raw
// bytes that counts them before JSON.parse. Parsing is where a hostile body costs most, and what it costs is its
// objects, arrays and keys (scalars in arrays are cheap: 2.6 million numbers parse in ~90 ms): 5 MB of `{}` items
// (1.7 million objects) took JSON.parse 0.3–1.2 s of the event loop, 5 s with three test files at once (the fuzz
// test's largest arrays), and 400,000 keys in one object 0.3–0.6 s, however little the schema allows. The scan takes
// ~5 ms for the same bytes, so a body holding far more nodes than any valid request could is refused before it is
// parsed. Other bodies are parsed and validated as usual, and their mistakes named field by field
// (src/http/bounded-validation.ts): the scan refuses only past twice the bound and past PARSED_NODES, which
// JSON.parse reads in tens of milliseconds. Objects and arrays are counted apart from keys, each against its own
// bound: a bot flow's many optional keys would otherwise let 1 MB of `{}` through.

/** Nodes of each kind any body may hold: 100,000 empty carousel cards are still parsed, and the array named in the 400. */
const PARSED_NODES = 200_000;

type Schema = boolean | { [keyword: string]: unknown };

/** Objects and arrays; keys. Bounded apart: a schema of many optional keys says little about how many objects. */
export type Nodes = { containers: number; keys: number };

const NONE: Nodes = { containers: 0, keys: 0 };
const ANY: Nodes = { containers: Infinity, keys: Infinity };
const plus = (a: Nodes, b: Nodes): Nodes => ({ containers: a.containers + b.containers, keys: a.keys + b.keys });
const times = (n: number, a: Nodes): Nodes => ({ containers: a.containers && n * a.containers, keys: a.keys && n * a.keys });
const least = (a: Nodes, b: Nodes): Nodes => ({ containers: Math.min(a.containers, b.containers), keys: Math.min(a.keys, b.keys) });
const most = (list: Nodes[]): Nodes =>
  list.reduce((a, b) => ({ containers: Math.max(a.containers, b.containers), keys: Math.max(a.keys, b.keys) }), NONE);

const bounds = new WeakMap<object, Nodes>();

/**
 * Most objects and arrays, and most keys (the body itself included), a JSON value valid against `schema` can
 * contain; Infinity where the schema does not bound them (an array of objects without `maxItems`, an object that
 * allows other keys without `maxProperties`, a recursive schema). An upper bound: keywords it does not read (`not`,
 * `if`, `unevaluated*`, …) only narrow what is valid, except `patternProperties`, which is read as "any extra
 * property". `schema` is dereferenced (the operations' bodies are: src/http/operations.ts); a `$ref` left over is
 * unbounded.
 */
function boundOf(schema: Schema, inProgress: Set<object>): Nodes {
  if (schema === false) return NONE;
  if (schema === true || typeof schema !== 'object' || schema === null) return ANY;
  const known = bounds.get(schema);
  if (known !== undefined) return known;
  if (inProgress.has(schema)) return ANY; // recursive: any depth is valid
  inProgress.add(schema);
  const bound = ownBound(schema, inProgress);
  inProgress.delete(schema);
  bounds.set(schema, bound);
  return bound;
}

function ownBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): Nodes {
  if (typeof s.$ref === 'string') return ANY;
  let bound: Nodes;
  if ('const' in s) bound = nodesIn(s.const);
  else if (Array.isArray(s.enum)) bound = most(s.enum.map(nodesIn));
  else {
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : typeof s.type === 'string' ? [s.type] : undefined;
    const allows = (t: string) => types === undefined || types.includes(t);
    bound = most([allows('object') ? objectBound(s, inProgress) : NONE, allows('array') ? arrayBound(s, inProgress) : NONE]);
  }
  // A valid value satisfies every allOf part, and one of the oneOf/anyOf branches, besides the schema's own keywords.
  for (const part of asSchemas(s.allOf)) bound = least(bound, boundOf(part, inProgress));
  for (const branches of [s.oneOf, s.anyOf]) {
    const list = asSchemas(branches);
    if (list.length) bound = least(bound, most(list.map((b) => boundOf(b, inProgress))));
  }
  return bound;
}

const ONE_KEY: Nodes = { containers: 0, keys: 1 };

function objectBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): Nodes {
  let total: Nodes = { containers: 1, keys: 0 };
  const named = (s.properties ?? {}) as Record<string, Schema>;
  for (const child of Object.values(named)) total = plus(total, plus(ONE_KEY, boundOf(child, inProgress)));
  const extra = s.additionalProperties === undefined || s.patternProperties !== undefined ? true : (s.additionalProperties as Schema);
  if (extra !== false) {
    const count = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity;
    total = plus(total, times(count, plus(ONE_KEY, boundOf(extra, inProgress))));
  }
  return total;
}

function arrayBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): Nodes {
  const prefix = asSchemas(s.prefixItems);
  const rest = s.items === undefined ? true : (s.items as Schema);
  const max = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
  let total: Nodes = { containers: 1, keys: 0 };
  for (const item of prefix.slice(0, max)) total = plus(total, boundOf(item, inProgress));
  return plus(total, times(Math.max(0, max - prefix.length), boundOf(rest, inProgress)));
}

const asSchemas = (value: unknown): Schema[] => (Array.isArray(value) ? (value as Schema[]) : []);

function nodesIn(value: unknown): Nodes {
  if (value === null || typeof value !== 'object') return NONE;
  if (Array.isArray(value)) return value.reduce<Nodes>((n, v) => plus(n, nodesIn(v)), { containers: 1, keys: 0 });
  return Object.values(value).reduce<Nodes>((n, v) => plus(n, plus(ONE_KEY, nodesIn(v))), { containers: 1, keys: 0 });
}

/** The bound itself (boundOf): most objects and arrays, and most keys, of a value valid against `schema`. */
export function nodeBound(schema: unknown): Nodes {
  return boundOf(schema as Schema, new Set());
}

/** How many of each a body may hold before the scan refuses it; Infinity where its schema does not bound them. */
export function nodeCaps(schema: unknown): Nodes {
  const bound = nodeBound(schema);
  const cap = (n: number) => (Number.isFinite(n) ? Math.max(2 * n, PARSED_NODES) : Infinity);
  return { containers: cap(bound.containers), keys: cap(bound.keys) };
}

/**
 * Which kind of node the JSON text `bytes` holds more of than `caps` allows (an unquoted `{` or `[` opens an object
 * or an array, an unquoted `:` follows a key), read without parsing it; undefined when neither. Stops at the first
 * node past a cap. A text no longer than both caps cannot hold more, and is not read.
 */
export function nodesOverCap(bytes: Uint8Array, caps: Nodes): keyof Nodes | undefined {
  if (bytes.length <= caps.containers && bytes.length <= caps.keys) return undefined;
  let containers = 0;
  let keys = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // backslash: the next byte is escaped (a quote among them)
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++containers > caps.containers) return 'containers';
    } else if (b === 0x3a && ++keys > caps.keys) return 'keys';
  }
  return undefined;
}
