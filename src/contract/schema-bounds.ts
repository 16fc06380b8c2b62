// Bounds of the document's named schemas (generated/openapi.json), for the code that keeps what it stores within
// them: a write path that clamps or refuses takes the document's own number, so the value it stores always reads
// back through response validation, and changing a bound in the document changes the code with it.
import { loadDocument, resolveRef } from './document.ts';

type Schema = { properties?: Record<string, unknown>; [keyword: string]: unknown };

/** The schema `components.schemas[name]`, then down `properties` by `path`, every `$ref` followed. */
function schemaAt(name: string, path: readonly string[]): Schema {
  const doc = loadDocument();
  let node = resolveRef<Schema | undefined>(doc, (doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas?.[name]);
  for (const property of path) node = resolveRef<Schema | undefined>(doc, node?.properties?.[property]);
  if (!node) throw new Error(`the document has no schema ${[name, ...path].join('.')}`);
  return node;
}

/** A numeric bound (`maxLength`, `maxProperties`, `maxItems`); throws (at start-up, where it is read) when absent. */
export function schemaBound(name: string, path: readonly string[], keyword: 'maxLength' | 'maxProperties' | 'maxItems'): number {
  const value = schemaAt(name, path)[keyword];
  if (typeof value !== 'number') throw new Error(`the document's ${[name, ...path].join('.')} has no ${keyword}`);
  return value;
}

/** The schema's `pattern` as a RegExp (unicode, as Ajv compiles it); throws when absent. */
export function schemaPattern(name: string, path: readonly string[] = []): RegExp {
  const value = schemaAt(name, path).pattern;
  if (typeof value !== 'string') throw new Error(`the document's ${[name, ...path].join('.')} has no pattern`);
  return new RegExp(value, 'u');
}
