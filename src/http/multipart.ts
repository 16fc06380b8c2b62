// multipart/form-data → fields + in-memory files, parsed before validation (openapi-backend validates only
// bodies that are already parsed). A file field's value in `body` is its file name, so the schema's
// `format: binary` string validates; the bytes are in `files`.
import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from './errors.ts';
import type { UploadedFile } from './handler-types.ts';

export function parseMultipart(req: Request, maxBytes: number): Promise<{ body: Record<string, unknown>; files: UploadedFile[] }> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const body: Record<string, unknown> = {};
    const files: UploadedFile[] = [];
    let total = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      req.unpipe();
      req.resume(); // drain, so the client can read the error answer
      reject(err);
    };
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { fileSize: maxBytes, files: 50, fields: 100 } });
    } catch {
      reject(new ApiError(400, 'VALIDATION_ERROR', 'Malformed multipart body.', { details: [{ field: 'body', message: 'malformed multipart/form-data' }] }));
      return;
    }
    const add = (name: string, value: unknown) => {
      const prev = body[name];
      body[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    };
    bb.on('field', (name, value) => add(name, value));
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        total += chunk.length;
        if (total > maxBytes) return fail(tooLarge(maxBytes));
        chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      stream.on('end', () => {
        if (failed) return;
        add(name, info.filename ?? name);
        files.push({ field: name, filename: info.filename ?? name, mimeType: info.mimeType, size, data: Buffer.concat(chunks) });
      });
    });
    bb.on('error', (err) => fail(new ApiError(400, 'VALIDATION_ERROR', `Malformed multipart body: ${String((err as Error).message)}`)));
    bb.on('close', () => {
      if (!failed) resolve({ body, files });
    });
    req.pipe(bb);
  });
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'PAYLOAD_TOO_LARGE', `Upload exceeds the limit of ${maxBytes} bytes; nothing was stored.`);
}
