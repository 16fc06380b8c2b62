// JSON Schema (OpenAPI 3.1) → fast-check arbitraries of *valid-ish* values: values that follow the schema
// closely enough to get past validation often (so requests reach handlers and the database), without trying
// to honour every keyword (if/then/else, not, uniqueItems, cross-field rules are ignored).
import fc from 'fast-check';

export type Schema = Record<string, any>;
export type Doc = Record<string, any>;

/** Follows `$ref`s (local ones only: the bundled document has no others). */
export function deref(doc: Doc, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s && typeof s.$ref === 'string' && i < 20; i++) {
    s = (s.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: any, part) => node?.[part], doc) as Schema | undefined;
  }
  return s;
}

/** allOf flattened into one object schema (properties and required merged), recursively. */
function flatten(doc: Doc, schema: Schema): Schema {
  if (!Array.isArray(schema.allOf)) return schema;
  const out: Schema = { ...schema, allOf: undefined, properties: { ...(schema.properties ?? {}) }, required: [...(schema.required ?? [])] };
  for (const part of schema.allOf as Schema[]) {
    const p = flatten(doc, deref(doc, part) ?? {});
    Object.assign(out.properties, p.properties ?? {});
    out.required.push(...(p.required ?? []));
    for (const k of [
      'type',
      'additionalProperties',
      'enum',
      'const',
      'oneOf',
      'anyOf',
      'format',
      'pattern',
      'items',
      'minLength',
      'maxLength',
      'minimum',
      'maximum',
    ]) {
      if (p[k] !== undefined && out[k] === undefined) out[k] = p[k];
    }
  }
  if (Object.keys(out.properties).length === 0) delete out.properties;
  return out;
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties || schema.additionalProperties !== undefined || schema.required) return ['object'];
  if (schema.items) return ['array'];
  if (schema.pattern || schema.format || schema.minLength !== undefined || schema.maxLength !== undefined) return ['string'];
  if (schema.minimum !== undefined || schema.maximum !== undefined) return ['number'];
  return [];
}

const isoDate = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true });

function stringArb(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Math.max(min, 40);
  const fit = (a: fc.Arbitrary<string>) => a.map((s) => (s.length > max ? s.slice(0, max) : s));
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return isoDate.map((d) => d.toISOString());
    case 'date':
      return isoDate.map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'] });
    case 'binary':
      return fc.string({ maxLength: 20 });
    default:
      break;
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fit(fc.stringMatching(new RegExp(schema.pattern as string)));
    } catch {
      // a pattern fast-check cannot invert: plain strings instead
    }
  }
  return fc.string({ minLength: min, maxLength: Math.min(max, min + 40) });
}

function numberArb(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : undefined);
  const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : undefined);
  if (integer) return fc.integer({ min: lo ?? -1_000_000, max: hi ?? 1_000_000 });
  return fc.double({ min: lo ?? -1e6, max: hi ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/**
 * Valid-ish values for `schema`. `depth` bounds recursion through `$ref`s and nested containers: past it,
 * objects carry only their required properties and arrays are as short as allowed.
 */
export type ValidishOptions = {
  /** Drawn (two times in three) for every free-text string — no enum, const, format or pattern — so hostile text
   * lands in fields that otherwise validate, as many of them as the body has. */
  freeText?: fc.Arbitrary<string>;
};

export function validish(doc: Doc, schema: Schema | undefined, depth = 6, opts: ValidishOptions = {}): fc.Arbitrary<unknown> {
  const s0 = deref(doc, schema);
  if (!s0 || typeof s0 !== 'object') return fc.jsonValue({ maxDepth: 2 });
  // The document's own examples pass validation (spec lint checks them): half the time, start from one, so
  // hostile mutations land in bodies that otherwise reach the handler and the database.
  const examples = [...(Array.isArray(s0.examples) ? s0.examples : []), ...(s0.example !== undefined ? [s0.example] : [])];
  const generated = generate(doc, s0, depth, opts);
  // with hostile free text, whole-body examples would hide it: examples only where they help validity most,
  // constrained strings (phones, time zones, ids)
  const constrained = typeof s0.pattern === 'string' || typeof s0.format === 'string';
  if (!examples.length || (opts.freeText && !constrained)) return generated;
  return fc.oneof(
    fc.constantFrom(...examples).map((e) => structuredClone(e) as unknown),
    generated,
  );
}

function generate(doc: Doc, s0: Schema, depth: number, opts: ValidishOptions): fc.Arbitrary<unknown> {
  const s = flatten(doc, s0);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (Array.isArray(branches) && branches.length) {
    // a oneOf/anyOf next to sibling keywords (e.g. `type: string` + anyOf of formats): merge each branch in
    const rest: Schema = { ...s, oneOf: undefined, anyOf: undefined };
    const hasSiblings = typesOf(rest).length > 0 || rest.properties;
    return fc.oneof(
      ...branches.map((b) => validish(doc, hasSiblings ? { ...rest, ...flatten(doc, deref(doc, b) ?? {}) } : b, depth - 1, opts)),
    );
  }
  const types = typesOf(s);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((t) => byType(doc, s, t, depth, opts)));
}

function byType(doc: Doc, s: Schema, type: string, depth: number, opts: ValidishOptions): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'string':
      return opts.freeText && !s.format && !s.pattern ? fc.oneof(stringArb(s), { weight: 2, arbitrary: opts.freeText }) : stringArb(s);
    case 'array': {
      const minLength = s.minItems ?? 0;
      const maxLength = depth <= 0 ? minLength : Math.min(s.maxItems ?? 3, minLength + 3);
      return fc.array(validish(doc, s.items ?? {}, depth - 1, opts), { minLength, maxLength });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = ((s.required ?? []) as string[]).filter((k) => k in props || s.additionalProperties !== false);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) {
        if (depth <= 0 && !required.includes(k)) continue;
        if (deref(doc, v)?.readOnly) continue;
        model[k] = validish(doc, v, depth - 1, opts);
      }
      for (const k of required) model[k] ??= fc.jsonValue({ maxDepth: 1 });
      const base = fc.record(model, { requiredKeys: required });
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object' && depth > 0) {
        const keys = s.propertyNames
          ? (stringArb(deref(doc, s.propertyNames) ?? {}) as fc.Arbitrary<string>)
          : fc.string({ minLength: 1, maxLength: 12 });
        return fc
          .tuple(base, fc.dictionary(keys, validish(doc, extra, depth - 1, opts), { maxKeys: Math.min(s.maxProperties ?? 3, 3) }))
          .map(([a, b]) => ({ ...b, ...(a as object) }));
      }
      return base;
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** A parameter's valid-ish value as it travels in a URL or header (arrays comma-joined). */
export function paramText(doc: Doc, schema: Schema | undefined): fc.Arbitrary<string> {
  return validish(doc, schema, 1).map((v) =>
    Array.isArray(v) ? v.join(',') : v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v),
  );
}
