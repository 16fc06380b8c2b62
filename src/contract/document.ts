// The bundled contract (generated/openapi.json), loaded once.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type OpenApiDocument = {
  openapi: string;
  info: { version: string; title: string };
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

export const documentPath = fileURLToPath(new URL('../../generated/openapi.json', import.meta.url));

let cached: OpenApiDocument | undefined;
export function loadDocument(): OpenApiDocument {
  cached ??= JSON.parse(readFileSync(documentPath, 'utf8')) as OpenApiDocument;
  return cached;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** `scopes`: the API-key requirements' scope lists (empty = public); `signedUrl`: a signed link also works (src/lib/signed-urls.ts). */
export type OperationInfo = { operationId: string; method: string; path: string; scopes: string[][]; signedUrl: boolean };

/** Every operation with its security requirements. */
export function listOperations(doc: OpenApiDocument): OperationInfo[] {
  const out: OperationInfo[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as { operationId: string; security?: Array<Record<string, string[]>> } | undefined;
      if (!op) continue;
      const security = op.security ?? [];
      out.push({
        operationId: op.operationId,
        method,
        path,
        scopes: security.filter((r) => !('signedUrl' in r)).map((r) => Object.values(r).flat()),
        signedUrl: security.some((r) => 'signedUrl' in r),
      });
    }
  }
  return out;
}

/** Every scope and role any operation requires: what a full-access key holds. */
export function allScopes(doc: OpenApiDocument): string[] {
  const set = new Set<string>();
  for (const op of listOperations(doc)) for (const req of op.scopes) for (const s of req) set.add(s);
  return [...set].sort();
}

/** Whether a key holding `granted` may call the operation: public, or one requirement fully held (as the router decides). */
export function keyMayCall(op: Pick<OperationInfo, 'scopes'>, granted: ReadonlySet<string>): boolean {
  return op.scopes.length === 0 || op.scopes.some((requirement) => requirement.every((s) => granted.has(s)));
}

/** An operation object of the document as written (parameters, requestBody, responses may be `$ref`s). */
export type OperationObject = {
  operationId: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
  [key: string]: unknown;
};

/** Every operation object with its method and path; path-level parameters come first in `parameters`. */
export function listOperationObjects(doc: OpenApiDocument): Array<{ method: string; path: string; operation: OperationObject }> {
  const out: Array<{ method: string; path: string; operation: OperationObject }> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const shared = (item.parameters as unknown[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = item[method] as OperationObject | undefined;
      if (!op) continue;
      out.push({ method, path, operation: { ...op, parameters: [...shared, ...(op.parameters ?? [])] } });
    }
  }
  return out;
}

/** The target of a local `$ref` (`#/components/…`), or the node itself when it is not a reference. */
export function resolveRef<T = unknown>(doc: OpenApiDocument, node: unknown): T {
  let current = node;
  for (let hops = 0; hops < 10; hops++) {
    const ref = (current as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return current as T;
    current = ref
      .slice(2)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], doc);
    if (current === undefined) throw new Error(`unresolvable $ref ${ref}`);
  }
  throw new Error('$ref chain too long');
}
