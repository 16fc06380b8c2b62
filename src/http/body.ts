// Reading a request body, after the route is known and the caller authenticated: the operation's media types
// (415) and its size limit (`x-max-request-bytes`, else BODY_LIMIT_BYTES → 413) are checked on the headers, before
// any byte is read (and before `100 Continue`), then JSON or multipart, then the checks no schema can express
// (request-guards.ts). Also what to do with a body nobody will read.
import express, { type Request, type Response } from 'express';
import type { Operation } from 'openapi-backend';
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import { nodeCaps, nodesOverCap, type Nodes } from './json-node-bound.ts';
import type { UploadedFile } from './handler-types.ts';
import { sendContinue, waitsForContinue } from './http-server.ts';
import { parseMultipart, payloadTooLarge } from './multipart.ts';
import { assertStorableValue } from './request-guards.ts';

export type ParsedBody = { body: unknown; files: UploadedFile[] };

/**
 * A body we answer without reading is still read and discarded, so that the client, which may be writing it still,
 * receives the answer (closing a socket with unread bytes resets it, and the client sees EPIPE/ECONNRESET instead of
 * our answer: nginx's lingering close). Bounded in bytes and time; past either the connection is closed. Documented
 * in the README ("Limits") and openapi.yaml ("Request limits").
 */
const DISCARD = {
  /** A caller not authenticated (401, 403, unknown route): a little, so memory and bandwidth stay flat. */
  unknown: { bytes: 1024 * 1024, ms: 5_000 },
  /** An authenticated caller: the operation's limit plus this much (a 10.5 MB file to a 10 MB import), for as long. */
  authenticated: { bytesOverLimit: 16 * 1024 * 1024, ms: 30_000 },
  /** Either way, a client that sends nothing for this long is done with (nginx's lingering_timeout). */
  idleMs: 5_000,
};
/** Set by readBody on an authenticated request: how many bytes of its body may be discarded after an early answer. */
const DISCARD_CAP = Symbol('discardCap');
const UPLOAD_IDLE_MS = 15_000;

/** Set by readBody before a JSON body is read: how many objects and arrays, and keys, it may hold (json-node-bound.ts). */
const NODE_CAPS = Symbol('nodeCaps');

type BodyRequest = Request & { [DISCARD_CAP]?: number; [NODE_CAPS]?: Nodes };

const NODE_NAMES: Record<keyof Nodes, string> = { containers: 'objects and arrays', keys: 'keys' };

/** body-parser's `verify`: called with the raw bytes before JSON.parse, which a body of far too many nodes skips. */
function refuseTooManyNodes(req: Request, _res: unknown, bytes: Buffer): void {
  const caps = (req as BodyRequest)[NODE_CAPS];
  const over = caps && nodesOverCap(bytes, caps);
  if (over) {
    const what = `more than ${caps[over].toLocaleString('en-US')} ${NODE_NAMES[over]}`;
    throw new ApiError(400, 'VALIDATION_ERROR', `Request body holds ${what}, far more than a valid request here can.`, {
      details: [{ field: 'body', message: `holds ${what}`, code: 'maxNodes' }],
    });
  }
}

export function createBodyReader(config: Pick<Config, 'bodyLimitBytes' | 'uploadMemoryLimitBytes'>) {
  // One JSON parser per body limit: BODY_LIMIT_BYTES, or the operation's own `x-max-request-bytes`.
  const jsonParsers = new Map<number, express.RequestHandler>();
  const jsonParser = (limit: number) => {
    let parser = jsonParsers.get(limit);
    if (!parser) {
      const options = { limit, type: ['application/json', 'application/*+json'], verify: refuseTooManyNodes };
      jsonParsers.set(limit, (parser = express.json(options)));
    }
    return parser;
  };

  /** `authenticated`: the caller has a key (not a `security: []` operation); an early answer then discards more. */
  return async function readBody(req: Request, res: Response, operation: Operation, authenticated: boolean): Promise<ParsedBody> {
    const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
    if (!hasBody(req) || !content) return { body: undefined, files: [] };
    const limit = (operation as { 'x-max-request-bytes'?: number })['x-max-request-bytes'] ?? config.bodyLimitBytes;
    if (authenticated) (req as BodyRequest)[DISCARD_CAP] = limit + DISCARD.authenticated.bytesOverLimit;
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${Object.keys(content).join(' or ')}.`, {
        details: [{ field: 'header.content-type', message: `unsupported media type "${mediaType || '(none)'}"` }],
      });
    }
    const declared = Number(req.headers['content-length']);
    if (declared > limit) throw payloadTooLarge(limit);
    sendContinue(req, res); // everything the headers can tell is accepted: the client may send the body now
    if (mediaType === 'multipart/form-data') {
      const parsed = await parseMultipart(req, {
        maxBytes: limit,
        maxInFlightBytes: config.uploadMemoryLimitBytes,
        idleMs: UPLOAD_IDLE_MS,
      });
      assertStorableValue(parsed.body);
      return parsed;
    }
    (req as BodyRequest)[NODE_CAPS] = nodeCaps((content[mediaType] as { schema?: unknown }).schema ?? true);
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
 * Called when we answer without reading the whole body (404, 401, 403, 415, 413 …). A client that waits for
 * `100 Continue` has sent nothing: the connection is closed after the answer. Otherwise what the client keeps
 * sending is read and discarded (DISCARD): a body whose Content-Length is within the cap is read to its end, and the
 * connection stays open; a longer one, or one of unknown length, is answered with `Connection: close`. Past the
 * cap in bytes or time the connection is closed. Memory stays flat either way.
 */
export function discardUnreadBody(req: Request, res: Response): void {
  if (req.complete || !hasBody(req) || req.readableEnded) return;
  if (waitsForContinue(req)) {
    res.setHeader('Connection', 'close');
    return;
  }
  const authenticatedCap = (req as BodyRequest)[DISCARD_CAP];
  const cap = authenticatedCap ?? DISCARD.unknown.bytes;
  const ms = authenticatedCap === undefined ? DISCARD.unknown.ms : DISCARD.authenticated.ms;
  const close = () => req.socket?.destroy();
  if (!(Number(req.headers['content-length']) <= cap)) {
    // More than we would discard, or a length not known beforehand (chunked): the answer says the connection closes.
    // Closing one that the answer left open would race a keep-alive client reusing it for its next request.
    res.setHeader('Connection', 'close');
  }
  let seen = 0;
  const timer = setTimeout(close, ms);
  let idle = setTimeout(close, DISCARD.idleMs);
  const stop = () => {
    clearTimeout(timer);
    clearTimeout(idle);
  };
  timer.unref();
  idle.unref();
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > cap) return close();
    clearTimeout(idle);
    idle = setTimeout(close, DISCARD.idleMs);
    idle.unref();
  });
  req.on('end', stop);
  req.on('close', stop);
  req.on('error', () => {});
  req.resume();
}

/** body-parser's errors carry a 4xx status: keep it (a false `Content-Encoding: gzip` is the client's mistake). */
export function toBodyError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const e = error as { type?: string; status?: number; statusCode?: number; message?: string; limit?: number };
  const status = e?.status ?? e?.statusCode;
  if (e?.type === 'entity.too.large' || status === 413) {
    return e.limit === undefined
      ? new ApiError(413, 'PAYLOAD_TOO_LARGE', 'Request body exceeds the allowed size.')
      : payloadTooLarge(e.limit);
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
