// Bodies that put the largest array the body limit allows into one array of a request schema: every array of
// every JSON request body, nested ones included (an array inside the first item of another, inside a oneOf
// branch …). The rest of the body is one valid-ish sample (fixed seed), so validation reaches the array; the items
// are empty objects, the shape that made Ajv's all-errors validation quadratic (each item fails every branch of an
// anyOf/oneOf). Used by the fuzz test and by `npm run bench` (h).
import fc from 'fast-check';
import { deref, validish, type Doc, type Schema } from './schema.ts';
import type { OpInfo } from './requests.ts';

/** Where an array sits in a body: property names, and "0" for the first item of an enclosing array. */
type ArrayLocation = {
  path: string[];
  /** `type` values of the oneOf/anyOf branches the path goes through, keyed by the branch's object path. */
  types: Array<{ at: string[]; type: unknown }>;
};

export type HugeBody = { operationId: string; location: string; items: number; bytes: Buffer };

/** Default JSON body limit (BODY_LIMIT_BYTES); an operation's `x-max-request-bytes` overrides it. */
const DEFAULT_BODY_LIMIT = 1024 * 1024;
const MAX_DEPTH = 8;
const MARKER = 'HUGE-ARRAY-HERE';

/** Every array location of `schema`, each once (recursive schemas are followed to MAX_DEPTH). */
function arrayLocations(doc: Doc, schema: Schema | undefined): ArrayLocation[] {
  const out = new Map<string, ArrayLocation>();
  const walk = (s0: Schema | undefined, path: string[], types: ArrayLocation['types'], stack: Set<Schema>): void => {
    const s = deref(doc, s0);
    if (!s || typeof s !== 'object' || stack.has(s) || path.length > MAX_DEPTH) return;
    const inner = new Set(stack).add(s);
    for (const part of (s.allOf ?? []) as Schema[]) walk(part, path, types, inner);
    for (const branch of [...((s.oneOf ?? []) as Schema[]), ...((s.anyOf ?? []) as Schema[])]) {
      const t = deref(doc, deref(doc, branch)?.properties?.type);
      const type = t?.const ?? (Array.isArray(t?.enum) && t.enum.length === 1 ? t.enum[0] : undefined);
      walk(branch, path, type === undefined ? types : [...types, { at: path, type }], inner);
    }
    const isArray = s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array')) || s.items !== undefined;
    if (isArray) {
      const key = path.join('.');
      if (!out.has(key)) out.set(key, { path, types });
      if (s.items && typeof s.items === 'object') walk(s.items as Schema, [...path, '0'], types, inner);
    }
    for (const [name, child] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
      if (deref(doc, child)?.readOnly) continue;
      walk(child, [...path, name], types, inner);
    }
  };
  walk(schema, [], [], new Set());
  return [...out.values()];
}

/** `base` with `value` at `path`, creating objects (and one-item arrays for "0") on the way. */
function place(base: unknown, path: string[], value: unknown, types: ArrayLocation['types']): unknown {
  const root: { v: unknown } = { v: structuredClone(base) };
  let parent: Record<string, unknown> = root;
  let key = 'v';
  const typed = (at: string[]) => types.find((t) => t.at.length === at.length && t.at.every((p, i) => p === path[i]));
  for (let i = 0; i <= path.length; i++) {
    const seg = path[i];
    if (i === path.length) {
      parent[key] = value;
      break;
    }
    let node = parent[key];
    if (seg === '0') {
      if (!Array.isArray(node) || node.length === 0) node = [{}];
      (node as unknown[]).splice(1); // one item: the array around the target stays small
    } else if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      node = {};
    }
    const t = typed(path.slice(0, i));
    if (t && typeof node === 'object' && node !== null && !Array.isArray(node)) (node as Record<string, unknown>).type = t.type;
    parent[key] = node;
    parent = node as Record<string, unknown>;
    key = seg!;
  }
  return root.v;
}

/** For one operation with a JSON body: one body per array location, each as close to the body limit as `{}` items fit. */
export function hugeArrayBodies(doc: Doc, op: OpInfo, seed = 1): HugeBody[] {
  if (!op.json) return [];
  const limit = (doc.paths[op.path]?.[op.method.toLowerCase()]?.['x-max-request-bytes'] as number | undefined) ?? DEFAULT_BODY_LIMIT;
  const [base] = fc.sample(validish(doc, op.json), { numRuns: 1, seed });
  const out: HugeBody[] = [];
  for (const location of arrayLocations(doc, op.json)) {
    // The items are spliced into the text (a string repeat), not built and serialised: the test server shares
    // this process, and /health is timed beside it.
    const [before, after] = JSON.stringify(place(base, location.path, MARKER, location.types)).split(`"${MARKER}"`) as [string, string];
    // each `{}` item and its comma: 3 bytes; a little room for the answer's own framing
    const items = Math.max(1, Math.floor((limit - 64 - before.length - after.length) / 3));
    const bytes = Buffer.from(`${before}[${'{},'.repeat(items - 1)}{}]${after}`);
    out.push({ operationId: op.operationId, location: location.path.join('.') || '(body)', items, bytes });
  }
  return out;
}
