// Raw HTTP for hostile requests. fetch normalises or refuses much of what a fuzzer sends (bad percent-encoding
// is re-encoded, some header values are refused), so requests go through node:http with the request-target
// exactly as given, or through node:net when even node:http would refuse (duplicate Content-Length, NUL in
// a header, a body shorter than announced).
import { request as httpRequest, Agent } from 'node:http';
import { connect } from 'node:net';

export type RawResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Set when no (complete) answer came: socket error, reset, or the time limit. */
  error?: string;
};

export type OutgoingRequest = {
  method: string;
  target: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
};

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export function closeAgent(): void {
  agent.destroy();
}

/**
 * One request through node:http; never rejects (failures are in `error`). A keep-alive socket the server
 * closed between two requests is retried once on a new one (Node's documented `reusedSocket` pattern), so
 * only real resets count.
 */
export async function send(baseUrl: string, req: OutgoingRequest, timeoutMs: number): Promise<RawResponse> {
  const first = await sendOnce(baseUrl, req, timeoutMs);
  return first.reusedSocketReset ? sendOnce(baseUrl, req, timeoutMs) : first;
}

function sendOnce(baseUrl: string, req: OutgoingRequest, timeoutMs: number): Promise<RawResponse & { reusedSocketReset?: boolean }> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: RawResponse & { reusedSocketReset?: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const headers: Record<string, string | string[]> = { ...req.headers };
    if (req.body && !req.chunked) headers['content-length'] = String(req.body.length);
    // explicit, or node:http sends a GET/DELETE body unframed (it only chunks POST/PUT/PATCH by default)
    if (req.body && req.chunked) headers['transfer-encoding'] = 'chunked';
    let r: ReturnType<typeof httpRequest>;
    try {
      r = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.target, headers, agent, setHost: true });
    } catch (error) {
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: `client refused the request: ${(error as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      r.destroy();
      done({ status: 0, headers: {}, body: Buffer.alloc(0), error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (e) =>
        done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error: `response aborted: ${e.message}` }),
      );
    });
    r.on('error', (e: NodeJS.ErrnoException) =>
      done({
        status: 0,
        headers: {},
        body: Buffer.alloc(0),
        error: `${e.code ?? 'error'}: ${e.message}`,
        reusedSocketReset: r.reusedSocket && e.code === 'ECONNRESET',
      }),
    );
    if (req.body) {
      if (req.chunked) {
        // two chunks, so the framing is really chunked
        const mid = Math.floor(req.body.length / 2);
        r.write(req.body.subarray(0, mid));
        r.end(req.body.subarray(mid));
      } else r.end(req.body);
    } else r.end();
  });
}

/**
 * Bytes straight onto a socket; the answer is read until the server closes or `Connection: close` framing
 * completes. The head must be complete (ending in CRLF CRLF) unless the test means otherwise.
 */
export function sendRaw(baseUrl: string, bytes: Buffer, timeoutMs: number, opts: { halfClose?: boolean } = {}): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseResponse(Buffer.concat(chunks));
      resolve(
        parsed
          ? { ...parsed, ...(error && !parsed.complete ? { error } : {}) }
          : { status: 0, headers: {}, body: Buffer.alloc(0), error: error ?? 'connection closed without an answer' },
      );
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (parseResponse(Buffer.concat(chunks))?.complete) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (e: NodeJS.ErrnoException) => finish(`${e.code ?? 'error'}: ${e.message}`));
    socket.write(bytes, () => {
      if (opts.halfClose) socket.end();
    });
  });
}

/** Minimal HTTP/1.1 response parser: status, headers, Content-Length or chunked body. */
function parseResponse(buf: Buffer): (RawResponse & { complete: boolean }) | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const headers: Record<string, string | string[] | undefined> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = buf.subarray(headEnd + 4);
  const length = headers['content-length'];
  if (typeof length === 'string') {
    const n = Number(length);
    return { status: Number(m[1]), headers, body: rest.subarray(0, n), complete: rest.length >= n };
  }
  if (String(headers['transfer-encoding'] ?? '').includes('chunked')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) return { status: Number(m[1]), headers, body: Buffer.concat(parts), complete: false };
      const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
      if (size === 0) return { status: Number(m[1]), headers, body: Buffer.concat(parts), complete: true };
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
  // no framing: the body runs to the end of the connection
  return { status: Number(m[1]), headers, body: rest, complete: false };
}
