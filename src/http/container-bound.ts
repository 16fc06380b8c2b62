// How many JSON objects and arrays a valid body of an operation can hold, and a scan of the raw bytes that counts
// them before JSON.parse. Parsing is where a hostile body costs most: 5 MB of `{}` items (1.7 million objects) took
// JSON.parse 0.3–1.2 s of the event loop, and 5 s with three test files at once (the fuzz test's largest arrays),
// however few items the array's schema allows. The scan takes ~5 ms for the same bytes, so a body holding far more
// containers than any valid request could is refused before it is parsed. Other bodies are parsed and validated as
// usual, and their mistakes named field by field (src/http/bounded-validation.ts): the scan refuses only past
// twice the bound and past PARSED_CONTAINERS, which JSON.parse reads in tens of milliseconds.

/** Containers any body may hold: 100,000 empty carousel cards are still parsed, and the array named in the 400. */
const PARSED_CONTAINERS = 200_000;

type Schema = boolean | { [keyword: string]: unknown };

const bounds = new WeakMap<object, number>();

/**
 * Most objects and arrays (the body itself included) a JSON value valid against `schema` can contain; Infinity
 * where the schema does not bound it (an array of objects without `maxItems`, a map of objects without
 * `maxProperties`, a recursive schema). An upper bound: keywords it does not read (`not`, `if`, `unevaluated*`,
 * `pattern*`, …) only narrow what is valid, except `patternProperties`, which is read as "any extra property".
 * `schema` is dereferenced (the operations' bodies are: src/http/operations.ts); a `$ref` left over is unbounded.
 */
function containerBound(schema: unknown): number {
  return boundOf(schema as Schema, new Set());
}

function boundOf(schema: Schema, inProgress: Set<object>): number {
  if (schema === false) return 0;
  if (schema === true || typeof schema !== 'object' || schema === null) return Infinity;
  const known = bounds.get(schema);
  if (known !== undefined) return known;
  if (inProgress.has(schema)) return Infinity; // recursive: any depth is valid
  inProgress.add(schema);
  const bound = ownBound(schema, inProgress);
  inProgress.delete(schema);
  bounds.set(schema, bound);
  return bound;
}

function ownBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): number {
  if (typeof s.$ref === 'string') return Infinity;
  let bound: number;
  if ('const' in s) bound = containersIn(s.const);
  else if (Array.isArray(s.enum)) bound = Math.max(0, ...s.enum.map(containersIn));
  else {
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : typeof s.type === 'string' ? [s.type] : undefined;
    const allows = (t: string) => types === undefined || types.includes(t);
    bound = Math.max(allows('object') ? objectBound(s, inProgress) : 0, allows('array') ? arrayBound(s, inProgress) : 0);
  }
  // A valid value satisfies every allOf part, and one of the oneOf/anyOf branches, besides the schema's own keywords.
  for (const part of asSchemas(s.allOf)) bound = Math.min(bound, boundOf(part, inProgress));
  for (const branches of [s.oneOf, s.anyOf]) {
    const list = asSchemas(branches);
    if (list.length) bound = Math.min(bound, Math.max(...list.map((b) => boundOf(b, inProgress))));
  }
  return bound;
}

function objectBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): number {
  let total = 1;
  const named = (s.properties ?? {}) as Record<string, Schema>;
  for (const child of Object.values(named)) total += boundOf(child, inProgress);
  const extra = s.additionalProperties === undefined || s.patternProperties !== undefined ? true : (s.additionalProperties as Schema);
  const perExtra = boundOf(extra, inProgress);
  if (perExtra > 0) {
    const count = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity;
    total += count * perExtra;
  }
  return total;
}

function arrayBound(s: { [keyword: string]: unknown }, inProgress: Set<object>): number {
  const prefix = asSchemas(s.prefixItems);
  const rest = s.items === undefined ? true : (s.items as Schema);
  const max = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
  let total = 1;
  prefix.slice(0, max).forEach((item) => (total += boundOf(item, inProgress)));
  const perItem = boundOf(rest, inProgress);
  if (perItem > 0) total += Math.max(0, max - prefix.length) * perItem;
  return total;
}

const asSchemas = (value: unknown): Schema[] => (Array.isArray(value) ? (value as Schema[]) : []);

function containersIn(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + (Array.isArray(value) ? value : Object.values(value)).reduce<number>((n, v) => n + containersIn(v), 0);
}

/** Containers a body may hold before the scan refuses it; Infinity when its schema does not bound them. */
export function containerCap(schema: unknown): number {
  const bound = containerBound(schema);
  return Number.isFinite(bound) ? Math.max(2 * bound, PARSED_CONTAINERS) : Infinity;
}

/**
 * Whether the JSON text `bytes` holds more than `cap` objects and arrays (an unquoted `{` or `[`), read without
 * parsing it; stops at the first one past the cap. A text of `cap` bytes or fewer cannot, and is not read.
 */
export function holdsMoreContainers(bytes: Uint8Array, cap: number): boolean {
  if (bytes.length <= cap) return false;
  let count = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // backslash: the next byte is escaped (a quote among them)
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if ((b === 0x7b || b === 0x5b) && ++count > cap) return true;
  }
  return false;
}
