// multipart/form-data → fields + in-memory files, parsed before validation (openapi-backend validates only
// bodies that are already parsed) and only after the caller is authenticated and the declared size accepted
// (body.ts). A body without a Content-Length (chunked) is counted as it comes. A file field's value in `body`
// is its file name, so the schema's `format: binary` string validates; the bytes are in `files`.
//
// Every stream's errors are handled (busboy emits `error` on the parser and on each file stream; an `error`
// with no listener ends the process). Bytes held by uploads in flight are capped per process, and an upload
// that stalls is cut off, so neither many nor slow uploads can exhaust memory.
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../domain/errors.ts';
import type { UploadedFile } from './handler-types.ts';

export type MultipartLimits = {
  /** The operation's `x-max-request-bytes`. */
  maxBytes: number;
  /** Bytes all uploads of this process may hold at once; past it → 503 with Retry-After. */
  maxInFlightBytes: number;
  /** An upload that sends nothing for this long is answered 408. */
  idleMs: number;
};

let inFlightBytes = 0;

export function parseMultipart(
  req: IncomingMessage,
  limits: MultipartLimits,
): Promise<{ body: Record<string, unknown>; files: UploadedFile[] }> {
  const { maxBytes } = limits;
  return new Promise((resolve, reject) => {
    const body: Record<string, unknown> = {};
    const files: UploadedFile[] = [];
    let held = 0; // bytes of this request counted in inFlightBytes
    let settled = false;
    const release = () => {
      inFlightBytes -= held;
      held = 0;
    };
    let idle: NodeJS.Timeout | undefined;
    const finish = (err: unknown, value?: { body: Record<string, unknown>; files: UploadedFile[] }) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      req.unpipe();
      if (err) {
        release();
        files.length = 0;
        bb?.removeAllListeners('file');
        req.resume(); // discard the rest (the caller closes the connection past a small cap)
        reject(err);
      } else {
        // The bytes now belong to the handler; they stop counting when the request ends.
        req.once('close', release);
        resolve(value!);
      }
    };
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => finish(new ApiError(408, 'REQUEST_TIMEOUT', `Upload sent nothing for ${limits.idleMs / 1000} s; nothing was stored.`)),
        limits.idleMs,
      );
    };
    let bb: busboy.Busboy | undefined;
    try {
      bb = busboy({ headers: req.headers, limits: { fileSize: maxBytes, files: 50, fields: 100, fieldSize: 64 * 1024, parts: 200 } });
    } catch {
      reject(malformed('missing or invalid boundary'));
      return;
    }
    const add = (name: string, value: unknown) => {
      const prev = body[name];
      body[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    };
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) return finish(malformed(`field "${name.slice(0, 64)}" is longer than 65,536 bytes`));
      add(name, value);
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('error', (err: Error) => finish(malformed(err.message)));
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        held += chunk.length;
        inFlightBytes += chunk.length;
        if (size > maxBytes || held > maxBytes) return finish(payloadTooLarge(maxBytes));
        if (inFlightBytes > limits.maxInFlightBytes) {
          return finish(
            new ApiError(503, 'SERVICE_UNAVAILABLE', 'The server is receiving too many uploads at once; retry shortly.', {
              headers: { 'Retry-After': '5' },
            }),
          );
        }
        chunks.push(chunk);
      });
      stream.on('limit', () => finish(payloadTooLarge(maxBytes)));
      stream.on('end', () => {
        if (settled) return;
        add(name, info.filename ?? name);
        files.push({ field: name, filename: info.filename ?? name, mimeType: info.mimeType, size, data: Buffer.concat(chunks) });
      });
    });
    bb.on('partsLimit', () => finish(malformed('too many parts')));
    bb.on('filesLimit', () => finish(malformed('too many files (at most 50)')));
    bb.on('fieldsLimit', () => finish(malformed('too many fields (at most 100)')));
    bb.on('error', (err) => finish(malformed((err as Error).message)));
    bb.on('close', () => finish(null, { body, files }));
    req.on('error', (err) => finish(malformed(err.message)));
    req.on('data', touch);
    touch();
    req.pipe(bb);
  });
}

function malformed(reason: string): ApiError {
  return new ApiError(400, 'VALIDATION_ERROR', `Malformed multipart body: ${reason}.`, {
    details: [{ field: 'body', message: `malformed multipart/form-data: ${reason}`, code: 'malformed' }],
  });
}

/**
 * The one 413 for a body over the operation's limit: from its Content-Length before reading (body.ts), or once
 * that many bytes came (a chunked upload). The message is the one the MCP server gives for an oversized argument.
 */
export function payloadTooLarge(limit: number): ApiError {
  return new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes.`);
}
