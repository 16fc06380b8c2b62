// The document's schemas as self-contained JSON Schemas for MCP clients: every `#/components/schemas/X` a schema
// reaches is copied into its `$defs` and the references rewritten to `#/$defs/X`, so a client can resolve them
// without the OpenAPI document.
//
// MCP has no way to share definitions between tools: each tool carries the `$defs` it needs, so a schema used by
// 60 tools is sent 60 times in tools/list. What is copied is therefore only what its reader uses:
// - an input schema is read by the model that writes the arguments: it keeps the descriptions (the rules the
//   document states in words) but not the examples, which repeat fragments of the one example of the whole
//   request the tool's `body` keeps (see tool-catalog.ts);
// - an output schema is read by the client that checks `structuredContent` against it: it keeps every keyword
//   that validates and none of the annotations (descriptions, titles, examples, defaults);
// - neither keeps OpenAPI's own keywords, which are not JSON Schema (`discriminator`, whose mapping points into
//   `#/components`, `example`, `xml`, `externalDocs`, `x-…` extensions).
import type { OpenApiDocument } from '../contract/document.ts';

export type JsonSchema = Record<string, unknown>;

/** Who reads the schema: the model writing arguments, or the client validating an answer. */
export type SchemaReader = 'input' | 'output';

const COMPONENT_PREFIX = '#/components/schemas/';
const DEFS_PREFIX = '#/$defs/';

/** Keywords whose value maps names to schemas (the names are data, never keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, copied as is. */
const DATA = new Set(['enum', 'const', 'default', 'examples', 'required', 'dependentRequired']);
const OPENAPI_ONLY = new Set(['discriminator', 'example', 'xml', 'externalDocs']);
const DROPPED: Record<SchemaReader, ReadonlySet<string>> = {
  input: new Set([...OPENAPI_ONLY, 'examples']),
  output: new Set([...OPENAPI_ONLY, 'examples', 'description', 'title', 'default', 'deprecated', 'readOnly', 'writeOnly', '$comment']),
};

/** A copy of schema `value` for `reader`, component references rewritten; the names it references are added to `seen`. */
function rewrite(value: unknown, reader: SchemaReader, seen: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, reader, seen));
  if (value === null || typeof value !== 'object') return value;
  const dropped = DROPPED[reader];
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (dropped.has(key) || key.startsWith('x-')) continue;
    if (key === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT_PREFIX)) {
      seen.add(v.slice(COMPONENT_PREFIX.length).split('/')[0]!);
      out[key] = DEFS_PREFIX + v.slice(COMPONENT_PREFIX.length);
    } else if (DATA.has(key)) {
      out[key] = v;
    } else if (SCHEMA_MAPS.has(key) && v !== null && typeof v === 'object') {
      out[key] = Object.fromEntries(Object.entries(v).map(([name, schema]) => [name, rewrite(schema, reader, seen)]));
    } else {
      out[key] = rewrite(v, reader, seen);
    }
  }
  return out;
}

/**
 * The schemas in `roots` (a list of schemas, or a map of names to schemas such as `properties`), rewritten for
 * `reader`, with the `$defs` every one of them needs, transitively.
 */
export function withDefinitions<T extends JsonSchema[] | Record<string, JsonSchema>>(
  doc: OpenApiDocument,
  roots: T,
  reader: SchemaReader,
): { value: T; $defs: Record<string, JsonSchema> } {
  const components = ((doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}) as Record<string, unknown>;
  const pending = new Set<string>();
  const value = (
    Array.isArray(roots)
      ? roots.map((r) => rewrite(r, reader, pending))
      : Object.fromEntries(Object.entries(roots).map(([n, s]) => [n, rewrite(s, reader, pending)]))
  ) as T;
  const $defs: Record<string, JsonSchema> = {};
  while (pending.size > 0) {
    const [name] = pending;
    pending.delete(name!);
    if (name! in $defs) continue;
    const schema = components[name!];
    if (schema === undefined) throw new Error(`unresolvable schema ${COMPONENT_PREFIX}${name}`);
    const found = new Set<string>();
    $defs[name!] = rewrite(schema, reader, found) as JsonSchema;
    for (const n of found) if (!(n in $defs)) pending.add(n);
  }
  return { value, $defs };
}
