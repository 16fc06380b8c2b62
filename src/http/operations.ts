// The document's operations as the API routes and validates them, dereferenced where they are read. openapi-backend's
// quick init dereferences the whole document (a deep copy of its ~1 MB, then every node walked) before the first
// request: 20–28 ms of CPU before the first /health (issue 38, bench part a), mostly for request bodies and
// responses that /health never reads. Here each operation is flattened as openapi-backend's router flattens it
// (router.getOperations(): the operation's fields, its path and lower-case method, its own parameters then its path
// item's, its own security or the document's) and dereferenced as the library dereferences (each `$ref` replaced by
// its target, one copy per target shared by every reference, cycles kept as cycles) — but its request body,
// responses and description only when first read, by whoever reads them (the body reader, the validators, the MCP
// server). test/operations.test.ts compares every operation, field for field, with the library's own.
import type { Operation } from 'openapi-backend';
import { resolveRef, type OpenApiDocument } from '../contract/document.ts';

/** The method order of the library's router (its `_.pick` list): operations of one path come in this order. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Fields dereferenced on their first read: the large ones, which routing and authorisation never need. */
const ON_FIRST_READ = new Set(['requestBody', 'responses', 'description']);

/** One operation before its large fields are read: its other fields, dereferenced, and the names of the large ones it has. */
type OperationHead = { fields: Record<string, unknown>; later: string[] };

/** Every operation's head, in the library's order. */
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
function operationsFrom(heads: OperationHead[], document: () => OpenApiDocument): Operation[] {
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
          const raw = doc.paths[fields.path as string]![fields.method as string] as Record<string, unknown>;
          const value = deref(raw[key]);
          Object.defineProperty(op, key, { value, enumerable: true, configurable: true, writable: true });
          return value;
        },
      });
    }
    return op as unknown as Operation;
  });
}

/** The document's operations (operationHeads, then operationsFrom). */
export function operationsOf(document: OpenApiDocument): Operation[] {
  return operationsFrom(operationHeads(document), () => document);
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
