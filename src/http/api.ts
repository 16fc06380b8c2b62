// openapi-backend wired to our conventions: one handler per operationId (strict), the compiled router,
// bearer API keys with per-operation scopes, ErrorResponse for every failure, response validation in dev/test.
// The library itself is wired in src/http/openapi-backend.ts (which names the internals it leans on), imported on
// the first request that needs validating: an operation without parameters or request body, asked without a query
// string (/health), is served without it (issue 38, bench part a).
import type { Context, OpenAPIBackend, Operation } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { servicesOf, type AppContext } from '../app-context.ts';
import { authenticate } from '../auth/authenticate.ts';
import { SIGNED_URL_PRINCIPAL, type Principal } from '../auth/principal.ts';
import { hasSignature, verifySignedUrl } from '../lib/signed-urls.ts';
import { ApiError, forbidden, notImplemented, type FieldError } from '../domain/errors.ts';
import type { PublicClient } from '../domain/acquisition/client.ts';
import {
  isPublicHandler,
  type Handler,
  type HandlerInput,
  type HandlerMap,
  type OperationId,
  type PublicHandler,
  type RequestScope,
  type UploadedFile,
} from './handler-types.ts';
import { bindTenant, loadTenantTables, type TenantDb } from '../db/tenant.ts';
import type { HandlerSection } from '../handlers/index.ts';
import { withIdempotency } from '../domain/idempotency.ts';
import { CompiledRouter, type MatchResult } from './router.ts';
import { operationsFrom, startupOperationHeads } from './operations.ts';
import { MAX_REPORTED_ERRORS } from './request-guards.ts';

/** What the HTTP adapter hands to the API for one request. */
export type ApiRequest = {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  files: UploadedFile[];
  requestId: string;
  log: RequestScope['log'];
  /** Set by the router before openapi-backend runs. */
  operation?: Operation;
  /** Set by authorize() before the body is read; undefined on `security: []` operations. */
  principal?: Principal | undefined;
  /** The caller's address (TRUST_PROXY applied) and user agent, for public handlers; absent outside HTTP. */
  client?: PublicClient;
};

export type ApiResponse = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  contentType?: string;
};

export type Api = {
  match: (method: string, path: string) => MatchResult;
  /** API key and scopes, from the headers alone: 401 before 403, and both before any byte of the body is read. */
  authorize: (operation: Operation, request: Pick<ApiRequest, 'method' | 'path' | 'headers' | 'query'>) => Promise<Principal | undefined>;
  handle: (req: ApiRequest) => Promise<ApiResponse>;
  operations: Operation[];
};

/**
 * The handlers createApi serves: a map, all loaded (tests), or sections (src/handlers/index.ts), each imported on
 * the first request of one of its operations.
 */
export type HandlerSource = HandlerMap | readonly HandlerSection[];

export async function createApi(app: AppContext, handlers: HandlerSource, notImplementedIds: readonly string[]): Promise<Api> {
  // The operations come from src/http/operations.ts: their heads from generated/operations.json, and each large
  // field dereferenced from the document where it is first read, not the library's parse and dereference of the
  // whole document at init (issue 38, bench part a): the document is parsed on the first such read. The library's
  // definition is the document without paths, and its router hands out these operations (the router and the
  // validators read operations only through getOperations/getOperation: test/library-internals.test.ts).
  const heads = startupOperationHeads();
  const operations = operationsFrom(heads.operations, () => app.document);
  // openapi-backend, made on the first request that validates: concurrent first requests share one import, and a
  // failed one is tried again by the next request (that request answers 500), as a handler section's.
  let backend: OpenAPIBackend | undefined;
  let backendLoading: Promise<OpenAPIBackend> | undefined;
  const loadBackend = async (): Promise<OpenAPIBackend> => {
    try {
      const { apiBackend } = await import('./openapi-backend.ts');
      return (backend = await apiBackend(heads, operations, () => app.document as unknown as Record<string, unknown>));
    } catch (error) {
      backendLoading = undefined;
      throw error;
    }
  };
  const backendReady = async () => backend ?? (await (backendLoading ??= loadBackend()));
  // Operations with nothing to validate: no parameters and no request body (read without dereferencing it). Asked
  // without a query string, the library's steps would pass them and hand the handler the parse below; with one,
  // they take the library's steps (its query schema refuses every name: 400).
  const bare = new Set(
    operations.filter((op) => (op.parameters ?? []).length === 0 && !('requestBody' in op)).map((op) => op.operationId!),
  );
  const router = new CompiledRouter(operations);
  // Per operation, its array-typed query parameters (a single value is validated as a one-item array), or
  // undefined when validated() leaves the operation to openapi-backend's own steps.
  const leanQuery = new Map<string, ReadonlySet<string> | undefined>();
  for (const op of operations) {
    type Param = { $ref?: string; in?: string; name?: string; content?: unknown; explode?: boolean; schema?: { type?: unknown } };
    const params = (op.parameters ?? []) as Param[];
    const special = params.some((p) => p.$ref !== undefined || (p.in === 'query' && (p.content !== undefined || p.explode === false)));
    leanQuery.set(
      op.operationId!,
      special ? undefined : new Set(params.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name!)),
    );
  }

  const sections: readonly HandlerSection[] = isSectionList(handlers)
    ? handlers
    : [{ module: 'handlers', operations: Object.keys(handlers) as OperationId[], load: async () => handlers }];
  assertEveryOperationAccounted(
    operations,
    sections.flatMap((s) => s.operations),
    notImplementedIds,
  );

  // Tenancy by construction: every authenticated handler gets the database bound to its organization.
  const tenantTables = await loadTenantTables(app.db);
  const services = servicesOf(app);
  const idempotent = new Set(operations.filter(declaresIdempotencyKey).map((op) => op.operationId!));

  const run = async (operationId: string, handler: unknown, input: HandlerInput<OperationId>, req: ApiRequest): Promise<AnyResult> => {
    if (isPublicHandler(handler)) {
      const client = req.client ?? { ip: null, userAgent: null };
      return (handler as PublicHandler<OperationId>)(input, { app, client, requestId: req.requestId, log: req.log }) as Promise<AnyResult>;
    }
    const principal = req.principal!;
    // One implementation for every operation that declares Idempotency-Key; Node lower-cases header names.
    const header = idempotent.has(operationId) ? req.headers['idempotency-key'] : undefined;
    const key = Array.isArray(header) ? header[0] : header;
    const scopeWith = (db: TenantDb): RequestScope => ({
      tenant: { organizationId: principal.organizationId, apiKeyId: principal.apiKeyId, scopes: principal.scopes, db },
      services,
      requestId: req.requestId,
      log: req.log,
      idempotencyKey: key,
    });
    const tenantDb = bindTenant(app.db, principal.organizationId, tenantTables);
    const call = (db: TenantDb) => (handler as Handler<OperationId>)(input, scopeWith(db)) as Promise<AnyResult>;
    if (!idempotent.has(operationId)) return call(tenantDb);
    if (key === undefined && ATOMIC_WITHOUT_KEY.has(operationId)) return call(tenantDb);
    // An error whose work stands (ApiError.keepsWork) is this transaction's answer: committed, and replayed.
    const answerOf = async (db: TenantDb): Promise<AnyResult> => {
      try {
        return await call(db);
      } catch (error) {
        if (!(error instanceof ApiError && error.keepsWork)) throw error;
        return { status: error.status, body: error.toBody(req.requestId), headers: error.headers } as AnyResult;
      }
    };
    let headers: Record<string, string> | undefined;
    const result = await withIdempotency(
      tenantDb,
      { organizationId: principal.organizationId, key, operationId, body: { path: input.path, body: input.body } },
      async (tx) => {
        const answer = await answerOf(tx as unknown as TenantDb);
        headers = answer.headers;
        return { status: answer.status, body: answer.body };
      },
    );
    return {
      status: result.status,
      body: result.body,
      headers: { ...(headers ?? {}), ...(result.replayed ? { 'Idempotent-Replayed': 'true' } : {}) },
    };
  };

  // The operation handlers by operationId, called by dispatch() below (an operation without one answers 501). A
  // section's module is imported on the first request of one of its operations (start-up loads none: issue 38).
  const operationHandlers = new Map<string, (c: Context, req: ApiRequest) => Promise<unknown>>();
  for (const section of sections) {
    const handlerOf = sectionLoader(section, operations);
    for (const operationId of section.operations) {
      operationHandlers.set(operationId, async (c: Context, req: ApiRequest) => {
        const input = {
          path: c.request.params ?? {},
          query: c.request.query ?? {},
          headers: c.request.headers ?? {},
          body: c.request.requestBody,
          files: req.files,
        } as unknown as HandlerInput<OperationId>;
        return run(operationId, await handlerOf(operationId), input, req);
      });
    }
  }

  /** Errors of the wrapped validators (describeFailuresBounded), already narrowed and bounded. */
  function validationFailed(errors: ErrorObject[]): never {
    throw new ApiError(400, 'VALIDATION_ERROR', 'Request validation failed.', { details: toFieldErrors(errors) });
  }

  /** openapi-backend's validateRequest, then its parse of the request again from the coerced values (see validated()). */
  function validatedByLibrary(backend: OpenAPIBackend, req: ApiRequest, operation: Operation): ParsedRequest {
    const validation = backend.validator.validateRequest(req as never, operation);
    if (validation.errors) validationFailed(validation.errors);
    return backend.router.parseRequest(validation.coerced as never, operation) as ParsedRequest;
  }

  /**
   * What validatedByLibrary() answers, with the request parsed once instead of three times. openapi-backend's
   * validateRequest parses the request, runs the operation's validators on {path, query, header, cookie,
   * requestBody} (coercing and filling defaults in place), and the handler gets the request parsed again from the
   * coerced values: the coerced query and body, the path parameters and headers as sent. Here the one parse's path
   * parameters and headers are copied before the validators run, the same validators run on the same object, and
   * the coerced query and body are handed on. Operations with request features this does not repeat (query
   * parameters in JSON or not exploded, referenced parameters, no validator) and bodies not parsed yet take the
   * library's own steps.
   */
  function validated(backend: OpenAPIBackend, req: ApiRequest, operation: Operation): ParsedRequest {
    const arrayQuery = leanQuery.get(operation.operationId!);
    const validators = (backend.validator.getRequestValidatorsForOperation(operation.operationId!) ?? []) as Array<
      ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }
    >;
    if (!arrayQuery || validators.length === 0 || (typeof req.body !== 'object' && req.body !== undefined))
      return validatedByLibrary(backend, req, operation);
    const parsed = parsedLean(req, operation) ?? (backend.router.parseRequest(req as never, operation) as ParsedRequest);
    const request: ParsedRequest = { ...parsed, params: { ...parsed.params }, headers: { ...parsed.headers } };
    const { params, query, headers, cookies, requestBody } = parsed;
    if (query)
      for (const [name, value] of Object.entries(query)) if (typeof value === 'string' && arrayQuery.has(name)) query[name] = [value];
    const parameters: Record<string, unknown> = {};
    for (const [name, value] of [
      ['path', params],
      ['query', query],
      ['header', headers],
      ['cookie', cookies],
    ] as const)
      if (value != null) parameters[name] = value;
    const rawContentType = headers['content-type'];
    const contentType = String((Array.isArray(rawContentType) ? rawContentType[0] : rawContentType) || '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (typeof requestBody === 'object' || contentType === 'application/json') parameters.requestBody = requestBody;
    const errors: ErrorObject[] = [];
    for (const validate of validators) {
      validate(parameters);
      if (validate.errors) errors.push(...validate.errors);
    }
    if (errors.length > 0) validationFailed(errors);
    request.query = parameters.query as ParsedRequest['query'];
    return request;
  }

  /** For a request already routed (CompiledRouter) and authorised (authorize()): validation, then the operation's handler. */
  async function dispatch(req: ApiRequest): Promise<unknown> {
    const operation = req.operation;
    if (!operation?.operationId) throw new ApiError(404, 'ROUTE_NOT_FOUND', 'No such route.');
    const lean = bare.has(operation.operationId) && Object.keys(req.query).length === 0 ? parsedLean(req, operation) : undefined;
    const request = lean ?? validated(await backendReady(), req, operation);
    const handler = operationHandlers.get(operation.operationId);
    if (!handler) throw notImplemented(operation.operationId);
    return handler({ api: backend, operation, request, security: { authorized: true } } as unknown as Context, req);
  }

  const validateResponses = app.config.validateResponses;

  return {
    operations,
    match: (method, path) => router.match(method, path),
    async authorize(operation, { method, path, headers, query }) {
      const security = (operation.security ?? []) as Array<Record<string, string[]>>;
      if (security.length === 0) return undefined;
      const requirements = security.filter((r) => !('signedUrl' in r));
      if (security.length > requirements.length && hasSignature(query)) {
        // A signed link stands in for a key on this one operation: it grants exactly the scopes the operation needs.
        const { organizationId } = verifySignedUrl(method, path, query);
        return { organizationId, apiKeyId: SIGNED_URL_PRINCIPAL, scopes: new Set(requirements.flatMap((r) => Object.values(r).flat())) };
      }
      const header = headers.authorization;
      const principal = await authenticate(app.db, app.apiKeyCache, Array.isArray(header) ? header[0] : header);
      const granted = principal.scopes;
      const satisfied = requirements.some((r) =>
        Object.values(r)
          .flat()
          .every((s) => granted.has(s)),
      );
      if (!satisfied) {
        const options = requirements.map((r) => Object.values(r).flat().join(' + ')).join(' or ');
        throw forbidden(`This API key lacks the required scope or role: ${options}.`);
      }
      return principal;
    },
    async handle(req) {
      const result = (await dispatch(req)) as ApiResponse;
      if (validateResponses && req.operation && (result.contentType ?? 'application/json') === 'application/json') {
        const check = (await backendReady()).validateResponse(result.body, req.operation.operationId!, result.status);
        if (check.errors) {
          // The log gets Ajv's errors; the client a plain 500: schema paths are the server's internals.
          req.log.error(
            { operationId: req.operation.operationId, status: result.status, errors: check.errors.slice(0, MAX_REPORTED_ERRORS) },
            'response does not match the document',
          );
          throw new ApiError(500, 'INTERNAL_ERROR', 'Internal server error.');
        }
      }
      return result;
    },
  };
}

/**
 * A section's handlers by operationId, its module imported on the first call: concurrent first calls share one
 * import, and a failed import (or a module out of step with its manifest entry) rejects the calls waiting for it
 * (the request answers 500 and the error is logged) and is tried again on the next call, never crashing the process.
 */
function sectionLoader(section: HandlerSection, operations: Operation[]): (operationId: string) => Promise<unknown> {
  let loaded: HandlerMap | undefined;
  let loading: Promise<HandlerMap> | undefined;
  const load = async (): Promise<HandlerMap> => {
    try {
      const map = await section.load();
      assertSectionMatchesManifest(section, map);
      assertHandlersMatchSecurity(operations, map);
      return (loaded = map);
    } catch (error) {
      loading = undefined;
      throw new Error(`handler section ${section.module} failed to load`, { cause: error });
    }
  };
  return async (operationId) => (loaded ?? (await (loading ??= load())))[operationId as OperationId];
}

/** A section's module has exactly the operations its manifest entry lists (src/handlers/index.ts). */
export function assertSectionMatchesManifest(section: HandlerSection, map: HandlerMap): void {
  const listed = new Set<string>(section.operations);
  const built = Object.keys(map);
  const problems = [
    ...built.filter((id) => !listed.has(id)).map((id) => `${id}: handled by the module, not listed in the manifest`),
    ...[...listed].filter((id) => !built.includes(id)).map((id) => `${id}: listed in the manifest, no handler in the module`),
  ];
  if (problems.length) throw new Error(`handler section ${section.module} out of step with its manifest:\n  ${problems.join('\n  ')}`);
}

/** Public handlers (definePublicHandlers) exactly on `security: []` operations; all others get a tenant. */
export function assertHandlersMatchSecurity(operations: Operation[], handlers: HandlerMap): void {
  const problems: string[] = [];
  for (const op of operations) {
    const handler = handlers[op.operationId as OperationId];
    if (!handler) continue;
    const isPublicOp = ((op.security ?? []) as unknown[]).length === 0;
    if (isPublicOp !== isPublicHandler(handler)) {
      problems.push(
        `${op.operationId}: ${isPublicOp ? 'public operation needs definePublicHandlers' : 'authenticated operation must not use definePublicHandlers'}`,
      );
    }
  }
  if (problems.length) throw new Error(`handlers do not match the document's security:\n  ${problems.join('\n  ')}`);
}

const isSectionList = (handlers: HandlerSource): handlers is readonly HandlerSection[] => Array.isArray(handlers);

/**
 * Operations declaring Idempotency-Key whose service is atomic on its own (a send is one write statement, or opens
 * its own transaction when it writes more: src/domain/messaging/send.ts): without a key they skip the router's
 * transaction, whose BEGIN and COMMIT would be two of their few round trips. Every other such operation keeps it.
 */
const ATOMIC_WITHOUT_KEY: ReadonlySet<string> = new Set(['sendMessage', 'sendConversationMessage']);

type ParsedRequest = {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  cookies: Record<string, unknown>;
  requestBody: unknown;
};

/**
 * router.parseRequest's answer for an operation validated() takes (no JSON or non-exploded query parameters, so
 * its query loop changes nothing), without its per-request work that depends on the operation alone: it compiled
 * the path template into patterns (bath) and turned the parsed query back into a string it did not use, on every
 * request (~2 % of the API process's CPU on GET /v1/api-keys, bench part b, issue 38). Undefined (the library
 * parses) for what this does not repeat: a body still text, a path whose segments do not line up with the
 * template's one for one (empty segments), a path template with a parameter inside a segment. No operation
 * declares cookie parameters, and the handler input has none, so cookies are not parsed (their validator schema
 * takes any). test/http-validation.test.ts compares the result with the library's own steps.
 */
function parsedLean(req: ApiRequest, operation: Operation): ParsedRequest | undefined {
  if (req.body !== undefined && typeof req.body !== 'object') return undefined;
  const template = templateOf(operation.path);
  const path = req.path.split('?')[0]!;
  const segments = path.split('/');
  if (!template || segments.length !== template.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const name = template[i];
    if (name !== undefined && name !== null) params[name] = decodeURIComponent(segments[i]!);
    else if (segments[i] === '' && i > 0) return undefined;
  }
  const headers: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req.query)) query[name] = Array.isArray(value) ? [...value] : value;
  return { params, query, headers, cookies: {}, requestBody: req.body };
}

/** Per segment of a path template, the parameter's name (`{id}`) or null (a literal); undefined for a template this does not split. */
const templates = new Map<string, Array<string | null> | undefined>();
function templateOf(path: string): Array<string | null> | undefined {
  if (templates.has(path)) return templates.get(path);
  const segments = path.split('/').map((segment) => {
    const m = /^\{([^{}]+)\}$/.exec(segment);
    return m ? m[1]! : segment.includes('{') || segment.includes('}') ? undefined : null;
  });
  const template = segments.includes(undefined) ? undefined : (segments as Array<string | null>);
  templates.set(path, template);
  return template;
}

type AnyResult = { status: number; body: unknown; headers?: Record<string, string>; contentType?: string };

const declaresIdempotencyKey = (op: Operation): boolean =>
  ((op.parameters ?? []) as Array<{ name?: string; in?: string }>).some(
    (p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key',
  );

/** Every operation must have a handler or be listed as not implemented (→ 501), never both, never neither. */
export function assertEveryOperationAccounted(
  operations: Operation[],
  handled: Iterable<string>,
  notImplementedIds: readonly string[],
): void {
  const ids = new Set(operations.map((o) => o.operationId!));
  const implemented = new Set<string>();
  const pending = new Set(notImplementedIds);
  const problems: string[] = [];
  for (const id of handled) {
    if (implemented.has(id)) problems.push(`${id}: handled twice`);
    implemented.add(id);
  }
  for (const id of ids) if (!implemented.has(id) && !pending.has(id)) problems.push(`${id}: no handler and not listed as not implemented`);
  for (const id of implemented) if (!ids.has(id)) problems.push(`${id}: handler for an operation the document does not have`);
  for (const id of pending) if (!ids.has(id)) problems.push(`${id}: listed as not implemented but the document does not have it`);
  for (const id of implemented) if (pending.has(id)) problems.push(`${id}: has a handler and is listed as not implemented`);
  if (problems.length) throw new Error(`operation registry out of step with the document:\n  ${problems.join('\n  ')}`);
}

const LOCATION: Record<string, string> = { requestBody: 'body', query: 'query', path: 'path', header: 'header', cookie: 'cookie' };

/** Ajv errors → `details`, with fields named `<location>.<dotted path>`. */
function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors.slice(0, MAX_REPORTED_ERRORS)) {
    const parts = e.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required') parts.push(String((e.params as { missingProperty: string }).missingProperty));
    if (e.keyword === 'additionalProperties') parts.push(String((e.params as { additionalProperty: string }).additionalProperty));
    const [loc, ...rest] = parts;
    const field = [LOCATION[loc ?? ''] ?? loc ?? 'request', ...rest].join('.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') message = 'is not a known field';
    if (e.keyword === 'required') message = 'is required';
    if (e.keyword === 'enum') message = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    if (e.keyword === 'parse') message = `is not valid JSON: ${e.message}`;
    const key = `${field}|${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field: field === 'body' && e.keyword === 'required' ? 'body' : field, message, code: e.keyword });
  }
  return out;
}
