// Contract rules beyond Redocly's, checked on the bundled document (generated/openapi.json):
// section tags, scopes, 400/401/403/404/429/default responses, ErrorResponse on every 4xx, examples present and
// valid, deprecation headers on /v1/channels, every list paged alike, no JSON Schema keywords our draft-07 validators ignore, and honest
// bounds on every request input (checkRequestBounds).
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { documentPath, listOperations, type OpenApiDocument } from '../src/contract/document.ts';

const SECTIONS = [
  'Common',
  'Sender IDs',
  'Programs',
  'Blasts',
  'Bots',
  'Dictionaries',
  'Contacts',
  'Compliance',
  'Templates',
  'Conversations',
  'Analytics',
  'Webhooks',
  'API Keys',
  'Events',
  'Submissions',
  'MCP',
];
const PUBLIC = new Set(['GET /health', 'GET /metrics', 'POST /public/acquisition/{campaignId}/enroll']);
const SCOPE_RE = /^(role:(brand_admin|platform_admin)|[a-z][a-z-]*:(read|create|update|delete|send))$/;
const DRAFT7_UNKNOWN = ['prefixItems', 'unevaluatedProperties', 'unevaluatedItems', '$dynamicRef', '$dynamicAnchor', 'dependentSchemas'];

type Json = Record<string, any>;

export function checkDocument(doc: Json): string[] {
  const problems: string[] = [];
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc, 'doc');
  const deref = (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let i = 0; n?.$ref && i < 20; i++)
      n = String(n.$ref)
        .slice(2)
        .split('/')
        .reduce((a: Json, p) => a?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return n;
  };
  const validateExample = (where: string, schema: Json | undefined, example: unknown) => {
    if (!schema) return;
    let validate;
    if (schema.$ref) validate = ajv.getSchema(`doc${schema.$ref}`) ?? ajv.compile({ $ref: `doc${schema.$ref}` });
    else {
      doc.__inline = schema;
      ajv.removeSchema('doc');
      ajv.addSchema(doc, 'doc');
      validate = ajv.compile({ $ref: 'doc#/__inline' });
    }
    if (!validate(example)) problems.push(`${where}: example does not match its schema: ${ajv.errorsText(validate.errors)}`);
  };
  const exampleOf = (media: Json): unknown[] => {
    if (media.example !== undefined) return [media.example];
    if (media.examples) return Object.values(media.examples).map((e: any) => deref(e)?.value);
    const schema = deref(media.schema);
    if (schema?.examples?.length) return [schema.examples[0]];
    return [];
  };

  for (const op of listOperations(doc as OpenApiDocument)) {
    const where = `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
    const operation = doc.paths[op.path][op.method] as Json;
    const tags: string[] = operation.tags ?? [];
    if (tags.length !== 1 || !SECTIONS.includes(tags[0]!))
      problems.push(`${where}: needs exactly one section tag (got ${JSON.stringify(tags)})`);
    const isPublic = PUBLIC.has(`${op.method.toUpperCase()} ${op.path}`);
    const responses = operation.responses as Json;
    if (isPublic) {
      if (!Array.isArray(operation.security) || operation.security.length !== 0) problems.push(`${where}: must declare security: []`);
    } else {
      if (!Array.isArray(operation.security) || operation.security.length === 0)
        problems.push(`${where}: must declare its security requirement`);
      for (const req of op.scopes) {
        if (req.length === 0) problems.push(`${where}: security requirement lists no scope`);
        for (const s of req) if (!SCOPE_RE.test(s)) problems.push(`${where}: scope "${s}" is not <area>:<verb> or a role`);
      }
      // 429: the API key's request rate limit (src/http/rate-limit.ts) can answer any authenticated operation.
      for (const code of ['400', '401', '403', '429']) if (!responses[code]) problems.push(`${where}: missing ${code} response`);
    }
    if (/\{[^}]+\}/.test(op.path) && !responses['404']) problems.push(`${where}: path has parameters but no 404 response`);
    if (!responses.default) problems.push(`${where}: missing default (Error) response`);
    for (const [code, r] of Object.entries(responses)) {
      const resp = deref(r as Json)!;
      if (/^4\d\d$/.test(code)) {
        // ErrorResponse itself, or a schema built on it (allOf) such as SenderIdPurchaseNumberConflict.
        const schema = resp.content?.['application/json']?.schema;
        const named = schema?.$ref ? deref(schema) : schema;
        if (
          !schema ||
          !(schema.$ref === '#/components/schemas/ErrorResponse' || JSON.stringify(named).includes('#/components/schemas/ErrorResponse'))
        ) {
          problems.push(`${where}: ${code} must be an ErrorResponse`);
        }
      }
      if (/^2\d\d$/.test(code) && resp.content) {
        for (const [type, media] of Object.entries(resp.content as Json)) {
          const examples = exampleOf(media as Json);
          if (examples.length === 0) problems.push(`${where}: ${code} ${type} has no example`);
          if (type.includes('json')) for (const ex of examples) validateExample(`${where} ${code}`, (media as Json).schema, ex);
        }
      }
      if (op.path.startsWith('/v1/channels') && /^2\d\d$/.test(code)) {
        if (!resp.headers?.Deprecation || !resp.headers?.Sunset)
          problems.push(`${where}: ${code} must declare Deprecation and Sunset headers`);
      }
    }
    if (op.path.startsWith('/v1/channels') && operation.deprecated !== true) problems.push(`${where}: must be deprecated: true`);
    // Every list takes the same paging parameters (issue 37 item 6): an operation named list… answering a JSON array
    // in `data` declares both `page` and `limit` (the shared Page/Limit, or ListPage/ListLimit on lists answered
    // whole by default) and answers `pagination`.
    if (op.operationId.startsWith('list')) {
      const schema = deref(deref(responses['200'] as Json)?.content?.['application/json']?.schema);
      if (deref(schema?.properties?.data)?.type === 'array') {
        const names = new Set(
          [...((doc.paths[op.path].parameters ?? []) as Json[]), ...((operation.parameters ?? []) as Json[])].map(
            (p) => deref(p)?.in === 'query' && deref(p)?.name,
          ),
        );
        for (const name of ['page', 'limit']) if (!names.has(name)) problems.push(`${where}: a list must take the query parameter ${name}`);
        if (!schema?.properties?.pagination) problems.push(`${where}: a list must answer pagination`);
      }
    }
    const body = deref(operation.requestBody);
    for (const [type, media] of Object.entries((body?.content ?? {}) as Json)) {
      const examples = exampleOf(media as Json);
      if (examples.length === 0) problems.push(`${where}: request ${type} has no example`);
      if (type.includes('json')) for (const ex of examples) validateExample(`${where} request`, (media as Json).schema, ex);
    }
  }
  delete doc.__inline;
  problems.push(...checkSchemaExamples(doc, ajv));
  problems.push(...checkRequestBounds(doc));
  const text = JSON.stringify(doc);
  for (const kw of DRAFT7_UNKNOWN)
    if (text.includes(`"${kw}"`)) problems.push(`document uses "${kw}", which our draft-07 validators (openapi-backend, Prism) ignore`);
  return problems;
}

/**
 * Every example a schema anywhere in the document carries (not only the first example of an operation's media
 * type, checked above) is valid against that schema: a client copies nested examples too.
 */
function checkSchemaExamples(doc: Json, ajv: Ajv): string[] {
  const problems: string[] = [];
  const isSchema = (n: Json) => ['type', 'properties', '$ref', 'oneOf', 'anyOf', 'allOf', 'enum', 'const'].some((k) => k in n);
  const walk = (node: unknown, pointer: string): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${pointer}/${i}`));
    const n = node as Json;
    if (Array.isArray(n.examples) && isSchema(n)) {
      const validate = ajv.compile({ $ref: `doc#${pointer}` });
      n.examples.forEach((example: unknown, i: number) => {
        if (!validate(example)) problems.push(`${pointer} examples[${i}] does not match its schema: ${ajv.errorsText(validate.errors)}`);
      });
    }
    for (const [k, v] of Object.entries(n)) {
      if (k !== 'examples' && k !== 'example') walk(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  };
  for (const part of ['components', 'paths', 'webhooks']) walk(doc[part], `/${part}`);
  return problems;
}

// ---- honest bounds on request inputs -----------------------------------------------------------------------
// Every value a client can send (request bodies of every media type, path/query/header/cookie parameters) must
// have an upper bound that the validator enforces before any work is done:
// - a string needs `maxLength`, unless `enum`/`const` lists its values or its `format` only matches strings of a
//   fixed, short length (SELF_BOUNDED_FORMATS). A `pattern` is not a bound: our validators run with `allErrors`,
//   so the regex runs over the whole string whatever its length, and a reader should not have to prove a
//   pattern finite. `format: binary` (a multipart file part) is bounded by the
//   operation's `x-max-request-bytes`, so it is exempt. `propertyNames` schemas are strings too.
// - an array needs `maxItems`;
// - an object that takes arbitrary keys (`additionalProperties` a schema or `true`, `propertyNames`, or no
//   `properties` and no `additionalProperties: false`) needs `maxProperties`.
// A bound anywhere in an `allOf` conjunction (or on the schema that holds the `allOf`/`oneOf`/`anyOf`) bounds the
// whole. The walk follows $ref, allOf/oneOf/anyOf, then/else, items, properties, additionalProperties and
// propertyNames; each schema location is reported once.
// Why these formats and not others: ajv-formats' `uuid` (36, or 45 with `urn:uuid:`), `date` (10) and `ipv4` (15)
// match fixed-length strings, while `date-time`, `time`, `email`, `uri`, `hostname` … accept unbounded input
// (`2026-01-01T00:00:00.<100,000 digits>Z` is a valid date-time), so they need maxLength too.
export const SELF_BOUNDED_FORMATS = new Set(['uuid', 'date', 'binary', 'ipv4']);

type Bounds = { string: boolean; array: boolean; object: boolean };
const typesOf = (s: Json): Set<string> | undefined =>
  typeof s.type === 'string' ? new Set([s.type]) : Array.isArray(s.type) ? new Set(s.type as string[]) : undefined;

export function checkRequestBounds(doc: Json): string[] {
  const problems: string[] = [];
  const reported = new Set<string>();
  const resolve = (ref: string): Json | undefined =>
    ref.startsWith('#/')
      ? ref
          .slice(2)
          .split('/')
          .reduce((a: Json | undefined, p) => a?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
      : undefined;
  // Follows $ref chains; returns the schema and the JSON pointer of where it lives.
  const follow = (node: Json, at: string): [Json | undefined, string] => {
    let n: Json | undefined = node;
    let where = at;
    for (let i = 0; n && typeof n.$ref === 'string' && i < 20; i++) {
      where = n.$ref;
      n = resolve(n.$ref);
    }
    return [n, where];
  };
  const own = (s: Json, seen = new Set<Json>()): Bounds => {
    const listed = Array.isArray(s.enum) || 'const' in s;
    const b: Bounds = {
      string: listed || typeof s.maxLength === 'number' || (typeof s.format === 'string' && SELF_BOUNDED_FORMATS.has(s.format)),
      array: listed || typeof s.maxItems === 'number',
      object: listed || typeof s.maxProperties === 'number',
    };
    seen.add(s);
    // Every allOf branch is a conjunct: its bounds hold for the whole.
    for (const c of Array.isArray(s.allOf) ? (s.allOf as Json[]) : []) {
      const [t] = follow(c, '');
      if (!t || seen.has(t)) continue;
      const tb = own(t, seen);
      if (typeof c.$ref === 'string' && c !== t) or(tb, own(c, seen));
      or(b, tb);
    }
    return b;
  };
  const or = (a: Bounds, b: Bounds): Bounds => {
    a.string ||= b.string;
    a.array ||= b.array;
    a.object ||= b.object;
    return a;
  };
  const visited = new Set<string>();
  const walk = (node: unknown, at: string, where: string, inherited: Bounds, implicitType?: string): void => {
    if (!node || typeof node !== 'object') return;
    // Keywords next to a $ref (OpenAPI 3.1) apply together with the target: their bounds count.
    const b: Bounds = { ...inherited };
    let s: Json | undefined = node as Json;
    let loc = at;
    for (let i = 0; s && typeof s.$ref === 'string' && i < 20; i++) {
      or(b, own(s));
      loc = s.$ref;
      s = resolve(s.$ref);
    }
    if (!s) return;
    or(b, own(s));
    const key = `${loc}|${b.string}|${b.array}|${b.object}`;
    if (visited.has(key)) return;
    visited.add(key);
    const report = (what: string) => {
      const k = `${loc}|${what}`;
      if (reported.has(k)) return;
      reported.add(k);
      problems.push(`${where}: ${loc.replace(/^#\//, '')} ${what}`);
    };
    const types = typesOf(s) ?? (implicitType ? new Set([implicitType]) : undefined);
    if (types?.has('string') && !b.string) {
      report(`is a request string without maxLength${typeof s.pattern === 'string' ? ' (a pattern is not a bound)' : ''}`);
    }
    if (types?.has('array') && !b.array) report('is a request array without maxItems');
    const isObject = types?.has('object') || s.properties !== undefined || s.additionalProperties !== undefined;
    const openKeys =
      (s.additionalProperties !== undefined && s.additionalProperties !== false) ||
      s.propertyNames !== undefined ||
      (types?.has('object') && s.properties === undefined && s.additionalProperties === undefined && !s.allOf && !s.oneOf && !s.anyOf);
    if (isObject && openKeys && !b.object) report('is a request object with open keys (a map) without maxProperties');
    for (const k of ['allOf', 'oneOf', 'anyOf'] as const) {
      if (Array.isArray(s[k])) s[k].forEach((c: unknown, i: number) => walk(c, `${loc}/${k}/${i}`, where, b, implicitType));
    }
    for (const k of ['then', 'else'] as const) if (s[k]) walk(s[k], `${loc}/${k}`, where, b, implicitType);
    const none: Bounds = { string: false, array: false, object: false };
    if (s.items && typeof s.items === 'object') walk(s.items, `${loc}/items`, where, none);
    if (s.properties && typeof s.properties === 'object') {
      for (const [name, p] of Object.entries(s.properties as Json))
        walk(p, `${loc}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, where, none);
    }
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      walk(s.additionalProperties, `${loc}/additionalProperties`, where, none);
    if (s.propertyNames && typeof s.propertyNames === 'object') walk(s.propertyNames, `${loc}/propertyNames`, where, none, 'string');
  };

  const none: Bounds = { string: false, array: false, object: false };
  for (const op of listOperations(doc as OpenApiDocument)) {
    const where = `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
    const item = doc.paths[op.path] as Json;
    const operation = item[op.method] as Json;
    const base = `#/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const params: Array<[unknown, string]> = [
      ...((item.parameters ?? []) as unknown[]).map((p, i): [unknown, string] => [p, `${base}/parameters/${i}`]),
      ...((operation.parameters ?? []) as unknown[]).map((p, i): [unknown, string] => [p, `${base}/${op.method}/parameters/${i}`]),
    ];
    for (const [raw, at] of params) {
      const [p, loc] = follow(raw as Json, at);
      if (!p) continue;
      if (p.schema) walk(p.schema, `${loc}/schema`, where, none);
      for (const [type, media] of Object.entries((p.content ?? {}) as Json))
        walk((media as Json).schema, `${loc}/content/${type.replace(/\//g, '~1')}/schema`, where, none);
    }
    const [body, bodyLoc] = operation.requestBody
      ? follow(operation.requestBody as Json, `${base}/${op.method}/requestBody`)
      : [undefined, ''];
    for (const [type, media] of Object.entries((body?.content ?? {}) as Json)) {
      walk((media as Json).schema, `${bodyLoc}/content/${type.replace(/\//g, '~1')}/schema`, where, none);
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = JSON.parse(readFileSync(documentPath, 'utf8')) as Json;
  const problems = checkDocument(doc);
  for (const p of problems) console.error(`spec-rules: ${p}`);
  const count = listOperations(doc as OpenApiDocument).length;
  console.log(`spec-rules: ${count} operations checked, ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}
