// Hostile building blocks: values no client should send, and mutations of valid-ish JSON values. Everything is
// a fast-check arbitrary (or a pure function used in `.map`), so runs are reproducible from a seed and shrink
// towards the first, smallest alternatives.
import fc from 'fast-check';

/** JSON number tokens JSON.stringify cannot produce: they travel through `JSON.rawJSON`. */
const SPECIAL_NUMBER_TOKENS = [
  '1e400',
  '-1e400',
  '-0',
  '9223372036854775807',
  '-9223372036854775809',
  '18446744073709551616',
  '1e-400',
  '123456789012345678901234567890',
  '0.1e1',
  '2.5',
] as const;

const rawJSON = (text: string): unknown => (JSON as unknown as { rawJSON: (t: string) => unknown }).rawJSON(text);

const LONG = 100_000;

/** Strings with NUL, lone surrogates, bidi overrides, injection-looking text, huge lengths. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\u0000'.repeat(3), 'x'.repeat(10) + '\u0000') },
  { weight: 3, arbitrary: fc.constantFrom('\uD800', 'x\uDFFFy', '\uDBFF\uD800', '\uD83D') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '\u202Egnp.exe',
      '\uFEFF',
      '\r\n\r\nX: y',
      "' OR 1=1 --",
      '${7*7}{{7*7}}',
      '%FF%00',
      '\\',
      '',
      ' ',
      'null',
      '__proto__',
      '😀'.repeat(10),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(10_000, LONG).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, LONG).map((n) => '\u0000'.repeat(n)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

/** Numbers at and past every limit; `-0` and 64-bit edges included. */
const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_NUMBER_TOKENS).map(rawJSON) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, Number.MAX_VALUE, Number.MIN_VALUE, -1, 0, 2 ** 31, -(2 ** 31) - 1, 0.5),
  },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

/** A JSON object with an own `__proto__` key (what JSON.parse makes of it), and other reserved names. */
const protoObject = () => JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as unknown;

/** Any hostile JSON value: usually of the wrong type wherever it lands. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 4, arbitrary: hostileNumber },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], [[]], { '': '' }) },
  { weight: 1, arbitrary: fc.constant(null).map(protoObject) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Markers replaced in the serialized text (JSON.stringify cannot nest 10,000 levels itself). */
const DEEP_MARKERS = {
  arrays: '\u0001DEEP_ARRAYS\u0001',
  objects: '\u0001DEEP_OBJECTS\u0001',
} as const;

const DEEP_DEPTH = 10_000;

/** JSON text: JSON.stringify plus the deep-nesting markers expanded. */
export function serialize(value: unknown): string {
  let text = JSON.stringify(value) ?? 'null';
  const arrays = JSON.stringify(DEEP_MARKERS.arrays);
  const objects = JSON.stringify(DEEP_MARKERS.objects);
  if (text.includes(arrays)) text = text.split(arrays).join(`${'['.repeat(DEEP_DEPTH)}${']'.repeat(DEEP_DEPTH)}`);
  if (text.includes(objects)) text = text.split(objects).join(`${'{"a":'.repeat(DEEP_DEPTH)}1${'}'.repeat(DEEP_DEPTH)}`);
  return text;
}

type Path = Array<string | number>;

/** Every node of a JSON value (the root is `[]`), breadth-first, at most `max`. */
function nodePaths(value: unknown, max = 200): Array<{ path: Path; kind: 'object' | 'array' | 'leaf' }> {
  const out: Array<{ path: Path; kind: 'object' | 'array' | 'leaf' }> = [];
  const queue: Array<{ v: unknown; path: Path }> = [{ v: value, path: [] }];
  while (queue.length && out.length < max) {
    const { v, path } = queue.shift()!;
    if (Array.isArray(v)) {
      out.push({ path, kind: 'array' });
      v.forEach((item, i) => queue.push({ v: item, path: [...path, i] }));
    } else if (v && typeof v === 'object' && !(JSON as unknown as { isRawJSON: (x: unknown) => boolean }).isRawJSON(v)) {
      out.push({ path, kind: 'object' });
      for (const [k, item] of Object.entries(v)) queue.push({ v: item, path: [...path, k] });
    } else out.push({ path, kind: 'leaf' });
  }
  return out;
}

function clone(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce((node: any, k) => node?.[k], value);
}

/** A copy of `value` with the node at `path` replaced (`undefined` deletes an object key). */
function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = clone(value);
  const parent = getAt(copy, path.slice(0, -1)) as any;
  const key = path[path.length - 1]!;
  if (replacement === undefined && parent && !Array.isArray(parent)) delete parent[key];
  else if (parent && typeof parent === 'object')
    Object.defineProperty(parent, key, { value: replacement, enumerable: true, writable: true, configurable: true });
  return copy;
}

const showPath = (path: Path) => ['body', ...path].join('.');

export type BodyMutation = { value: unknown; note: string };

type Node = { path: Path; kind: 'object' | 'array' | 'leaf' };

/** The `i`-th (modulo) of the nodes that pass `filter`, or of all nodes when none does. */
function nth(body: unknown, i: number, filter: (n: Node) => boolean): Path {
  const nodes = nodePaths(body);
  const fitting = nodes.filter(filter);
  const pool = fitting.length ? fitting : nodes;
  return pool[i % pool.length]!.path;
}

const anyNode = () => true;
const isLeaf = (n: Node) => n.kind === 'leaf' && n.path.length > 0;

/**
 * Hostile values in a valid-ish JSON body, as functions of the body: a string where the body has a string, a
 * number where it has a number, so the request otherwise passes validation and the value reaches the handler
 * and the database. Where it goes is an index into the body's nodes, so body and mutation shrink independently;
 * each names what it did (`note`), so a failure reads as a reproduction.
 */
export const valueMutation: fc.Arbitrary<(body: unknown) => BodyMutation> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(fc.nat(), hostileString).map(([i, v]) => (body: unknown) => {
      const p = nth(body, i, (n) => isLeaf(n) && typeof getAt(body, n.path) === 'string');
      return { value: setAt(body, p, v), note: `hostile string at ${showPath(p)} (${describeString(v)})` };
    }),
  },
  fc.tuple(fc.nat(), hostileNumber).map(([i, v]) => (body: unknown) => {
    const p = nth(body, i, (n) => isLeaf(n) && typeof getAt(body, n.path) === 'number');
    return { value: setAt(body, p, v), note: `number ${JSON.stringify(v)} at ${showPath(p)}` };
  }),
);

/** Wrong types, missing and extra fields, huge arrays, deep nesting: the body's shape broken. */
export const structureMutation: fc.Arbitrary<(body: unknown) => BodyMutation> = fc.oneof(
  fc.constant((body: unknown) => ({ value: body, note: 'valid-ish body' })),
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(), hostileValue).map(([i, v]) => (body: unknown) => {
      const p = nth(body, i, anyNode);
      return { value: setAt(body, p, v), note: `wrong value at ${showPath(p)}` };
    }),
  },
  fc
    .tuple(fc.nat(), fc.constantFrom<unknown>({}, 'x', null, rawJSON('1e400'), [], true, 7), fc.constantFrom(100_000, 20_000))
    .map(([i, item, n]) => (body: unknown) => {
      const p = nth(body, i, (x) => x.kind === 'array');
      return { value: setAt(body, p, new Array(n).fill(item)), note: `${n} items of ${JSON.stringify(item)} at ${showPath(p)}` };
    }),
  fc.tuple(fc.nat(), fc.constantFrom(DEEP_MARKERS.arrays, DEEP_MARKERS.objects)).map(([i, m]) => (body: unknown) => {
    const p = nth(body, i, anyNode);
    return { value: setAt(body, p, m), note: `${DEEP_DEPTH}-deep ${m === DEEP_MARKERS.arrays ? 'arrays' : 'objects'} at ${showPath(p)}` };
  }),
  fc.nat().map((i) => (body: unknown) => {
    const p = nth(body, i, (x) => x.path.length > 0 && typeof x.path[x.path.length - 1] === 'string');
    return p.length ? { value: setAt(body, p, undefined), note: `missing ${showPath(p)}` } : { value: undefined, note: 'no body' };
  }),
  fc
    .tuple(
      fc.nat(),
      fc.oneof(fc.constantFrom('__proto__', 'constructor', 'x', '', '\u0000', 'id', 'organizationId'), fc.string({ maxLength: 10 })),
      hostileValue,
    )
    .map(([i, k, v]) => (body: unknown) => {
      const p = nth(body, i, (x) => x.kind === 'object');
      const target = p.length === 0 && (body === null || typeof body !== 'object' || Array.isArray(body)) ? {} : body;
      return { value: setAt(target, [...p, k], v), note: `extra field ${JSON.stringify(k)} at ${showPath(p)}` };
    }),
);

/** Where a body holds text no client should send (for the notes of a request built with hostile free text). */
export function hostileLeaves(body: unknown): string[] {
  return nodePaths(body, 500)
    .filter((n) => n.kind === 'leaf')
    .map((n) => ({ path: n.path, v: getAt(body, n.path) }))
    .filter(
      (x): x is { path: Path; v: string } =>
        typeof x.v === 'string' && (/[\u0000-\u001f\u202e\ufeff]|\p{Cs}/u.test(x.v) || x.v.length > 1_000),
    )
    .map((x) => `${showPath(x.path)}=${describeString(x.v)}`);
}

export function describeString(s: string): string {
  if (s.length <= 120) return JSON.stringify(s);
  if (s === s[0]!.repeat(s.length)) return `${s.length} × ${JSON.stringify(s[0])}`;
  return `${JSON.stringify(s.slice(0, 60))}…(${s.length} chars)`;
}

/** Bodies that are not JSON at all, or JSON at the edges of what parsers take. */
export const rawJsonText: fc.Arbitrary<{ bytes: Buffer; note: string }> = fc
  .constantFrom<Array<string | Buffer>>(
    '',
    '{',
    '{"a":1,}',
    '\uFEFF{}',
    '[1,2',
    'nul',
    '"\\ud800"',
    '{"a":"\\u0000"}',
    'NaN',
    '1e400',
    '-0',
    '{"a":1}{"b":2}',
    '{"a":1,"a":2}',
    Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
    Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
    '\u0000',
  )
  .map((t) => ({
    bytes: Buffer.isBuffer(t) ? t : Buffer.from(t),
    note: `raw body ${JSON.stringify(Buffer.isBuffer(t) ? t.toString('latin1') : t).slice(0, 60)}`,
  }));

/** Path segments: bad percent-encoding, traversal, NUL, overlong UTF-8, huge. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '%FF',
      '%zz',
      '%',
      '%ED%A0%80',
      '%00',
      '%C0%AF',
      '%2F',
      '%2e%2e',
      '..',
      '.',
      '%%',
      '%u0041',
      '%F0%9F%98%80',
      '%0A',
      "'",
      'null',
      '-1',
      '0',
      '1e400',
      '9223372036854775807',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(2_000, 7_000).map((n) => 'a'.repeat(n)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(encodeLoosely) },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase().replace(/-/g, '')) },
);

/** Query values (already encoded): number edges for integer parameters, bad encodings for all. */
export const hostileQueryNumber: fc.Arbitrary<string> = fc.constantFrom(
  '1e400',
  '-0',
  '9223372036854775807',
  '-9223372036854775809',
  '1e309',
  'Infinity',
  '0x10',
  '1.5',
  '0',
  '-1',
  '%FF',
);

export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('%FF', '%zz', '%', '%ED%A0%80', '%C0%80', '%F4%90%80%80') },
  { weight: 2, arbitrary: fc.constantFrom('%00', 'a%00b', '%00%00') },
  { weight: 3, arbitrary: fc.constantFrom('', '%20', 'true', 'null', '[]', '1e400', '-0', '9223372036854775807', 'NaN', '%2C%2C', ',') },
  { weight: 1, arbitrary: fc.constant('q'.repeat(6_000)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map(encodeLoosely) },
);

/** encodeURIComponent, except that a lone surrogate becomes its (invalid) UTF-8 bytes' escapes. */
function encodeLoosely(s: string): string {
  let out = '';
  for (const ch of s) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
  }
  return out;
}
