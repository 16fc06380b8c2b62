// A fetch that connects only where the SSRF rules allow (./destination-guard.ts), for the MCP client and for media
// a provider adapter downloads (RBM): the URL's scheme, userinfo and literal IP are checked before each request
// (checkUrlShape), and every address a host name resolves to is checked at connect time (guardedLookup), so DNS
// rebinding fails. Redirects are never followed here (the 3xx is returned as is; the MCP SDK follows same-origin
// ones, through this fetch again). Each MCP health check builds its own agents and destroys them when done, so no
// connection outlives it.
import { http } from '../lib/node-http.ts';
import https from 'node:https';
import { Readable } from 'node:stream';
import { checkUrlShape, guardedLookup } from './destination-guard.ts';

export type GuardedFetch = ((url: string | URL, init?: RequestInit) => Promise<Response>) & { close: () => void };

/** Largest request body this fetch sends (MCP requests are small JSON-RPC messages). */
const MAX_BODY_BYTES = 1024 * 1024;
/** Most bytes one response may carry by default (MCP health checks read a few small messages); past it the response fails. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export function guardedFetch(allowPrivate: boolean, opts: { maxResponseBytes?: number } = {}): GuardedFetch {
  const maxResponseBytes = opts.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const options = { keepAlive: false, lookup: guardedLookup(allowPrivate) };
  const agents = { 'http:': new http.Agent(options), 'https:': new https.Agent(options) };

  const fetchImpl = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = checkUrlShape(String(input), allowPrivate);
    const headers = new Headers(init.headers);
    const body = await bodyBytes(init.body);
    if (body && body.length > MAX_BODY_BYTES) throw new Error('request body too large');
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const transport = url.protocol === 'https:' ? https : http;
    const outgoing: Record<string, string> = {};
    headers.forEach((value, name) => {
      outgoing[name] = value;
    });
    if (body) outgoing['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = transport.request(url, {
        method: init.method ?? 'GET',
        headers: outgoing,
        agent: agents[url.protocol as 'http:' | 'https:'],
      });
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      req.on('response', (res) => {
        res.on('close', () => signal?.removeEventListener('abort', onAbort));
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > maxResponseBytes) res.destroy(new Error(`response larger than ${maxResponseBytes} bytes`));
        });
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
        }
        const status = res.statusCode ?? 502;
        const nullBody = status === 204 || status === 205 || status === 304 || init.method === 'HEAD';
        if (nullBody) res.resume();
        resolve(
          new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status,
            statusText: res.statusMessage ?? '',
            headers: responseHeaders,
          }),
        );
      });
      req.end(body ?? undefined);
    });
  };

  return Object.assign(fetchImpl, {
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  });
}

async function bodyBytes(body: RequestInit['body']): Promise<Buffer | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}
