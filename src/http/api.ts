// openapi-backend wired to our conventions: one handler per operationId (strict), the compiled router,
// bearer API keys with per-operation scopes, ErrorResponse for every failure, response validation in dev/test.
import { OpenAPIBackend, type Context, type Document, type Operation } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import type { AppContext } from '../app-context.ts';
import { authenticate } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import { ApiError, forbidden, notImplemented, type FieldError } from './errors.ts';
import type { HandlerInput, HandlerMap, HandlerResult, OperationId, RequestScope, UploadedFile } from './handler-types.ts';
import { CompiledRouter, type MatchResult } from './router.ts';

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
};

export type ApiResponse = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  contentType?: string;
};

export type Api = {
  match: (method: string, path: string) => MatchResult;
  handle: (req: ApiRequest) => Promise<ApiResponse>;
  operations: Operation[];
};

type SecurityResult = { principal: Principal } | { error: unknown };

export async function createApi(app: AppContext, handlers: HandlerMap, notImplementedIds: readonly string[]): Promise<Api> {
  const backend = new OpenAPIBackend({
    definition: structuredClone(app.document) as unknown as Document,
    strict: true,
    quick: true, // openapi-backend's full init rejects valid 3.1; `npm run spec:lint` validates the document
    validate: true,
    coerceTypes: true,
    ajvOpts: { strict: false, useDefaults: true, allErrors: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv);
      ajv.addFormat('binary', true);
      return ajv;
    },
  });
  await backend.init();

  // openapi-backend recomputes these on every call; compute once.
  const operations = backend.router.getOperations();
  const byId = new Map(operations.map((op) => [op.operationId!, op]));
  backend.router.getOperations = () => operations;
  backend.router.getOperation = (id: string) => byId.get(id);
  const router = new CompiledRouter(operations);
  backend.router.matchOperation = ((req: ApiRequest) => req.operation) as never;

  assertEveryOperationAccounted(operations, handlers, notImplementedIds);

  const scopeOf = (c: Context, req: ApiRequest): RequestScope => {
    const sec = c.security?.apiKey as SecurityResult | undefined;
    return {
      app,
      requestId: req.requestId,
      log: req.log,
      principal: sec && 'principal' in sec ? sec.principal : undefined,
    };
  };

  for (const [operationId, handler] of Object.entries(handlers)) {
    backend.register(operationId, async (c: Context, req: ApiRequest) => {
      const input = {
        path: c.request.params ?? {},
        query: c.request.query ?? {},
        headers: c.request.headers ?? {},
        body: c.request.requestBody,
        files: req.files,
      } as unknown as HandlerInput<OperationId>;
      return (handler as (i: typeof input, s: RequestScope) => Promise<HandlerResult<OperationId>>)(input, scopeOf(c, req));
    });
  }
  for (const id of notImplementedIds) {
    backend.register(id, async () => {
      throw notImplemented(id);
    });
  }

  backend.registerSecurityHandler('apiKey', async (c: Context): Promise<SecurityResult> => {
    const header = c.request.headers.authorization;
    const value = Array.isArray(header) ? header[0] : header;
    try {
      return { principal: await authenticate(app.db, app.apiKeyCache, value) };
    } catch (error) {
      return { error };
    }
  });

  backend.register({
    // 401 before 403 before 400: an unauthenticated caller learns nothing about validation.
    postSecurityHandler: (c: Context) => {
      const requirements = (c.operation.security ?? []) as Array<Record<string, string[]>>;
      if (requirements.length === 0) return;
      const sec = c.security?.apiKey as SecurityResult | undefined;
      if (!sec || 'error' in sec) {
        throw sec && sec.error instanceof ApiError ? sec.error : new ApiError(401, 'UNAUTHENTICATED', 'Authentication failed.');
      }
      const granted = sec.principal.scopes;
      const satisfied = requirements.some((r) => Object.values(r).flat().every((s) => granted.has(s)));
      if (!satisfied) {
        const options = requirements.map((r) => Object.values(r).flat().join(' + ')).join(' or ');
        throw forbidden(`This API key lacks the required scope or role: ${options}.`);
      }
    },
    unauthorizedHandler: () => {
      throw new ApiError(401, 'UNAUTHENTICATED', 'Authentication failed.');
    },
    validationFail: (c: Context) => {
      throw new ApiError(400, 'VALIDATION_ERROR', 'Request validation failed.', {
        details: toFieldErrors(c.validation.errors ?? []),
      });
    },
    notFound: () => {
      throw new ApiError(404, 'ROUTE_NOT_FOUND', 'No such route.');
    },
    methodNotAllowed: () => {
      throw new ApiError(405, 'METHOD_NOT_ALLOWED', 'Method not allowed.');
    },
    notImplemented: (c: Context) => {
      throw notImplemented(c.operation.operationId ?? 'unknown');
    },
  });

  const validateResponses = app.config.validateResponses;

  return {
    operations,
    match: (method, path) => router.match(method, path),
    async handle(req) {
      const result = (await backend.handleRequest(req as never, req)) as ApiResponse;
      if (validateResponses && req.operation && (result.contentType ?? 'application/json') === 'application/json') {
        const check = backend.validateResponse(result.body, req.operation.operationId!, result.status);
        if (check.errors) {
          req.log.error({ operationId: req.operation.operationId, errors: check.errors }, 'response does not match the document');
          throw new ApiError(500, 'INTERNAL_ERROR', `Response of ${req.operation.operationId} (${result.status}) does not match the document: ${JSON.stringify(check.errors.slice(0, 5))}`);
        }
      }
      return result;
    },
  };
}

/** Every operation must have a handler or be listed as not implemented (→ 501), never both, never neither. */
export function assertEveryOperationAccounted(operations: Operation[], handlers: HandlerMap, notImplementedIds: readonly string[]): void {
  const ids = new Set(operations.map((o) => o.operationId!));
  const implemented = new Set(Object.keys(handlers));
  const pending = new Set(notImplementedIds);
  const problems: string[] = [];
  for (const id of ids) if (!implemented.has(id) && !pending.has(id)) problems.push(`${id}: no handler and not listed as not implemented`);
  for (const id of implemented) if (!ids.has(id)) problems.push(`${id}: handler for an operation the document does not have`);
  for (const id of pending) if (!ids.has(id)) problems.push(`${id}: listed as not implemented but the document does not have it`);
  for (const id of implemented) if (pending.has(id)) problems.push(`${id}: has a handler and is listed as not implemented`);
  if (problems.length) throw new Error(`operation registry out of step with the document:\n  ${problems.join('\n  ')}`);
}

const LOCATION: Record<string, string> = { requestBody: 'body', query: 'query', path: 'path', header: 'header', cookie: 'cookie' };

/** Ajv errors → `details`, with fields named `<location>.<dotted path>`. */
export function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const parts = e.instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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
