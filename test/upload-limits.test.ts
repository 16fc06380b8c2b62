// An authenticated upload over its limit gets its 413 (issue 31, item 7): the size is judged from Content-Length
// before any byte is read, `100 Continue` is sent only once the upload is acceptable, and a client that writes its
// whole body anyway receives the answer instead of EPIPE/ECONNRESET (the body is read and discarded, as nginx's
// lingering close does). A real socket client, as curl or a browser would send it.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Upload limits org')).apiKey.secret;
});
afterAll(() => srv.close());

const BOUNDARY = 'XuploadLimitsX';

/** A multipart body with one CSV file part of about `bytes` bytes. */
function csvUpload(bytes: number): Buffer {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\nphone,name\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const row = '+14155550123,Somebody with a long enough name\r\n';
  const rows = Buffer.from(row.repeat(Math.ceil(bytes / row.length)));
  return Buffer.concat([head, rows, tail]);
}

type Exchange = { responses: Array<{ status: number; body: string }>; raw: string; error: string | undefined; closed: boolean };

/** Everything the server sent on the socket, split into responses (interim 1xx have no body). */
function parse(raw: string): Exchange['responses'] {
  const out: Exchange['responses'] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const head = rest.slice(0, end);
    const status = Number(head.slice(9, 12));
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    out.push({ status, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/**
 * Sends `head`, then (unless `waitForContinue` and no 100 came) the whole body as fast as the socket takes it, then
 * `after` (a second request on the same connection); resolves when the server closes or `settleMs` after the last
 * byte the server sent.
 */
function exchange(
  head: string,
  body: Buffer,
  opts: { waitForContinue?: boolean; after?: string; settleMs?: number } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(new URL(srv.baseUrl).port), '127.0.0.1');
    let raw = '';
    let error: string | undefined;
    let settle: NodeJS.Timeout | undefined;
    let bodySent = false;
    const done = (closed: boolean) => {
      clearTimeout(settle);
      socket.destroy();
      resolve({ responses: parse(raw), raw, error, closed });
    };
    const sendBody = () => {
      if (bodySent) return;
      bodySent = true;
      socket.write(body, () => {
        if (opts.after) socket.write(opts.after);
      });
    };
    socket.on('data', (chunk) => {
      raw += chunk.toString('latin1');
      if (opts.waitForContinue && raw.startsWith('HTTP/1.1 100')) sendBody();
      clearTimeout(settle);
      settle = setTimeout(() => done(false), opts.settleMs ?? 1500);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => done(true));
    socket.write(head);
    if (!opts.waitForContinue) sendBody();
  });
}

const headers = (length: number, extra = '') =>
  `POST /v1/contacts/import HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n` +
  `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('an authenticated upload over its limit (POST /v1/contacts/import, 10 MB)', () => {
  it('a 10.5 MB CSV written in full receives the 413 ErrorResponse, not EPIPE/ECONNRESET, and the connection stays usable', async () => {
    const body = csvUpload(10.5 * 1024 * 1024);
    const result = await exchange(headers(body.length), body, { after: 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n' });
    expect(result.error).toBeUndefined();
    const [refused, health] = result.responses;
    expect(refused?.status, result.raw.slice(0, 300)).toBe(413);
    const error = JSON.parse(refused!.body);
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toMatch(/10485760 bytes/);
    expect(typeof error.requestId).toBe('string');
    expect(health?.status).toBe(200); // the discarded body ended; the next request on the connection is answered
  });

  it('with Expect: 100-continue the 413 comes first, no 100 Continue, and nothing of the file is sent', async () => {
    const body = csvUpload(10.5 * 1024 * 1024);
    const result = await exchange(headers(body.length, 'Expect: 100-continue\r\n'), body, { waitForContinue: true });
    expect(result.error).toBeUndefined();
    expect(result.responses.map((r) => r.status)).toEqual([413]);
    expect(JSON.parse(result.responses[0]!.body).code).toBe('PAYLOAD_TOO_LARGE');
    expect(result.closed).toBe(true); // the body it held back is not awaited
  });

  it('an acceptable upload with Expect: 100-continue gets 100 Continue, then 202', async () => {
    const body = csvUpload(2_000);
    const result = await exchange(headers(body.length, 'Expect: 100-continue\r\n'), body, { waitForContinue: true });
    expect(result.responses.map((r) => r.status)).toEqual([100, 202]);
  });
});
