// The HTTP adapter: express + pino-http around the API. Order per request: request id and log line →
// URL encoding (400) → route (404/405) → API key and scopes from the headers (401/403) → the key's rate limit
// (429) — all before any body byte is read → body parsing with the operation's size limit and media types
// (413/415) → openapi-backend (validation 400 → handler) → answer.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { AppContext } from './app-context.ts';
import { createApi, type Api, type ApiResponse } from './http/api.ts';
import { ApiError } from './domain/errors.ts';
import { createBodyReader, discardUnreadBody, toBodyError } from './http/body.ts';
import { applyOperationTimeout, clientGone, statementScopes, statementTimeoutError } from './http/request-scope.ts';
import { assertUrlEncoding } from './http/request-guards.ts';
import { clientOf } from './http/client.ts';
import { isDatabaseUnavailable } from './startup-errors.ts';
import { deprecationHeadersFor } from './contract/deprecations.ts';
import { mountDocs } from './http/docs.ts';
import { mountMcpServer } from './mcp-server/mount.ts';
import { KeyRateLimiter } from './http/rate-limit.ts';
import { handlerSections } from './handlers/index.ts';
import { notImplementedOperations } from './handlers/not-implemented.ts';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query values can be personal data (`?search=+1415…`): log the names only. */
function redactQuery(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const names = url
    .slice(q + 1)
    .split('&')
    .map((part) => `${part.split('=')[0]}=…`);
  return `${url.slice(0, q)}?${names.join('&')}`;
}

export async function createApp(app: AppContext): Promise<{ express: express.Express; api: Api }> {
  const api = await createApi(app, handlerSections, notImplementedOperations);
  const server = express();
  server.disable('x-powered-by');
  server.set('etag', false);
  server.set('query parser', 'simple');
  // Which X-Forwarded-For entries are believed (TRUST_PROXY; by default none: req.ip is the socket's address).
  server.set('trust proxy', app.config.trustProxy);

  server.use(
    pinoHttp({
      logger: app.log,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : `req_${randomUUID().replaceAll('-', '')}`;
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // One short line per request; headers (and so Authorization) are never logged. The serializers read the raw
      // request and response (wrapSerializers off): pino-http's default first builds pino-std-serializers' full
      // objects, which parses the query string (express's req.query getter) and copies the response headers
      // (res.getHeaders()) on every request only for these three fields to be kept (issue 38, bench part b).
      wrapSerializers: false,
      serializers: {
        req: (req: { id: string; method: string; url: string; originalUrl?: string }) => ({
          id: req.id,
          method: req.method,
          url: redactQuery(req.originalUrl || req.url),
        }),
        // As pino-std-serializers: no status until the headers are sent (a request cut off before its answer).
        res: (res: { statusCode: number; headersSent: boolean }) => ({ statusCode: res.headersSent ? res.statusCode : null }),
      },
      redact: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.secret',
        '*.password',
        '*.authToken',
        '*.apiKey',
        '*.privateKey',
        '*.webhookClientToken',
      ],
    }),
  );

  // The request's SQL: its statement_timeout, and cancelled when the client disconnects (src/http/request-scope.ts).
  server.use(statementScopes(app.config.statementTimeoutMs));

  const readBody = createBodyReader(app.config);
  const rateLimit = new KeyRateLimiter(app.pool, app.config.rateLimit);

  const apiRoutes = async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertUrlEncoding(req.originalUrl);
      const match = api.match(req.method, req.path);
      if (match.kind === 'notFound') throw new ApiError(404, 'ROUTE_NOT_FOUND', `No route ${req.method} ${req.path}.`);
      if (match.kind === 'methodNotAllowed' && req.method === 'OPTIONS' && req.path.startsWith('/public/')) {
        // CORS preflight of a public form (a landing page on another origin posting an enrollment).
        res.set({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': match.allow.join(', '),
          'Access-Control-Allow-Headers': 'Content-Type',
          'Access-Control-Max-Age': '600',
        });
        res.status(204).end();
        return;
      }
      if (match.kind === 'methodNotAllowed') {
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}.`, {
          headers: { Allow: match.allow.join(', ') },
        });
      }
      const operation = match.operation;
      applyOperationTimeout(operation);
      const deprecation = deprecationHeadersFor(operation as { path: string; deprecated?: boolean });
      if (deprecation) res.set(deprecation); // on every answer of the operation, errors included
      // The key and its scopes are checked on the headers: no body byte is read for an unknown caller.
      const principal = await api.authorize(operation, {
        method: req.method,
        path: req.path,
        headers: req.headers,
        query: req.query as Record<string, string | string[]>,
      });
      res.set(await rateLimit.take(principal)); // the key's request rate, also before the body is read
      const { body, files } = await readBody(req, res, operation, principal !== undefined); // 100 Continue once accepted
      const result = await api.handle({
        method: req.method,
        path: req.path,
        query: req.query as Record<string, string | string[]>,
        headers: req.headers,
        body,
        files,
        requestId: String(req.id),
        log: req.log,
        operation,
        principal,
        // Only public handlers read the client (api.ts run()), and only their operations have no principal: express's
        // req.ip (proxy-addr over TRUST_PROXY) is not worked out for every keyed request.
        client: principal === undefined ? clientOf(req) : undefined,
      });
      send(res, result);
    } catch (error) {
      next(error);
    }
  };
  // No mount below serves a path under /v1/: the API's requests skip their route matching.
  server.use((req: Request, res: Response, next: NextFunction) => (req.path.startsWith('/v1/') ? apiRoutes(req, res, next) : next()));

  mountDocs(server, app);
  // Their modules (the send pipeline behind a landing page's form, inbound and receipts behind the callbacks) are
  // imported on the first request under their prefix: start-up loads none of them (issue 38).
  server.use(mountedOnFirstUse('/p/', app, async () => (await import('./http/landing-pages.ts')).mountLandingPages));
  server.use(mountedOnFirstUse('/l/', app, async () => (await import('./http/links.ts')).mountTrackedLinks));
  server.use(
    mountedOnFirstUse('/provider-callbacks/', app, async () => (await import('./http/provider-callbacks.ts')).mountProviderCallbacks),
  );
  mountMcpServer(server, app, api, rateLimit); // the API as MCP tools (src/mcp-server/), same keys, limit and pipeline

  server.use(apiRoutes);

  server.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const mapped = toBodyError(error); // body-parser errors of routes outside the API (provider callbacks)
    const apiError =
      mapped instanceof ApiError
        ? mapped
        : isDatabaseUnavailable(error)
          ? new ApiError(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.', { headers: { 'Retry-After': '5' } })
          : (statementTimeoutError(error) ?? new ApiError(500, 'INTERNAL_ERROR', 'Internal server error.'));
    if (clientGone()) req.log.info({ err: error }, 'client disconnected; its statements were cancelled');
    else if (apiError.status === 504) req.log.warn({ err: error }, 'statement timeout');
    else if (apiError.status >= 500) req.log.error({ err: error }, 'request failed');
    discardUnreadBody(req, res);
    if (apiError.headers) res.set(apiError.headers);
    res.status(apiError.status).json(apiError.toBody(String(req.id)));
  });

  return { express: server, api };
}

/**
 * A mount (routes outside the API document) whose module is imported on the first request under `prefix`: its
 * routes are added to a router of their own then, in the place this middleware holds. Concurrent first requests
 * share the import; a failed one answers 500 through the error handler and is tried again on the next request.
 */
function mountedOnFirstUse(
  prefix: string,
  app: AppContext,
  load: () => Promise<(server: express.Express, app: AppContext) => void>,
): express.RequestHandler {
  const router = express.Router();
  let mounted: Promise<void> | undefined;
  return (req, res, next) => {
    if (!req.path.startsWith(prefix)) return next();
    mounted ??= load().then(
      (mount) => mount(router as unknown as express.Express, app),
      (error: unknown) => {
        mounted = undefined;
        throw error;
      },
    );
    mounted.then(() => router(req, res, next), next);
  };
}

function send(res: Response, result: ApiResponse): void {
  if (result.headers) res.set(result.headers);
  res.status(result.status);
  if (result.body === undefined || result.status === 204) {
    res.end();
  } else if (result.body instanceof Readable) {
    // Downloads stream (asset bytes, exports): flat memory whatever the size. A source that fails mid-way can no
    // longer change the status, so the connection is cut (the client sees a truncated transfer, not a false 200 end).
    res.type(result.contentType ?? 'application/octet-stream');
    pipeline(result.body, res).catch((err: unknown) => {
      res.log.warn({ err }, 'download stream failed');
      res.destroy();
    });
  } else if (result.contentType && result.contentType !== 'application/json') {
    res.type(result.contentType).send(result.body as string | Buffer);
  } else {
    // What res.json does (no JSON settings are set), in one write with the headers.
    const text = JSON.stringify(result.body);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  }
}
