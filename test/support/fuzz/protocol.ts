// Requests that break HTTP/1.1 framing itself, written byte by byte onto a socket (node:http refuses to
// send them): duplicate or conflicting Content-Length, Content-Length with Transfer-Encoding, bad chunk
// sizes, NUL and obs-fold in headers, headers past Node's 16 KB limit, bodies shorter than announced.
import fc from 'fast-check';
import type { OpInfo } from './requests.ts';

export type RawCase = {
  bytes: Buffer;
  note: string;
  /** The client broke the framing: closing the connection without an answer is acceptable. */
  mayDrop: boolean;
  halfClose: boolean;
};

function concretePath(op: OpInfo): string {
  return op.path.replace(/\{\w+\}/g, '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b');
}

export function rawCaseArb(op: OpInfo, key: string): fc.Arbitrary<RawCase> {
  const path = concretePath(op);
  const body = '{"name":"fuzz"}';
  const n = Buffer.byteLength(body);
  const line = (target = path, method = op.method, version = 'HTTP/1.1') => `${method} ${target} ${version}\r\n`;
  const common = (auth: boolean) =>
    `Host: 127.0.0.1\r\nConnection: close\r\n${auth ? `Authorization: Bearer ${key}\r\n` : ''}Content-Type: application/json\r\n`;
  const cases: Array<(auth: boolean) => Omit<RawCase, 'halfClose'> & { halfClose?: boolean }> = [
    (a) => ({
      note: 'duplicate Content-Length (same value)',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: ${n}\r\nContent-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'conflicting Content-Length',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: ${n}\r\nContent-Length: ${n + 5}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'Content-Length: 5, 5',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: ${n}, ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'Content-Length and Transfer-Encoding: chunked',
      bytes: Buffer.from(
        `${line()}${common(a)}Content-Length: ${n}\r\nTransfer-Encoding: chunked\r\n\r\n${n.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      ),
      mayDrop: false,
    }),
    (a) => ({
      note: 'chunk size "zz"',
      bytes: Buffer.from(`${line()}${common(a)}Transfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'Transfer-Encoding: gzip, chunked (plain body)',
      bytes: Buffer.from(`${line()}${common(a)}Transfer-Encoding: gzip, chunked\r\n\r\n${n.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'NUL in a header value',
      bytes: Buffer.from(`${line()}${common(a)}X-Evil: a\u0000b\r\nContent-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'space before the colon',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length : ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'obs-fold header continuation',
      bytes: Buffer.from(`${line()}${common(a)}X-Folded: a\r\n  b\r\nContent-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: '20 KB header (past the 16 KB limit)',
      bytes: Buffer.from(`${line()}${common(a)}X-Big: ${'a'.repeat(20_000)}\r\nContent-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({ note: 'Content-Length: -1', bytes: Buffer.from(`${line()}${common(a)}Content-Length: -1\r\n\r\n${body}`), mayDrop: false }),
    (a) => ({
      note: 'Content-Length: 1e400',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: 1e400\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'Content-Length: 9223372036854775807, body cut short',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: 9223372036854775807\r\n\r\n${body}`),
      mayDrop: true,
      halfClose: true,
    }),
    (a) => ({
      note: 'body shorter than Content-Length, then EOF',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: ${n + 100}\r\n\r\n${body}`),
      mayDrop: true,
      halfClose: true,
    }),
    (a) => ({
      note: 'lowercase method',
      bytes: Buffer.from(`${line(path, op.method.toLowerCase())}${common(a)}Content-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'unknown method FUZZ',
      bytes: Buffer.from(`${line(path, 'FUZZ')}${common(a)}Content-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'absolute-form request-target',
      bytes: Buffer.from(`${line(`http://127.0.0.1${path}`)}${common(a)}Content-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'HTTP/1.0 without Host',
      bytes: Buffer.from(
        `${line(path, op.method, 'HTTP/1.0')}${a ? `Authorization: Bearer ${key}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${n}\r\n\r\n${body}`,
      ),
      mayDrop: false,
    }),
    (a) => ({
      note: 'raw 0xFF byte in the request-target',
      bytes: Buffer.concat([
        Buffer.from(`${op.method} ${path}`),
        Buffer.from([0xff]),
        Buffer.from(` HTTP/1.1\r\n${common(a)}Content-Length: ${n}\r\n\r\n${body}`),
      ]),
      mayDrop: false,
    }),
    (a) => ({
      note: 'request-target with a space',
      bytes: Buffer.from(`${line(`${path}/a b`)}${common(a)}Content-Length: ${n}\r\n\r\n${body}`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'pipelined garbage after a complete request',
      bytes: Buffer.from(`${line()}${common(a)}Content-Length: ${n}\r\n\r\n${body}\u0000\u0001GARBAGE\r\n\r\n`),
      mayDrop: false,
    }),
    (a) => ({
      note: 'two Authorization headers and two Content-Types',
      bytes: Buffer.from(
        `${line()}${common(a)}Authorization: Bearer msk_x_y\r\nContent-Type: text/plain\r\nContent-Length: ${n}\r\n\r\n${body}`,
      ),
      mayDrop: false,
    }),
  ];
  return fc.tuple(fc.nat({ max: cases.length - 1 }), fc.boolean()).map(([i, auth]) => {
    const c = cases[i]!(auth);
    const out: RawCase = { halfClose: false, ...c, note: `${c.note}${auth ? ' (with key)' : ' (no key)'}` };
    Object.defineProperty(out, fc.toStringMethod, {
      value: () => `${op.method} ${path}: ${out.note} → ${JSON.stringify(out.bytes.subarray(0, 240).toString('latin1'))}`,
      enumerable: false,
    });
    return out;
  });
}
