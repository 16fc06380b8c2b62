// What a hostile or careless client sends must never crash the server, hold its memory, or answer 500:
// each reproduction of the hardening and security findings, through real HTTP (raw sockets where fetch would
// refuse or normalise the request).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
let port: number;

beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Hardening org')).apiKey.secret;
  port = Number(new URL(srv.baseUrl).port);
});
afterAll(() => srv.close());

/**
 * Sends `head` (and then `body`, if given) on a fresh socket; resolves with the first complete final answer (or
 * what came before the socket closed). Never half-closes: Node aborts a request whose client sent FIN.
 */
function raw(head: string, body: Buffer | string = '', opts: { timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    const done = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on('data', (c) => {
      out += c.toString('latin1');
      const final = out.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      const end = final.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(final.slice(0, end))?.[1] ?? -1);
      if (end !== -1 && length >= 0 && Buffer.byteLength(final.slice(end + 4), 'latin1') >= length) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    setTimeout(() => {
      socket.destroy();
      done();
    }, opts.timeoutMs ?? 5_000).unref();
    socket.write(head);
    if (body.length) socket.write(body);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
const jsonOf = (answer: string) =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string; message: string; requestId: string };

async function alive(): Promise<void> {
  const res = await fetch(`${srv.baseUrl}/health`);
  expect(res.status).toBe(200);
}

const TRUNCATED_MULTIPART = '--XYZ\r\nContent-Disposition: form-data; name="files"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nabc';

function multipartHead(path: string, length: number, auth?: string, extra = ''): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: ${length}\r\n` +
    (auth ? `Authorization: Bearer ${auth}\r\n` : '') +
    extra +
    '\r\n'
  );
}

describe('multipart bodies never crash the server', () => {
  it('answers 401 to an unauthenticated multipart body without its closing boundary, and stays up', async () => {
    const answer = await raw(multipartHead('/v1/assets/upload/batch', TRUNCATED_MULTIPART.length), TRUNCATED_MULTIPART);
    expect(statusOf(answer)).toBe(401);
    expect(jsonOf(answer).code).toBe('UNAUTHENTICATED');
    await alive();
  });

  it('answers 400 to an authenticated multipart body that ends before its closing boundary', async () => {
    for (const path of ['/v1/assets/upload/batch', '/v1/contacts/import']) {
      const answer = await raw(multipartHead(path, TRUNCATED_MULTIPART.length, key), TRUNCATED_MULTIPART);
      expect(statusOf(answer), path).toBe(400);
      expect(jsonOf(answer)).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('Malformed multipart') });
      await alive();
    }
  });

  it('answers 400 to a multipart body with no boundary parameter and to one whose boundary never appears', async () => {
    const noBoundary = await call(srv, 'POST', '/v1/contacts/import', {
      key,
      headers: { 'content-type': 'multipart/form-data' },
      rawBody: 'hello',
    });
    expect(noBoundary.status).toBe(400);
    const wrong = await call(srv, 'POST', '/v1/contacts/import', {
      key,
      headers: { 'content-type': 'multipart/form-data; boundary=AAA' },
      rawBody: '--BBB\r\n\r\n',
    });
    expect(wrong.status).toBe(400);
    await alive();
  });

  it('answers 400 when the client goes away in the middle of an upload', async () => {
    const body = `--XYZ\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\nphone\r\n+1415`;
    // Content-Length promises more than is sent, then the socket closes.
    await raw(multipartHead('/v1/contacts/import', body.length + 1000, key), body, { timeoutMs: 1_000 });
    await alive();
  });
});

describe('the body is read only after the caller is known', () => {
  it('answers 401 on the headers alone: no 100 Continue for an unknown caller', async () => {
    const answer = await raw(multipartHead('/v1/contacts/import', 10_000_000, undefined, 'Expect: 100-continue\r\n'));
    expect(answer).not.toContain('100 Continue');
    expect(statusOf(answer)).toBe(401);
  });

  it('answers 403 on the headers alone for a key without the scope', async () => {
    const org = await srv.newOrg('Scopeless org');
    const narrow = await srv.newKey(org.organizationId, ['contacts:read']);
    const answer = await raw(multipartHead('/v1/contacts/import', 10_000_000, narrow.secret, 'Expect: 100-continue\r\n'));
    expect(answer).not.toContain('100 Continue');
    expect(statusOf(answer)).toBe(403);
  });

  it('sends 100 Continue to an authorised caller, then reads the body', async () => {
    const csv =
      '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\nphone\r\n+14155550100\r\n--XYZ--\r\n';
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let out = '';
      socket.on('data', (c) => {
        out += c.toString('latin1');
        if (out.startsWith('HTTP/1.1 100') && !out.includes('\r\n\r\nHTTP')) socket.write(csv);
        if (/\r\n\r\nHTTP\/1\.1 \d{3}[\s\S]*\r\n\r\n\{/.test(out)) socket.end();
      });
      socket.on('close', () => resolve(out));
      socket.write(multipartHead('/v1/contacts/import', csv.length, key, 'Expect: 100-continue\r\n'));
    });
    expect(answer.startsWith('HTTP/1.1 100 Continue')).toBe(true);
    expect(answer).toContain('HTTP/1.1 202');
  });

  it('keeps memory flat under 20 parallel unauthenticated 10 MB uploads that stall', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const before = process.memoryUsage().rss;
    const sockets = Array.from({ length: 20 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(multipartHead('/v1/contacts/import', 10_400_000));
      // A well-formed file part, so a server that parsed bodies before authenticating would buffer its bytes.
      socket.write('--XYZ\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n');
      for (let i = 0; i < 10; i++) socket.write(chunk); // then stall: never the last bytes
      return socket;
    });
    await new Promise((r) => setTimeout(r, 1_500));
    const grown = process.memoryUsage().rss - before;
    for (const s of sockets) s.destroy();
    // Before authentication came first, each held its 10 MB (≥ 200 MB here); now each is refused and discarded.
    expect(grown).toBeLessThan(60 * 1024 * 1024);
    await alive();
  });
});

describe('client mistakes are 4xx, never 500', () => {
  it.each(['%FF', '%zz', '%', '%ED%A0%80', 'a%00b'])('answers 400 to path parameter %s', async (bad) => {
    const res = await call(srv, 'DELETE', `/v1/tags/${bad}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', requestId: expect.any(String) });
  });

  it('answers 400 to malformed percent-encoding in the query string', async () => {
    for (const q of ['page=%FF', 'limit=%', 'search=%zz', '%E0%A4%A=1']) {
      const res = await call(srv, 'GET', `/v1/content-rules?${q}`, { key });
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 400 to a body that claims Content-Encoding: gzip but is not gzip', async () => {
    const res = await call(srv, 'POST', '/v1/contacts', {
      key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      rawBody: '{"phone":"+14155550100"}',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers 415 to an unknown Content-Encoding', async () => {
    const res = await call(srv, 'POST', '/v1/contacts', {
      key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'zstd-nonsense' },
      rawBody: '{}',
    });
    expect(res.status).toBe(415);
  });

  it('reports at most 20 failing fields for 100,000 wrongly typed items, without overflowing the stack', async () => {
    const res = await call(srv, 'POST', '/v1/contacts/bulk/tag', {
      key,
      body: { contactIds: Array.from({ length: 100_000 }, () => 5), tagIds: [] },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.length).toBeGreaterThan(0);
    expect(res.body.details.length).toBeLessThanOrEqual(20);
    await alive();
  });

  it('answers 400 to a NUL character in a string, a number JSON cannot hold, and deep nesting', async () => {
    const nul = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550111', name: 'a\u0000b' } });
    expect(nul.status).toBe(400);
    expect(nul.body.details[0]).toMatchObject({ field: 'body.name' });
    const huge = await call(srv, 'POST', '/v1/contacts', {
      key,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"phone":"+14155550112","attributes":{"score":1e400}}',
    });
    expect(huge.status).toBe(400);
    expect(huge.body.details[0]).toMatchObject({ field: 'body.attributes.score', message: 'must be a finite number' });
    const deep = await call(srv, 'POST', '/v1/contacts', {
      key,
      headers: { 'content-type': 'application/json' },
      rawBody: `{"phone":"+14155550113","attributes":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    });
    expect(deep.status).toBe(400);
    const surrogate = await call(srv, 'POST', '/v1/segments/preview', {
      key,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"conditions":[{"type":"attribute","attribute":"loyaltyTier","op":"gt","value":"\\ud800"}]}',
    });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.details[0]).toMatchObject({ field: 'body.conditions.0.value' });
    const created = await call(srv, 'GET', '/v1/contacts?search=%2B1415555011', { key });
    expect(created.body.data).toEqual([]);
  });

  it('reports the mistakes of the content type that was sent, not of every oneOf branch', async () => {
    const card = await call(srv, 'POST', '/v1/messages/preview', { key, body: { content: { type: 'card', text: 5 } } });
    expect(card.status).toBe(400);
    const fields = card.body.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort();
    expect(fields).toEqual(['body.content.text:type', 'body.content.title:required']);
    const unknown = await call(srv, 'POST', '/v1/messages/preview', { key, body: { content: { type: 'hologram' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([
      { field: 'body.content.type', message: 'must be one of: text, card, carousel, media, template', code: 'enum' },
    ]);
  });

  it('answers 400 to page numbers no list can reach', async () => {
    for (const page of ['1e400', 'Infinity', '9223372036854775807', '-1', '0']) {
      const res = await call(srv, 'GET', `/v1/contacts?page=${page}`, { key });
      expect(res.status, page).toBe(400);
    }
  });
});

describe('requests Node refuses itself still get an ErrorResponse', () => {
  it('431 for oversized headers', async () => {
    const answer = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusOf(answer)).toBe(431);
    expect(jsonOf(answer)).toMatchObject({ code: 'HEADERS_TOO_LARGE', requestId: expect.any(String) });
  });

  it('400 for a duplicate Content-Length', async () => {
    const answer = await raw('POST /v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}');
    expect(statusOf(answer)).toBe(400);
    expect(jsonOf(answer).code).toBe('VALIDATION_ERROR');
  });

  it('417 for an Expect header other than 100-continue', async () => {
    const answer = await raw('GET /health HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n');
    expect(statusOf(answer)).toBe(417);
    expect(jsonOf(answer).code).toBe('EXPECTATION_FAILED');
  });
});

describe('uploads in flight are capped per process', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ config: { uploadMemoryLimitBytes: 2 * 1024 * 1024 } });
  });
  afterAll(() => small.close());

  it('answers 503 with Retry-After once authenticated uploads hold more than UPLOAD_MEMORY_LIMIT_BYTES', async () => {
    const { apiKey } = await small.newOrg('Upload cap org');
    const smallPort = Number(new URL(small.baseUrl).port);
    const part = '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n';
    const first = connect(smallPort, '127.0.0.1');
    first.on('error', () => {});
    first.write(multipartHead('/v1/contacts/import', 9_000_000, apiKey.secret) + part);
    first.write(Buffer.alloc(1_500_000, 'a')); // then stall, holding 1.5 MB
    await new Promise((r) => setTimeout(r, 300));
    const answer = await new Promise<string>((resolve) => {
      const second = connect(smallPort, '127.0.0.1');
      let out = '';
      second.on('data', (c) => (out += c.toString('latin1')));
      second.on('close', () => resolve(out));
      second.on('error', () => resolve(out));
      second.write(multipartHead('/v1/contacts/import', 9_000_000, apiKey.secret) + part);
      second.write(Buffer.alloc(1_500_000, 'b'));
    });
    first.destroy();
    expect(statusOf(answer)).toBe(503);
    expect(answer).toMatch(/retry-after: 5/i);
    expect(jsonOf(answer).code).toBe('SERVICE_UNAVAILABLE');
  });
});
