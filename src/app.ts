// The HTTP adapter: express + pino-http around the API. Order per request: request id and log line →
// route (404/405 before any body is read) → body parsing with the operation's size limit and media types
// (413/415) → openapi-backend (auth 401 → scope 403 → validation 400 → handler) → answer.
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Operation } from 'openapi-backend';
import type { AppContext } from './app-context.ts';
import { createApi, type Api, type ApiResponse } from './http/api.ts';
import { ApiError } from './http/errors.ts';
import { parseMultipart } from './http/multipart.ts';
import { mountDocs } from './http/docs.ts';
import { mountProviderCallbacks } from './providers/callbacks.ts';
import { handlers } from './handlers/index.ts';
import { notImplementedOperations } from './handlers/not-implemented.ts';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export async function createApp(app: AppContext): Promise<{ express: express.Express; api: Api }> {
  const api = await createApi(app, handlers, notImplementedOperations);
  const server = express();
  server.disable('x-powered-by');
  server.set('etag', false);
  server.set('query parser', 'simple');

  server.use(
    pinoHttp({
      logger: app.log,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : `req_${randomUUID().replaceAll('-', '')}`;
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // One short line per request; headers (and so Authorization) are never logged.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      redact: ['req.headers.authorization', 'req.headers.cookie', '*.secret', '*.password'],
    }),
  );

  mountDocs(server, app);
  mountProviderCallbacks(server, app);

  // One JSON parser per body limit: BODY_LIMIT_BYTES, or the operation's own `x-max-request-bytes`.
  const jsonParsers = new Map<number, express.RequestHandler>();
  const jsonParser = (limit: number) => {
    let parser = jsonParsers.get(limit);
    if (!parser) jsonParsers.set(limit, (parser = express.json({ limit, type: ['application/json', 'application/*+json'] })));
    return parser;
  };

  server.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      const match = api.match(req.method, req.path);
      if (match.kind === 'notFound') throw new ApiError(404, 'ROUTE_NOT_FOUND', `No route ${req.method} ${req.path}.`);
      if (match.kind === 'methodNotAllowed') {
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}.`, {
          headers: { Allow: match.allow.join(', ') },
        });
      }
      const operation = match.operation;
      const { body, files } = await readBody(req, res, operation, app, jsonParser);
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
      });
      send(res, result);
    } catch (error) {
      next(error);
    }
  });

  server.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) req.log.error({ err: error }, 'request failed');
    if (apiError.headers) res.set(apiError.headers);
    res.status(apiError.status).json(apiError.toBody(String(req.id)));
  });

  return { express: server, api };
}

function send(res: Response, result: ApiResponse): void {
  if (result.headers) res.set(result.headers);
  res.status(result.status);
  if (result.body === undefined || result.status === 204) {
    res.end();
  } else if (result.contentType && result.contentType !== 'application/json') {
    res.type(result.contentType).send(result.body as string | Buffer);
  } else {
    res.json(result.body);
  }
}

type Parsed = { body: unknown; files: import('./http/handler-types.ts').UploadedFile[] };

async function readBody(
  req: Request,
  res: Response,
  operation: Operation,
  app: AppContext,
  jsonParser: (limit: number) => express.RequestHandler,
): Promise<Parsed> {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
  if (!hasBody || !content) return { body: undefined, files: [] };
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!(mediaType in content)) {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${Object.keys(content).join(' or ')}.`, {
      details: [{ field: 'header.content-type', message: `unsupported media type "${mediaType || '(none)'}"` }],
    });
  }
  const limit = (operation as { 'x-max-request-bytes'?: number })['x-max-request-bytes'] ?? app.config.bodyLimitBytes;
  if (mediaType === 'multipart/form-data') return parseMultipart(req, limit);
  await new Promise<void>((resolve, reject) => jsonParser(limit)(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
  return { body: req.body, files: [] };
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as { type?: string; status?: number; message?: string; limit?: number };
  if (e?.type === 'entity.too.large') {
    return new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${e.limit} bytes.`);
  }
  if (e?.type === 'entity.parse.failed') {
    return new ApiError(400, 'VALIDATION_ERROR', 'Request body is not valid JSON.', {
      details: [{ field: 'body', message: 'is not valid JSON', code: 'parse' }],
    });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', e.message ?? 'Unsupported encoding.');
  }
  return new ApiError(500, 'INTERNAL_ERROR', 'Internal server error.');
}
