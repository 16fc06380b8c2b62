// Multipart uploads as tools: JSON arguments cannot hold bytes, so each file part of the operation's multipart
// schema is given as `{filename, mimeType?, contentBase64}` and turned back into exactly what the multipart parser
// (src/http/multipart.ts) hands the API: the part's file name in the body (so the schema's `format: binary` string
// validates) and the bytes in `files`. The operation's own limit applies to the decoded bytes.
import type { UploadedFile } from '../domain/files.ts';
import { ApiError, MAX_FIELD_ERRORS, type FieldError } from '../domain/errors.ts';
import type { JsonSchema } from './json-schema.ts';

const FILE_ARGUMENT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['filename', 'contentBase64'],
  properties: {
    filename: { type: 'string', minLength: 1, maxLength: 255, description: 'The file name, as a multipart part would carry it.' },
    mimeType: {
      type: 'string',
      maxLength: 255,
      description: "The part's Content-Type (default application/octet-stream); the server may detect the type from the bytes.",
    },
    contentBase64: { type: 'string', contentEncoding: 'base64', description: 'The bytes, base64 (standard alphabet, padding optional).' },
  },
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const isBinary = (node: JsonSchema) => node.type === 'string' && node.format === 'binary';

/** `schema` with every binary string (also inside arrays, anyOf, oneOf) replaced by a file argument. */
function replaceBinary(node: JsonSchema): { schema: JsonSchema; hasFile: boolean } {
  if (isBinary(node))
    return { schema: { ...FILE_ARGUMENT_SCHEMA, ...(node.description ? { description: node.description } : {}) }, hasFile: true };
  let hasFile = false;
  const out: JsonSchema = { ...node };
  if (node.items && typeof node.items === 'object') {
    const r = replaceBinary(node.items as JsonSchema);
    out.items = r.schema;
    hasFile ||= r.hasFile;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(node[key])) continue;
    out[key] = (node[key] as JsonSchema[]).map((variant) => {
      const r = replaceBinary(variant);
      hasFile ||= r.hasFile;
      return r.schema;
    });
  }
  return { schema: out, hasFile };
}

/** The multipart body schema (resolved) as a tool's `body`: file parts become file arguments. */
export function uploadBodySchema(schema: JsonSchema): { schema: JsonSchema; fileFields: string[] } {
  const properties: Record<string, JsonSchema> = {};
  const fileFields: string[] = [];
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const r = replaceBinary(property);
    properties[name] = r.schema;
    if (r.hasFile) fileFields.push(name);
  }
  if (fileFields.length === 0) throw new Error('multipart body without a binary part');
  return { schema: { ...schema, properties }, fileFields };
}

/** File arguments → the multipart parser's body and files; 400 naming the field for a malformed one, 413 past `limit`. */
export function toUploadedFiles(
  body: Record<string, unknown>,
  fileFields: readonly string[],
  limit: number,
): { body: Record<string, unknown>; files: UploadedFile[] } {
  const out: Record<string, unknown> = { ...body };
  const files: UploadedFile[] = [];
  const problems: FieldError[] = [];
  let total = 0;
  for (const field of fileFields) {
    const value = body[field];
    if (value === undefined) continue; // a missing required part: request validation names it
    const many = Array.isArray(value);
    const names: string[] = [];
    (many ? value : [value]).forEach((file: unknown, i: number) => {
      const at = many ? `body.${field}.${i}` : `body.${field}`;
      const f = file as { filename?: unknown; mimeType?: unknown; contentBase64?: unknown } | null;
      if (typeof f !== 'object' || f === null || Array.isArray(f))
        return problems.push({ field: at, message: 'must be a file: {filename, mimeType?, contentBase64}', code: 'type' });
      const unknown = Object.keys(f).filter((k) => !['filename', 'mimeType', 'contentBase64'].includes(k));
      for (const k of unknown) problems.push({ field: `${at}.${k}`, message: 'is not a known field', code: 'additionalProperties' });
      if (typeof f.filename !== 'string' || f.filename.length === 0 || f.filename.length > 255)
        problems.push({ field: `${at}.filename`, message: 'must be a string of 1 to 255 characters', code: 'type' });
      if (f.mimeType !== undefined && (typeof f.mimeType !== 'string' || f.mimeType.length > 255))
        problems.push({ field: `${at}.mimeType`, message: 'must be a string of at most 255 characters', code: 'type' });
      const content = typeof f.contentBase64 === 'string' ? f.contentBase64.replace(/\s+/g, '') : undefined;
      if (content === undefined || !BASE64.test(content))
        return problems.push({ field: `${at}.contentBase64`, message: 'must be base64', code: 'contentEncoding' });
      if (problems.length) return;
      const data = Buffer.from(content, 'base64');
      total += data.length;
      const filename = f.filename as string;
      names.push(filename);
      files.push({ field, filename, mimeType: (f.mimeType as string | undefined) ?? 'application/octet-stream', size: data.length, data });
    });
    // As the multipart parser: one part is a value, a repeated part a list.
    out[field] = many ? names : names[0];
  }
  if (problems.length)
    throw new ApiError(400, 'VALIDATION_ERROR', 'Request validation failed.', { details: problems.slice(0, MAX_FIELD_ERRORS) });
  if (total > limit) throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `Upload exceeds the limit of ${limit} bytes; nothing was stored.`);
  return { body: out, files };
}
