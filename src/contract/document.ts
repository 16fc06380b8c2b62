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
