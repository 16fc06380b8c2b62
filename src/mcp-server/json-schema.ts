// The document's schemas as self-contained JSON Schemas for MCP clients: every `#/components/schemas/X` a schema
// reaches is copied into its `$defs` and the references rewritten to `#/$defs/X`, so a client can resolve them
// without the OpenAPI document.
import type { OpenApiDocument } from '../contract/document.ts';

export type JsonSchema = Record<string, unknown>;

const COMPONENT_PREFIX = '#/components/schemas/';
const DEFS_PREFIX = '#/$defs/';

/** A deep copy of `value` with component references rewritten; the names it references are added to `seen`. */
function rewrite(value: unknown, seen: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, seen));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT_PREFIX)) {
      seen.add(v.slice(COMPONENT_PREFIX.length).split('/')[0]!);
      out[key] = DEFS_PREFIX + v.slice(COMPONENT_PREFIX.length);
    } else {
      out[key] = rewrite(v, seen);
    }
  }
  return out;
}

/**
 * The schemas in `roots` (any shape holding schemas, e.g. `{properties: {...}}`), rewritten, with the `$defs`
 * every one of them needs, transitively.
 */
export function withDefinitions<T>(doc: OpenApiDocument, roots: T): { value: T; $defs: Record<string, JsonSchema> } {
  const components = ((doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}) as Record<string, unknown>;
  const pending = new Set<string>();
  const value = rewrite(roots, pending) as T;
  const $defs: Record<string, JsonSchema> = {};
  while (pending.size > 0) {
    const [name] = pending;
    pending.delete(name!);
    if (name! in $defs) continue;
    const schema = components[name!];
    if (schema === undefined) throw new Error(`unresolvable schema ${COMPONENT_PREFIX}${name}`);
    const found = new Set<string>();
    $defs[name!] = rewrite(schema, found) as JsonSchema;
    for (const n of found) if (!(n in $defs)) pending.add(n);
  }
  return { value, $defs };
}
