// Per operation: arbitraries of whole hostile HTTP requests, derived from the document. A request starts
// valid-ish (path, query, headers and body from the schemas and their examples) and gets hostility of one
// focus — hostile values in an otherwise valid body, a broken body structure, a path parameter, the query, the
// headers — or several at once ("mixed"). Unchanged valid-ish requests come up too (the baseline: 2xx answers
// are still checked against the document by the test server).
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { deref, paramText, validish, type Doc, type Schema } from './schema.ts';
import {
  describeString,
  hostileLeaves,
  hostileQueryNumber,
  hostileQueryValue,
  hostileSegment,
  hostileString,
  structureMutation,
  valueMutation,
  rawJsonText,
  serialize,
} from './hostile.ts';
import type { OutgoingRequest } from './http.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Param = { name: string; schema: Schema | undefined; required: boolean };

export type OpInfo = {
  operationId: string;
  method: string;
  path: string;
  isPublic: boolean;
  pathParams: Param[];
  query: Param[];
  headers: Param[];
  json: Schema | undefined;
  multipart: Schema | undefined;
  /** 503 when the operation documents it (/health): the only 5xx besides 501 a hostile request may get. Documented
   * 502s (upstream provider failures) are not excused: hostile input must not reach a provider. */
  documented5xx: number[];
};

/** The operations of the document with what the fuzzer needs of each. */
export function describeOperations(doc: Doc): OpInfo[] {
  const out: OpInfo[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Schema) => deref(doc, p)!);
      const of = (where: string) =>
        params
          .filter((p) => p.in === where)
          .map((p) => ({ name: p.name as string, schema: p.schema as Schema, required: Boolean(p.required) }));
      const content = op.requestBody?.content ?? {};
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        isPublic: !(op.security ?? []).length,
        pathParams: (path.match(/\{\w+\}/g) ?? []).map(
          (m) => of('path').find((p) => p.name === m.slice(1, -1)) ?? { name: m.slice(1, -1), schema: undefined, required: true },
        ),
        query: of('query'),
        headers: of('header'),
        json: content['application/json']?.schema,
        multipart: content['multipart/form-data']?.schema,
        documented5xx: Object.keys(op.responses ?? {})
          .map(Number)
          .filter((n) => n === 503),
      });
    }
  }
  return out;
}

/** A request as generated: what is sent, and what to print when it fails. */
export type FuzzRequest = OutgoingRequest & {
  /** Authorization for the "unauthenticated" variant (a hostile one), or undefined for none. */
  badAuth: string | undefined;
  notes: string[];
};

type Plan = {
  segs: string[];
  query: Array<[string, string]>;
  headers: Record<string, string | string[]>;
  bodyValue: unknown;
  body: { bytes: Buffer; note: string } | undefined;
  contentType: string | undefined;
  chunked: boolean;
  badAuth: string | undefined;
  notes: string[];
};

type Patch = (p: Plan) => Plan;

const with_ =
  (note: string, f: (p: Plan) => Partial<Plan>): Patch =>
  (p) => ({ ...p, ...f(p), notes: [...p.notes, note] });

const isInteger = (doc: Doc, s: Schema | undefined) => {
  const t = deref(doc, s)?.type;
  return t === 'integer' || t === 'number' || (Array.isArray(t) && (t.includes('integer') || t.includes('number')));
};

const HUGE_HEADER = 8_000; // one big header; all headers stay under Node's 16 KB limit (the protocol test goes past it)

const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=zzz',
  'application/json; charset=utf-16',
  'application/json; charset=klingon',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/merge-patch+json',
  '*/*',
  'application/json\u00ff',
  '',
] as const;

const CONTENT_ENCODINGS = ['gzip', 'deflate', 'br', 'x-unknown', 'gzip, identity', 'identity', 'compress'] as const;

const BAD_AUTH = [
  'Bearer',
  'Bearer ',
  'Bearer msk_',
  'Bearer msk_x_y',
  'Bearer msk_%FF_%00',
  'Basic Zm9vOmJhcg==',
  'Bearer msk_\u00ff\u00fe_\u00e9',
  `Bearer ${'A'.repeat(HUGE_HEADER)}`,
  'Bearer msk_00000000_0000000000000000000000000000000000000000000',
  'Digest username="x"',
  'Bearer\tmsk_a_b',
] as const;

function target(op: OpInfo, p: Plan): string {
  let i = 0;
  const path = op.path.replace(/\{\w+\}/g, () => p.segs[i++] ?? '');
  const q = p.query.map(([k, v]) => (v === '\u0000bare' ? k : `${k}=${v}`)).join('&');
  return q ? `${path}?${q}` : path;
}

function finish(op: OpInfo, p: Plan): FuzzRequest {
  const headers: Record<string, string | string[]> = { ...p.headers };
  let body: Buffer | undefined = p.body?.bytes;
  if (!body && p.bodyValue !== undefined) body = Buffer.from(serialize(p.bodyValue));
  if (body && p.contentType !== undefined) headers['content-type'] = p.contentType;
  const req: FuzzRequest = {
    method: op.method,
    target: target(op, p),
    headers,
    body,
    chunked: p.chunked,
    badAuth: p.badAuth,
    notes: p.notes,
  };
  Object.defineProperty(req, fc.toStringMethod, { value: () => describeRequest(req), enumerable: false });
  return req;
}

/** One line a human can turn into a curl command. */
export function describeRequest(r: FuzzRequest): string {
  const t = r.target.length > 300 ? `${r.target.slice(0, 300)}…(${r.target.length} chars)` : r.target;
  const headers = Object.entries(r.headers)
    .map(([k, v]) => `${k}: ${describeString(String(v))}`)
    .join('; ');
  const body = r.body
    ? ` body(${r.body.length} B${r.chunked ? ', chunked' : ''}): ${JSON.stringify(r.body.subarray(0, 200).toString('latin1'))}${r.body.length > 200 ? '…' : ''}`
    : '';
  return `${r.method} ${t} [${r.notes.join(' + ') || 'valid-ish'}]${headers ? ` {${headers}}` : ''}${r.badAuth ? ` {unauth variant: Authorization: ${describeString(r.badAuth)}}` : ''}${body}`;
}

/**
 * What a request's hostility is about. One fast-check property per operation and focus, so a bug in one (say
 * `%FF` in a path parameter) does not hide another (a NUL in a stored string) behind the first failure.
 */
export const FOCUSES = ['values', 'structure', 'path', 'query', 'headers', 'mixed'] as const;
export type Focus = (typeof FOCUSES)[number];

/** Hostile requests for `op` about `focus`; undefined when the focus does not apply (no path parameters, no body). */
export function requestArb(doc: Doc, op: OpInfo, focus: Focus): fc.Arbitrary<FuzzRequest> | undefined {
  const segs = fc.tuple(...op.pathParams.map((p) => paramText(doc, p.schema).map((s) => encodeURIComponent(s) || 'x')));
  const query = fc
    .tuple(
      ...op.query.map((p) =>
        (p.required ? paramText(doc, p.schema) : fc.option(paramText(doc, p.schema), { freq: 2 })).map((v) => [p.name, v] as const),
      ),
    )
    .map((pairs) =>
      pairs.filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, encodeURIComponent(v as string)] as [string, string]),
    );
  const headers = fc
    .tuple(...op.headers.map((p) => fc.option(paramText(doc, p.schema), { freq: 2 }).map((v) => [p.name.toLowerCase(), v] as const)))
    .map((pairs) => Object.fromEntries(pairs.filter(([, v]) => v !== null && v !== '')) as Record<string, string>);
  const bodyValue = op.json ? validish(doc, op.json) : fc.constant(undefined);

  const base: fc.Arbitrary<Plan> = fc.record({ segs, query, headers, bodyValue }).map((b) => ({
    ...b,
    body: undefined,
    contentType: 'application/json',
    chunked: false,
    badAuth: undefined,
    notes: [] as string[],
  }));

  const pathPatch: fc.Arbitrary<Patch> | undefined = op.pathParams.length
    ? fc
        .tuple(fc.nat({ max: op.pathParams.length - 1 }), hostileSegment)
        .map(([i, seg]) =>
          with_(`path ${op.pathParams[i]!.name}=${describeString(seg)}`, (p) => ({ segs: p.segs.map((s, j) => (j === i ? seg : s)) })),
        )
    : undefined;

  const queryValuePatch: fc.Arbitrary<Patch> | undefined = op.query.length
    ? fc.oneof(
        ...op.query.map((param) =>
          (isInteger(doc, param.schema)
            ? fc.oneof({ weight: 3, arbitrary: hostileQueryNumber }, { weight: 1, arbitrary: hostileQueryValue })
            : hostileQueryValue
          ).map((v) =>
            with_(`query ${param.name}=${describeString(v)}`, (p) => ({
              query: [...p.query.filter(([k]) => k !== param.name), [param.name, v] as [string, string]],
            })),
          ),
        ),
      )
    : undefined;

  const queryShapePatch: fc.Arbitrary<Patch> = fc
    .constantFrom<Array<[string, string]>>(
      [
        ['page', '1'],
        ['page', '2'],
      ],
      [
        ['limit', '1'],
        ['limit', '%FF'],
      ],
      [['page[]', '1']],
      [['page[a]', '1']],
      [['%zz', '1']],
      [['%FF', '%FF']],
      [['', '']],
      [['a', 'b=c']],
      [['__proto__', 'x']],
      [['constructor', 'x']],
      [['zzz', '\u0000bare']],
      [['%', '%']],
      ...op.query.map((q): Array<[string, string]> => [
        [q.name, '1'],
        [q.name, 'x'],
      ]),
    )
    .map((pairs) =>
      with_(`query ${pairs.map(([k, v]) => (v === '\u0000bare' ? k : `${k}=${v}`)).join('&')}`, (p) => ({ query: [...p.query, ...pairs] })),
    );

  const queryPatch = queryValuePatch
    ? fc.oneof({ weight: 3, arbitrary: queryValuePatch }, { weight: 1, arbitrary: queryShapePatch })
    : queryShapePatch;

  const headerPatch: fc.Arbitrary<Patch> = fc.oneof(
    fc
      .constantFrom(...CONTENT_TYPES)
      .map((ct) => with_(`Content-Type ${JSON.stringify(ct)}`, (p) => ({ contentType: ct || undefined, bodyValue: p.bodyValue ?? {} }))),
    fc.constantFrom(...CONTENT_ENCODINGS).map((ce) =>
      with_(`Content-Encoding ${ce} on a plain body`, (p) => ({
        headers: { ...p.headers, 'content-encoding': ce },
        bodyValue: p.bodyValue ?? {},
      })),
    ),
    fc.constant(
      with_('a real gzip body', (p) => ({
        headers: { ...p.headers, 'content-encoding': 'gzip' },
        body: { bytes: gzipSync(Buffer.from(serialize(p.bodyValue ?? {}))), note: 'gzip' },
      })),
    ),
    fc
      .constantFrom('x-request-id', 'idempotency-key', 'accept', 'user-agent', 'x-forwarded-for', 'cookie', 'content-type')
      .map((h) => with_(`huge ${h} header (${HUGE_HEADER} B)`, (p) => ({ headers: { ...p.headers, [h]: 'a'.repeat(HUGE_HEADER) } }))),
    fc
      .tuple(
        fc.constantFrom(
          'x-request-id',
          'idempotency-key',
          'accept',
          'accept-charset',
          'x-http-method-override',
          'range',
          'if-none-match',
          'expect',
        ),
        fc.constantFrom(
          '',
          ' ',
          '\u00ff\u00fe',
          '../../etc/passwd',
          'x'.repeat(129),
          '*/*;q=0',
          'bytes=0-0,-1',
          'DELETE',
          '100-continue',
          '%FF',
        ),
      )
      .map(([h, v]) => with_(`${h}: ${describeString(v)}`, (p) => ({ headers: { ...p.headers, [h]: v } }))),
    fc.constantFrom(...BAD_AUTH).map((a) => with_(`Authorization ${describeString(a)} (unauthenticated variant)`, () => ({ badAuth: a }))),
    fc.constant(with_('Transfer-Encoding: chunked', (p) => ({ chunked: true, bodyValue: p.bodyValue ?? {} }))),
    fc.constant(
      with_('Content-Length: 0 with JSON content type', () => ({ body: { bytes: Buffer.alloc(0), note: 'empty' }, bodyValue: undefined })),
    ),
  );

  const mutationPatch = (m: fc.Arbitrary<(body: unknown) => { value: unknown; note: string }>) =>
    m.map((mutate) => (p: Plan) => {
      const r = mutate(p.bodyValue);
      return with_(r.note, () => ({ bodyValue: r.value }))(p);
    });

  const structurePatch: fc.Arbitrary<Patch> = op.json
    ? fc.oneof(
        { weight: 6, arbitrary: mutationPatch(structureMutation) },
        { weight: 1, arbitrary: rawJsonText.map((t) => with_(t.note, () => ({ body: t }))) },
        {
          weight: 1,
          arbitrary: fc.constant(
            with_('body over the 1 MB limit', () => ({
              body: { bytes: Buffer.from(JSON.stringify({ x: 'x'.repeat(1_100_000) })), note: 'big' },
            })),
          ),
        },
      )
    : fc.oneof(
        hostileString.map((s) => with_(`unexpected body on an operation without one (${describeString(s)})`, () => ({ bodyValue: { s } }))),
        rawJsonText.map((t) => with_(`${t.note} on an operation without a body`, () => ({ body: t }))),
      );

  // hostile text in every free-text field of a freshly generated body, or one hostile value in a valid-ish one
  const hostileTextBody = op.json ? validish(doc, op.json, 6, { freeText: hostileString }) : undefined;
  const valuePatch: fc.Arbitrary<Patch> | undefined =
    op.json && hostileTextBody
      ? fc.oneof(
          mutationPatch(valueMutation),
          hostileTextBody.map((v) => with_(`hostile free text: ${hostileLeaves(v).join(', ') || 'none landed'}`, () => ({ bodyValue: v }))),
        )
      : undefined;

  const apply = (plan: Plan, patches: Patch[]) => patches.reduce((p, f) => f(p), plan);

  const focuses: Partial<Record<Focus, fc.Arbitrary<Patch[]>>> = {
    values: valuePatch?.map((v) => [v]),
    structure: structurePatch.map((b) => [b]),
    path: pathPatch?.map((x) => [x]),
    query: queryPatch.map((q) => [q]),
    headers: headerPatch.map((h) => [h]),
    mixed: fc
      .tuple(
        fc.option(valuePatch ?? structurePatch),
        fc.option(structurePatch),
        pathPatch ? fc.option(pathPatch) : fc.constant(null),
        fc.option(queryPatch),
        fc.option(headerPatch),
      )
      .map((ps) => ps.filter((x): x is Patch => x !== null)),
  };
  const chosen = focuses[focus];
  if (!chosen) return undefined;
  // a tuple, not a chain: the valid-ish base and the hostility shrink independently
  return fc.tuple(base, chosen).map(([plan, patches]) => finish(op, apply(plan, patches)));
}
