// The node bound and scan that refuse a hopeless JSON body before it is parsed (src/http/json-node-bound.ts): the
// bound must never refuse a valid body, and the scan must count what JSON.parse builds. Properties, no server.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { loadDocument } from '../src/contract/document.ts';
import { operationsFrom, startupOperationHeads } from '../src/http/operations.ts';
import { nodeBound, nodesOverCap, type Nodes } from '../src/http/json-node-bound.ts';
import { validish, type Doc } from './support/fuzz/schema.ts';
import { describeOperations } from './support/fuzz/requests.ts';

/** The objects and arrays, and the keys, of a parsed value: what JSON.parse built. */
function nodesOf(value: unknown): Nodes {
  if (value === null || typeof value !== 'object') return { containers: 0, keys: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const own = Array.isArray(value) ? 0 : children.length;
  return children
    .map(nodesOf)
    .reduce((a, b) => ({ containers: a.containers + b.containers, keys: a.keys + b.keys }), { containers: 1, keys: own });
}

describe('the node scan', () => {
  it('counts the objects, arrays and keys JSON.parse builds, whatever the strings hold', () => {
    // Strings full of the bytes it counts, escaped quotes and backslashes among them.
    const tricky = fc.string({ unit: fc.constantFrom('{', '[', ':', '"', '\\', ',', 'a', 'é', '\u0000') });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        tricky,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('value')),
        fc.dictionary(tricky, tie('value')),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const bytes = Buffer.from(JSON.stringify(value));
        const { containers, keys } = nodesOf(JSON.parse(bytes.toString()));
        // exactly at the counts: not over; one below either: over, naming that kind
        const roomy = { containers: containers + bytes.length, keys: keys + bytes.length };
        expect(nodesOverCap(bytes, { containers, keys: keys + bytes.length })).toBeUndefined();
        expect(nodesOverCap(bytes, { containers: containers + bytes.length, keys })).toBeUndefined();
        if (containers > 0 && bytes.length > containers - 1)
          expect(nodesOverCap(bytes, { ...roomy, containers: containers - 1 })).toBe('containers');
        if (keys > 0 && bytes.length > keys - 1) expect(nodesOverCap(bytes, { ...roomy, keys: keys - 1 })).toBe('keys');
      }),
      { numRuns: 300, seed: 29 },
    );
  });
});

describe('the node bound of every operation’s JSON body', () => {
  it('is at least what each valid body sampled from its schema holds', () => {
    const doc = loadDocument();
    const operations = operationsFrom(startupOperationHeads().operations, loadDocument);
    const infos = new Map(describeOperations(doc as unknown as Doc).map((info) => [info.operationId, info]));
    const ajv = new Ajv({ strict: false, validateSchema: false });
    addFormats.default(ajv);
    ajv.addFormat('binary', true);
    let bounded = 0;
    let valid = 0;
    for (const op of operations) {
      const schema = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json']
        ?.schema;
      const info = infos.get(op.operationId!);
      if (!schema || !info?.json) continue;
      const bound = nodeBound(schema);
      expect(Number.isFinite(bound.containers) && Number.isFinite(bound.keys), `${op.operationId} is bounded`).toBe(true);
      bounded++;
      const check = ajv.compile(schema as object);
      for (const body of fc.sample(validish(doc as unknown as Doc, info.json), { numRuns: 60, seed: 31 })) {
        if (!check(body)) continue;
        valid++;
        const held = nodesOf(body);
        expect(held.containers, `${op.operationId}: objects and arrays of ${JSON.stringify(body).slice(0, 300)}`).toBeLessThanOrEqual(
          bound.containers,
        );
        expect(held.keys, `${op.operationId}: keys of ${JSON.stringify(body).slice(0, 300)}`).toBeLessThanOrEqual(bound.keys);
      }
    }
    expect(bounded).toBeGreaterThanOrEqual(70);
    console.info(`json-node-bound: ${bounded} bodies bounded, ${valid} valid samples within their bounds`);
    expect(valid).toBeGreaterThan(bounded); // the samples do reach valid bodies, most operations several
  });
});
