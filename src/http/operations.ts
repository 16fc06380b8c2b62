// The document's operations as the API routes and validates them, dereferenced where they are read. openapi-backend's
// quick init dereferences the whole document (a deep copy of its ~1 MB, then every node walked) before the first
// request: 20–28 ms of CPU before the first /health (issue 38, bench part a), mostly for request bodies and
// responses that /health never reads. Here each operation is flattened as openapi-backend's router flattens it
// (router.getOperations(): the operation's fields, its path and lower-case method, its own parameters then its path
// item's, its own security or the document's) and dereferenced as the library dereferences (each `$ref` replaced by
// its target, one copy per target shared by every reference, cycles kept as cycles) — but its request body,
// responses and description only when first read, by whoever reads them (the body reader, the validators, the MCP
// server). test/operations.test.ts compares every operation, field for field, with the library's own.
//
// The heads (every field but those) are made by `npm run generate` into generated/operations.json (~KB), which
// start-up reads instead of parsing the whole document (~1.5 MB: ~20 ms of CPU, and its garbage): the document is
// parsed on the first read of a large field (src/contract/document.ts, loadOperationHeads).
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Operation } from 'openapi-backend';
import { documentPath, loadDocument, resolveRef, type OpenApiDocument } from '../contract/document.ts';

/** The method order of the library's router (its `_.pick` list): operations of one path come in this order. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Fields dereferenced on their first read: the large ones, which routing and authorisation never need. */
const ON_FIRST_READ = new Set(['requestBody', 'responses', 'description']);

/** One operation before its large fields are read: its other fields, dereferenced, and the names of the large ones it has. */
export type OperationHead = { fields: Record<string, unknown>; later: string[] };

/** Every operation's head, in the library's order (generated/operations.json holds them for the bundled document). */
function operationHeads(document: OpenApiDocument): OperationHead[] {
  const deref = dereferencer(document);
  const heads: OperationHead[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (!raw) continue;
      const fields: Record<string, unknown> = {};
      const later: string[] = [];
      for (const [key, value] of Object.entries(raw)) {
        if (ON_FIRST_READ.has(key)) later.push(key);
        else fields[key] = deref(value);
      }
      fields.path = path;
      fields.method = method;
      fields.parameters = deref([
        ...((raw.parameters as unknown[] | undefined) ?? []),
        ...((item.parameters as unknown[] | undefined) ?? []),
      ]);
      fields.security = deref(raw.security ?? document.security ?? []);
      heads.push({ fields, later });
    }
  }
  return heads;
}

/**
 * The operations of `heads`, each large field dereferenced from `document()` on its first read (an enumerable
 * field, so spreads and copies see it; one dereference of the document shared by every operation).
 */
export function operationsFrom(heads: OperationHead[], document: () => OpenApiDocument): Operation[] {
  let deref: (<T>(node: T) => T) | undefined;
  return heads.map(({ fields, later }) => {
    const op: Record<string, unknown> = { ...fields };
    for (const key of later) {
      Object.defineProperty(op, key, {
        enumerable: true,
        configurable: true,
        get() {
          const doc = document();
          deref ??= dereferencer(doc);
          const raw = doc.paths[fields.path as string]?.[fields.method as string] as Record<string, unknown> | undefined;
          // Heads made from another document (generated/operations.json older than generated/openapi.json).
          if (!raw || raw.operationId !== fields.operationId)
            throw new Error(`${String(fields.operationId)}: the operation heads do not match the document; run \`npm run generate\``);
          const value = deref(raw[key]);
          Object.defineProperty(op, key, { value, enumerable: true, configurable: true, writable: true });
          return value;
        },
      });
    }
    return op as unknown as Operation;
  });
}

export const operationHeadsPath = fileURLToPath(new URL('../../generated/operations.json', import.meta.url));

/** generated/operations.json: the operation heads of generated/openapi.json, and that file's length in bytes. */
export type OperationHeadsFile = {
  documentBytes: number;
  openapi: string;
  info: { title: string; version: string };
  operations: OperationHead[];
};

/** What `npm run generate` writes to generated/operations.json for `document` (its text `documentBytes` long). */
export function operationHeadsFile(document: OpenApiDocument, documentBytes: number): OperationHeadsFile {
  const { title, version } = document.info;
  return { documentBytes, openapi: document.openapi, info: { title, version }, operations: operationHeads(document) };
}

/**
 * The heads start-up routes by: generated/operations.json, when it was made from generated/openapi.json as that
 * file is now (same length); else (missing, or the document bundled again without `npm run generate`) made from
 * the document, as the generate step makes them: the same operations, for a slower start.
 */
export function startupOperationHeads(): OperationHeadsFile {
  const documentBytes = statSync(documentPath).size;
  try {
    const file = JSON.parse(readFileSync(operationHeadsPath, 'utf8')) as OperationHeadsFile;
    if (file.documentBytes === documentBytes) return file;
  } catch {
    // missing or unreadable: made from the document below
  }
  return operationHeadsFile(loadDocument(), documentBytes);
}

/**
 * A node of `document` with every `$ref` in it replaced by its (dereferenced) target. Each node is copied once:
 * every reference to one target gets the same object, and a schema that refers to itself is a cycle.
 */
function dereferencer(document: OpenApiDocument): <T>(node: T) => T {
  const copies = new Map<object, unknown>();
  const deref = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    const known = copies.get(node);
    if (known !== undefined) return known;
    if (!Array.isArray(node) && typeof (node as { $ref?: unknown }).$ref === 'string') {
      const copy = deref(resolveRef<object>(document, node));
      copies.set(node, copy);
      return copy;
    }
    if (Array.isArray(node)) {
      const copy: unknown[] = [];
      copies.set(node, copy);
      for (const item of node) copy.push(deref(item));
      return copy;
    }
    const copy: Record<string, unknown> = {};
    copies.set(node, copy);
    for (const [key, value] of Object.entries(node)) copy[key] = deref(value);
    return copy;
  };
  return deref as <T>(node: T) => T;
}
