// The contract itself: the specification's operations (test/fixtures/endpoints.tsv, vendored from the
// specification) and the few listed additions (BEYOND), unique operationIds, one of the 16 section tags each, and every rule of scripts/spec-rules.ts
// (scopes, error responses, valid examples, honest bounds on request inputs …).
import { describe, expect, it } from 'vitest';
import { listOperations, loadDocument } from '../src/contract/document.ts';
import { checkDocument, checkRequestBounds } from '../scripts/spec-rules.ts';
import { readEndpoints } from '../scripts/spec-coverage.ts';

const doc = loadDocument();
const ops = listOperations(doc);
const tsv = readEndpoints();
/**
 * Operations the document adds to the specification's 194 (issue 37 item 7). Additive only: the specification's
 * operations keep their shapes, `npm run spec:check` still finds all 194 (it reports these as "beyond", which
 * does not fail it), and the conformance suite, which calls the specification's operations, never meets them.
 * Each addition says so in its description; adding one means adding it here, on purpose.
 */
const BEYOND = [
  'GET /v1/messages/{id}',
  'POST /v1/programs/{id}/archive',
  'GET /metrics',
  // Chat-app template registration (issue 33 item 10): the specification only lists the approved ones.
  'POST /v1/chatapp-templates',
  'GET /v1/chatapp-templates/{id}',
  'DELETE /v1/chatapp-templates/{id}',
];

describe('contract', () => {
  it('has every operation of endpoints.tsv (method + path), and beyond them only the additions listed in BEYOND', () => {
    const have = ops.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
    const want = tsv.map(([, method, path]) => `${method} ${path}`);
    expect(want).toHaveLength(194);
    expect(have).toEqual([...want, ...BEYOND].sort());
  });

  it('gives every operation a unique operationId and the section tag of endpoints.tsv', () => {
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [section, method, path] of tsv) {
      const tags = (doc.paths[path]![method.toLowerCase()] as { tags: string[] }).tags;
      expect(tags, `${method} ${path}`).toEqual([section]);
    }
  });

  it('is OpenAPI 3.1.0, version 1.0.0, and passes every contract rule', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(checkDocument(structuredClone(doc) as never)).toEqual([]);
  });

  it('checks every example of every schema, nested ones included (the rule can fail)', () => {
    const broken = structuredClone(doc) as unknown as { components: { schemas: Record<string, { examples?: unknown[] }> } };
    broken.components.schemas.BotFlow!.examples!.push({ nodes: 'not a list', edges: [] });
    const problems = checkDocument(broken as never);
    expect(problems).toEqual([expect.stringContaining('/components/schemas/BotFlow examples[1] does not match its schema')]);
  });

  it('lists 429 (the key’s rate limit) on every authenticated operation, and the rule can fail', () => {
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    delete broken.paths['/v1/contacts']!.get!.responses['429'];
    expect(checkDocument(broken as never)).toEqual(['GET /v1/contacts (listContacts): missing 429 response']);
    expect((doc.paths['/health']!.get as { responses: Record<string, unknown> }).responses).not.toHaveProperty('429');
  });

  it('gives every list page and limit and pagination (issue 37 item 6), and the rule can fail', () => {
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, { parameters?: unknown[] }>> };
    broken.paths['/v1/webhook-endpoints']!.get!.parameters = [];
    expect(checkDocument(broken as never)).toEqual([
      'GET /v1/webhook-endpoints (listWebhookEndpoints): a list must take the query parameter page',
      'GET /v1/webhook-endpoints (listWebhookEndpoints): a list must take the query parameter limit',
    ]);
  });

  it('bounds the shared page parameter, so a huge or non-finite page is a 400, not a 500', () => {
    const page = (doc as unknown as { components: { parameters: { Page: { schema: { maximum?: number } } } } }).components.parameters.Page;
    expect(page.schema.maximum).toBe(100000);
  });

  it('refuses request inputs without an honest upper bound (the rule can fail)', () => {
    const sample = {
      openapi: '3.1.0',
      info: { title: 'sample', version: '1.0.0' },
      components: {
        schemas: {
          Name: { type: 'string', maxLength: 200 },
          Slug: { type: 'string', pattern: '^[a-z]+$' },
          Body: {
            type: 'object',
            additionalProperties: false,
            properties: {
              name: { $ref: '#/components/schemas/Name' },
              slug: { $ref: '#/components/schemas/Slug' },
              note: { type: ['string', 'null'] },
              at: { type: 'string', format: 'date-time' },
              id: { type: 'string', format: 'uuid' },
              kind: { type: 'string', enum: ['a', 'b'] },
              tags: { type: 'array', items: { type: 'string', maxLength: 10 } },
              ids: { type: 'array', maxItems: 5, items: { type: 'string', format: 'uuid' } },
              attrs: { type: 'object', additionalProperties: { type: 'string', maxLength: 10 } },
              keyed: {
                type: 'object',
                maxProperties: 5,
                propertyNames: { pattern: '^[a-z]{1,8}$' },
                additionalProperties: { type: 'integer' },
              },
              both: { allOf: [{ $ref: '#/components/schemas/Slug' }, { maxLength: 20 }] },
              either: { type: 'string', anyOf: [{ format: 'date' }, { format: 'date-time' }] },
              capped: { $ref: '#/components/schemas/Slug', maxLength: 30 },
            },
          },
        },
      },
      paths: {
        '/things/{key}': {
          parameters: [{ name: 'key', in: 'path', required: true, schema: { type: 'string' } }],
          post: {
            operationId: 'createThing',
            parameters: [
              { name: 'q', in: 'query', schema: { type: 'string', maxLength: 100 } },
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
            ],
            requestBody: {
              content: {
                'application/json': { schema: { $ref: '#/components/schemas/Body' } },
                'multipart/form-data': {
                  schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' }, label: { type: 'string' } } },
                },
              },
            },
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { type: 'object', properties: { free: { type: 'string' } } } } },
              },
            },
          },
        },
      },
    };
    const problems = checkRequestBounds(sample);
    const flagged = (fragment: string) => problems.some((p) => p.includes(fragment));
    for (const where of [
      'parameters/0/schema is a request string without maxLength', // path key
      'parameters/1/schema is a request string without maxLength', // header X-Trace
      'components/schemas/Slug is a request string without maxLength (a pattern is not a bound)',
      'Body/properties/note is a request string',
      'Body/properties/at is a request string', // date-time takes any number of fraction digits
      'Body/properties/tags is a request array without maxItems',
      'Body/properties/attrs is a request object with open keys',
      'keyed/propertyNames is a request string', // a key pattern is not a bound either
      'Body/properties/either is a request string',
      'multipart~1form-data/schema/properties/label is a request string',
    ]) {
      expect(flagged(where), `${where}\n${problems.join('\n')}`).toBe(true);
    }
    for (const fine of [
      '/name ',
      '/id ',
      '/kind ',
      '/ids ',
      'tags/items',
      'attrs/additionalProperties',
      '/both',
      '/capped',
      'properties/file',
      'get/parameters/0',
      'responses',
    ]) {
      expect(
        problems.filter((p) => p.includes(fine)),
        fine,
      ).toEqual([]);
    }
    expect(problems).toHaveLength(10);
    // Slug is reached through `slug` (unbounded) and through `both`/`capped` (bounded there): reported once.
    expect(problems.filter((p) => p.includes('components/schemas/Slug '))).toHaveLength(1);
  });

  it('declares the events we push, each signed and carrying the routing fields', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { parameters: Array<{ $ref?: string; name?: string }> } }> })
      .webhooks;
    for (const name of ['message.delivered', 'message.read', 'message.button_tapped', 'message.received', 'test'])
      expect(webhooks[name], name).toBeDefined();
    const text = JSON.stringify(doc);
    for (const header of ['webhook-signature', 'webhook-id', 'webhook-timestamp', 'X-Signature']) expect(text).toContain(header);
    expect(text).toContain('senderIdId');
    expect(text).toContain('contactPhone');
  });
});
