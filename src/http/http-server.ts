// The node:http server around the express app, with the limits that keep slow, idle or malformed clients
// from holding it: header size and timeouts, and an ErrorResponse (not Node's empty body) for the requests
// Node itself refuses before they reach the app (malformed HTTP, oversized headers, timeouts, `Expect`).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { http } from '../lib/node-http.ts';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../domain/errors.ts';

/** Documented in the README ("Limits"). */
const HTTP_LIMITS = {
  maxHeaderBytes: 16 * 1024,
  /** The whole header block must arrive within this (slowloris). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included, must arrive within this (10 MB uploads need ≥ 170 KB/s). */
  requestTimeoutMs: 60_000,
  /** An idle keep-alive connection is closed after this (longer than common load balancers' 60 s). */
  keepAliveTimeoutMs: 65_000,
} as const;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
};

/**
 * Set on a request that sent `Expect: 100-continue`: the app answers 100 only once the caller is authorised and the
 * body's media type and declared size are accepted (sendContinue); any refusal before that is the final answer,
 * and the client need not send its body at all (openapi.yaml, "Request limits").
 */
const EXPECTS_CONTINUE = Symbol('expectsContinue');

type ExpectingRequest = IncomingMessage & { [EXPECTS_CONTINUE]?: boolean };

/** `100 Continue`, once, to a request that waits for it. */
export function sendContinue(req: IncomingMessage, res: ServerResponse): void {
  if (!(req as ExpectingRequest)[EXPECTS_CONTINUE]) return;
  (req as ExpectingRequest)[EXPECTS_CONTINUE] = false;
  res.writeContinue();
}

/** Whether the client still waits for `100 Continue` before sending its body. */
export const waitsForContinue = (req: IncomingMessage): boolean => (req as ExpectingRequest)[EXPECTS_CONTINUE] === true;

export function createHttpServer(app: RequestListener): Server {
  const server = http.createServer(
    {
      maxHeaderSize: HTTP_LIMITS.maxHeaderBytes,
      headersTimeout: HTTP_LIMITS.headersTimeoutMs,
      requestTimeout: HTTP_LIMITS.requestTimeoutMs,
      keepAliveTimeout: HTTP_LIMITS.keepAliveTimeoutMs,
    },
    app,
  );
  // Without this listener Node answers `100 Continue` to anyone, before the key is checked.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    (req as ExpectingRequest)[EXPECTS_CONTINUE] = true;
    app(req, res);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = errorBody(
      'EXPECTATION_FAILED',
      `Expectation "${String(req.headers.expect).slice(0, 64)}" is not supported; only 100-continue is.`,
    );
    const text = JSON.stringify(body);
    res.writeHead(417, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'X-Request-Id': body.requestId,
      Connection: 'close',
    });
    res.end(text);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const [status, code, message] = describe(err.code);
    const body = JSON.stringify(errorBody(code, message));
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroySoon();
  });
  return server;
}

function describe(code: string | undefined): [number, ErrorCode, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'HEADERS_TOO_LARGE', `Request headers exceed ${HTTP_LIMITS.maxHeaderBytes} bytes.`];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'REQUEST_TIMEOUT', 'The request was not received in time.'];
    default:
      return [400, 'VALIDATION_ERROR', `Malformed HTTP request${code ? ` (${code})` : ''}.`];
  }
}

function errorBody(code: ErrorCode, message: string) {
  return { code, message, requestId: `req_${randomUUID().replaceAll('-', '')}` };
}
