// Pure diff of two OpenAPI 3.x documents (in-memory, internal $refs allowed, or already dereferenced by deref.ts).
// Operations are keyed by METHOD + path template with parameter names erased, so `{id}` -> `{userId}` is a rename,
// not a removal + addition. Webhooks (`webhooks:` section) are keyed `WEBHOOK <event name>`; their request body is
// what the server sends, so it is compared like a response ('payload-*' kinds).
import { compareSchemas, type Direction } from './schema.ts';
import { dereferenceInMemory, isObj, type Obj } from './deref.ts';

export interface Change {
  breaking: boolean;
  kind: string;
  /** HTTP method in upper case, or WEBHOOK. */
  method: string;
  /** Path template as written in the new document (the old one for removals), or the webhook event name. */
  path: string;
  /** Where in the operation: `-`, `query.limit`, `body[application/json].name`, `200[application/json].data`, `security`. */
  location: string;
  detail: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Path template with parameter names erased: `/v1/contacts/{id}` -> `/v1/contacts/{}`. */
export const normalizePath = (p: string): string => p.replace(/\{[^}]*\}/g, '{}');

interface Operation {
  method: string;
  path: string;
  pathItem: Obj;
  op: Obj;
}

export function diffSpecs(oldInput: unknown, newInput: unknown): Change[] {
  const oldDoc = asObj(dereferenceInMemory(oldInput));
  const newDoc = asObj(dereferenceInMemory(newInput));
  const changes: Change[] = [];
  diffOperationSet(
    collect(oldDoc.paths, false),
    collect(newDoc.paths, false),
    changes,
    (before, after, emit) => {
      compareParameters(before, after, emit);
      compareRequestBody(before.op.requestBody, after.op.requestBody, emit);
      compareResponses(before.op, after.op, emit);
      compareSecurity(effectiveSecurity(before.op, oldDoc), effectiveSecurity(after.op, newDoc), emit);
    },
    'operation',
  );
  diffOperationSet(
    collect(oldDoc.webhooks, true),
    collect(newDoc.webhooks, true),
    changes,
    (before, after, emit) => {
      compareContent(asObj(before.op.requestBody).content, asObj(after.op.requestBody).content, 'payload', 'payload', emit);
    },
    'webhook',
  );
  return dedupe(changes);
}

type Emit = (breaking: boolean, kind: string, location: string, detail: string) => void;
type CompareOp = (before: Operation, after: Operation, emit: Emit) => void;

function diffOperationSet(
  before: Map<string, Operation>,
  after: Map<string, Operation>,
  out: Change[],
  compare: CompareOp,
  noun: 'operation' | 'webhook',
): void {
  for (const [key, old] of before) {
    const cur = after.get(key);
    if (!cur) {
      out.push({ breaking: true, kind: `${noun}-removed`, method: old.method, path: old.path, location: '-', detail: `${noun} removed` });
      continue;
    }
    compare(old, cur, (breaking, kind, location, detail) =>
      out.push({ breaking, kind, method: cur.method, path: cur.path, location, detail }),
    );
  }
  for (const [key, cur] of after) {
    if (!before.has(key))
      out.push({ breaking: false, kind: `${noun}-added`, method: cur.method, path: cur.path, location: '-', detail: `new ${noun}` });
  }
}

function collect(section: unknown, webhooks: boolean): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  if (!isObj(section)) return ops;
  for (const [name, item] of Object.entries(section)) {
    if (!isObj(item)) continue;
    for (const m of METHODS) {
      const op = item[m];
      if (!isObj(op)) continue;
      // A webhook normally has one method (post); another one gets its own key but shows the same label.
      const method = webhooks ? 'WEBHOOK' : m.toUpperCase();
      const key = webhooks ? `WEBHOOK ${name} ${m}` : `${method} ${normalizePath(name)}`;
      ops.set(key, { method, path: name, pathItem: item, op });
    }
  }
  return ops;
}

// ---- parameters -----------------------------------------------------------------------------------------------

interface Param {
  location: string;
  in: string;
  required: boolean;
  schema: unknown;
}

/** Path-item parameters overridden by operation ones; keyed so that renamed path params still match. */
function parametersOf(o: Operation): Map<string, Param> {
  const byKey = new Map<string, Param>();
  const pathParams = [...o.path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  const declared: string[] = []; // path parameter names in declaration order
  for (const list of [o.pathItem.parameters, o.op.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (!isObj(p) || typeof p.name !== 'string' || typeof p.in !== 'string') continue;
      if (p.in === 'path' && !declared.includes(p.name)) declared.push(p.name);
      // A path parameter is known by its place in the template; one missing from the template (an invalid document,
      // e.g. the template was renamed but not the parameter) falls back to its declaration order.
      const slot = pathParams.includes(p.name) ? pathParams.indexOf(p.name) : declared.indexOf(p.name);
      const key = p.in === 'path' ? `path#${slot}` : p.in === 'header' ? `header:${p.name.toLowerCase()}` : `${p.in}:${p.name}`;
      byKey.set(key, { location: `${p.in}.${p.name}`, in: p.in, required: p.required === true || p.in === 'path', schema: paramSchema(p) });
    }
  }
  return byKey;
}

function paramSchema(p: Obj): unknown {
  if (p.schema !== undefined) return p.schema;
  const media = isObj(p.content) ? Object.values(p.content)[0] : undefined;
  return isObj(media) ? media.schema : undefined;
}

function compareParameters(before: Operation, after: Operation, emit: Emit): void {
  const oldParams = parametersOf(before);
  const newParams = parametersOf(after);
  for (const [key, old] of oldParams) {
    const cur = newParams.get(key);
    if (!cur) {
      // Servers ignore unknown query/header parameters, so only a vanished path parameter breaks a call.
      emit(old.in === 'path', 'parameter-removed', old.location, 'parameter removed');
      continue;
    }
    if (cur.required && !old.required) emit(true, 'parameter-became-required', cur.location, 'now required');
    schemaChanges(old.schema, cur.schema, 'request', cur.location, emit);
  }
  for (const [key, cur] of newParams) {
    if (oldParams.has(key)) continue;
    if (cur.required) emit(true, 'parameter-added-required', cur.location, 'new required parameter');
    else emit(false, 'parameter-added', cur.location, 'new optional parameter');
  }
}

// ---- request body ---------------------------------------------------------------------------------------------

function compareRequestBody(oldBody: unknown, newBody: unknown, emit: Emit): void {
  const before = isObj(oldBody) ? oldBody : undefined;
  const after = isObj(newBody) ? newBody : undefined;
  if (after?.required === true && before?.required !== true) {
    emit(true, 'request-body-required', 'body', before ? 'request body now required' : 'new required request body');
  } else if (after && !before) emit(false, 'request-body-added', 'body', 'new optional request body');
  if (before && !after) emit(false, 'request-body-removed', 'body', 'request body no longer documented');
  if (before && after) compareContent(before.content, after.content, 'request', 'body', emit);
}

// ---- responses ------------------------------------------------------------------------------------------------

const isSuccess = (status: string): boolean => /^2(\d\d|XX)$/i.test(status);

function compareResponses(before: Obj, after: Obj, emit: Emit): void {
  const oldResponses = asObj(before.responses);
  const newResponses = asObj(after.responses);
  for (const [status, old] of Object.entries(oldResponses)) {
    if (!isSuccess(status)) continue;
    const cur = newResponses[status];
    if (!isObj(cur)) {
      emit(true, 'response-status-removed', status, `${status} response removed`);
      continue;
    }
    compareContent(asObj(old).content, cur.content, 'response', status, emit);
  }
  for (const status of Object.keys(newResponses)) {
    if (isSuccess(status) && !(status in oldResponses)) emit(false, 'response-status-added', status, `new ${status} response`);
  }
}

// ---- media types (request body, response, webhook payload) ----------------------------------------------------

function compareContent(oldContent: unknown, newContent: unknown, dir: Direction, where: string, emit: Emit): void {
  const before = asObj(oldContent);
  const after = asObj(newContent);
  for (const [mediaType, old] of Object.entries(before)) {
    const location = `${where}[${mediaType}]`;
    const cur = after[mediaType];
    if (!isObj(cur)) {
      emit(true, `${dir}-media-type-removed`, location, `${mediaType} no longer ${dir === 'request' ? 'accepted' : 'sent'}`);
      continue;
    }
    schemaChanges(asObj(old).schema, cur.schema, dir, location, emit);
  }
  for (const mediaType of Object.keys(after)) {
    if (!(mediaType in before)) emit(false, `${dir}-media-type-added`, `${where}[${mediaType}]`, `new media type ${mediaType}`);
  }
}

function schemaChanges(oldSchema: unknown, newSchema: unknown, dir: Direction, location: string, emit: Emit): void {
  if (oldSchema === undefined && newSchema === undefined) return;
  compareSchemas(oldSchema, newSchema, dir, location, (c) => emit(c.breaking, c.kind, c.location, c.detail));
}

// ---- security -------------------------------------------------------------------------------------------------

/** Security alternatives (OR) as sets of `scheme` and `scheme:scope` items (AND); [] = anonymous access allowed. */
function effectiveSecurity(op: Obj, doc: Obj): Set<string>[] {
  const reqs = Array.isArray(op.security) ? op.security : Array.isArray(doc.security) ? doc.security : [];
  if (reqs.length === 0) return [new Set()];
  return reqs.filter(isObj).map((req) => {
    const items = new Set<string>();
    for (const [scheme, scopes] of Object.entries(req)) {
      items.add(scheme);
      if (Array.isArray(scopes)) for (const s of scopes) items.add(`${scheme}:${String(s)}`);
    }
    return items;
  });
}

// A client that met an old alternative keeps access if some new alternative asks for nothing more.
function compareSecurity(before: Set<string>[], after: Set<string>[], emit: Emit): void {
  for (const held of before) {
    const extras = after.map((need) => [...need].filter((item) => !held.has(item)));
    if (extras.some((e) => e.length === 0)) continue;
    const least = extras.reduce((x, y) => (y.length < x.length ? y : x));
    const scopes = least.filter((i) => i.includes(':')).map((i) => i.slice(i.indexOf(':') + 1));
    const schemes = least.filter((i) => !i.includes(':'));
    const parts = [scopes.length ? `scope ${scopes.join(', ')}` : '', schemes.length ? `scheme ${schemes.join(', ')}` : ''].filter(Boolean);
    const was = held.size ? formatRequirement(held) : 'anonymous access';
    emit(true, 'security-scope-added', 'security', `now requires ${parts.join(' and ')} (was: ${was})`);
  }
}

/** `apiKey[contacts:read, role:brand_admin]` from `{apiKey, apiKey:contacts:read, apiKey:role:brand_admin}`. */
function formatRequirement(items: Set<string>): string {
  const schemes = [...items].filter((i) => !i.includes(':'));
  return schemes
    .map((scheme) => {
      const scopes = [...items].filter((i) => i.startsWith(`${scheme}:`)).map((i) => i.slice(scheme.length + 1));
      return scopes.length ? `${scheme}[${scopes.join(', ')}]` : scheme;
    })
    .join(' + ');
}

// ---- helpers --------------------------------------------------------------------------------------------------

function asObj(v: unknown): Obj {
  return isObj(v) ? v : {};
}

function dedupe(changes: Change[]): Change[] {
  const seen = new Set<string>();
  return changes.filter((c) => {
    const key = [c.kind, c.method, c.path, c.location, c.detail].join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
