// Reading a request body, after the route is known and the caller authenticated: the operation's media types
// (415), its size limit (`x-max-request-bytes`, else BODY_LIMIT_BYTES → 413), JSON or multipart, then the
// checks no schema can express (request-guards.ts). Also what to do with a body nobody will read.
import express, { type Request, type Response } from 'express';
import type { Operation } from 'openapi-backend';
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import type { UploadedFile } from './handler-types.ts';
import { parseMultipart } from './multipart.ts';
import { assertStorableValue } from './request-guards.ts';

export type ParsedBody = { body: unknown; files: UploadedFile[] };

/** An unread body is discarded up to this many bytes (so the client can read our answer); past it the connection is closed. */
const DISCARD_CAP_BYTES = 1024 * 1024;
const DISCARD_TIMEOUT_MS = 5_000;
const UPLOAD_IDLE_MS = 15_000;

export function createBodyReader(config: Pick<Config, 'bodyLimitBytes' | 'uploadMemoryLimitBytes'>) {
  // One JSON parser per body limit: BODY_LIMIT_BYTES, or the operation's own `x-max-request-bytes`.
  const jsonParsers = new Map<number, express.RequestHandler>();
  const jsonParser = (limit: number) => {
    let parser = jsonParsers.get(limit);
    if (!parser) jsonParsers.set(limit, (parser = express.json({ limit, type: ['application/json', 'application/*+json'] })));
    return parser;
  };

  return async function readBody(req: Request, res: Response, operation: Operation): Promise<ParsedBody> {
    const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
    if (!hasBody(req) || !content) return { body: undefined, files: [] };
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${Object.keys(content).join(' or ')}.`, {
        details: [{ field: 'header.content-type', message: `unsupported media type "${mediaType || '(none)'}"` }],
      });
    }
    const limit = (operation as { 'x-max-request-bytes'?: number })['x-max-request-bytes'] ?? config.bodyLimitBytes;
    if (mediaType === 'multipart/form-data') {
      const parsed = await parseMultipart(req, {
        maxBytes: limit,
        maxInFlightBytes: config.uploadMemoryLimitBytes,
        idleMs: UPLOAD_IDLE_MS,
      });
      assertStorableValue(parsed.body);
      return parsed;
    }
    await new Promise<void>((resolve, reject) =>
      jsonParser(limit)(req, res, (err?: unknown) => (err ? reject(toBodyError(err)) : resolve())),
    );
    assertStorableValue(req.body);
    return { body: req.body, files: [] };
  };
}

export function hasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Called when we answer without reading the body (404, 401, 403, 415, 413 …): discard what the client keeps
 * sending, up to a small cap and a short time, then close the connection. Memory stays flat either way.
 */
export function discardUnreadBody(req: Request, res: Response): void {
  if (req.complete || !hasBody(req) || req.readableEnded) return;
  res.setHeader('Connection', 'close');
  let seen = 0;
  const close = () => req.socket?.destroy();
  const timer = setTimeout(close, DISCARD_TIMEOUT_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_CAP_BYTES) close();
  });
  req.on('end', () => clearTimeout(timer));
  req.on('close', () => clearTimeout(timer));
  req.on('error', () => {});
  req.resume();
}

/** body-parser's errors carry a 4xx status: keep it (a false `Content-Encoding: gzip` is the client's mistake). */
export function toBodyError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const e = error as { type?: string; status?: number; statusCode?: number; message?: string; limit?: number };
  const status = e?.status ?? e?.statusCode;
  if (e?.type === 'entity.too.large' || status === 413) {
    return new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${e.limit ?? 'the allowed'} bytes.`);
  }
  if (e?.type === 'entity.parse.failed') {
    return new ApiError(400, 'VALIDATION_ERROR', 'Request body is not valid JSON.', {
      details: [{ field: 'body', message: 'is not valid JSON', code: 'parse' }],
    });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported' || status === 415) {
    return new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', e.message ?? 'Unsupported content encoding.', {
      details: [{ field: 'header.content-encoding', message: e.message ?? 'unsupported' }],
    });
  }
  if (e?.type === 'request.aborted') return new ApiError(400, 'VALIDATION_ERROR', 'The request was aborted before its body was received.');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // e.g. a body that claims `Content-Encoding: gzip` but is not gzip, or a body shorter than Content-Length.
    return new ApiError(400, 'VALIDATION_ERROR', `Request body could not be read: ${e.message ?? 'malformed'}.`, {
      details: [{ field: 'body', message: e.message ?? 'could not be read', code: 'malformed' }],
    });
  }
  return error;
}
