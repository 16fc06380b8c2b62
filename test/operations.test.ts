// The operations the API routes and validates (src/http/operations.ts) are openapi-backend's own: what its quick init
// and router.getOperations() make of the document, field for field, dereferenced the same way; only the request
// bodies, responses and descriptions are dereferenced on their first read instead of at start, and the rest comes
// from generated/operations.json (issue 38, bench part a). test/http-validation.test.ts then runs every operation's
// requests through createApi against the library's steps.
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { documentPath, loadDocument } from '../src/contract/document.ts';
import { openApiBackendFor } from '../src/http/openapi-backend.ts';
import { operationHeadsFile, operationHeadsPath, operationsFrom, startupOperationHeads } from '../src/http/operations.ts';

const document = loadDocument();
/** What createApi serves: the heads start-up reads, the large fields from the document. */
const served = () => operationsFrom(startupOperationHeads().operations, () => document);

describe('operations (src/http/operations.ts)', () => {
  it("equal openapi-backend's operations, field for field, in the library's order", async () => {
    const library = openApiBackendFor(document);
    await library.init();
    const theirs = library.router.getOperations();
    const ours = served();
    expect(ours.map((op) => `${op.method} ${op.path}`)).toEqual(theirs.map((op) => `${op.method} ${op.path}`));
    for (const [i, op] of ours.entries()) expect(op, op.operationId).toEqual(theirs[i]);
    expect(JSON.stringify(ours.map((op) => [op.parameters, op.requestBody]))).not.toContain('"$ref"');
  });

  it('start-up reads generated/operations.json, made from generated/openapi.json as it is', () => {
    const file = JSON.parse(readFileSync(operationHeadsPath, 'utf8')) as unknown;
    expect(file).toEqual(operationHeadsFile(document, statSync(documentPath).size));
    expect(startupOperationHeads()).toEqual(file);
  });

  it('dereferences request bodies and responses on their first read, one copy per target, leaving the document as it was', () => {
    const before = JSON.stringify(document);
    const byId = new Map(served().map((op) => [op.operationId!, op]));
    const create = byId.get('createContact')!;
    expect(Object.getOwnPropertyDescriptor(create, 'requestBody')?.get).toBeTypeOf('function');
    expect(Object.getOwnPropertyDescriptor(create, 'responses')?.get).toBeTypeOf('function');
    const body = create.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    expect(Object.keys(body.content['application/json']!.schema.properties)).toContain('phone');
    expect(Object.getOwnPropertyDescriptor(create, 'requestBody')).toMatchObject({ value: body, writable: true, enumerable: true });
    expect(Object.getOwnPropertyDescriptor(create, 'responses')?.get).toBeTypeOf('function'); // read separately
    // Every reference to one component is the same object, as in the library's dereferenced document.
    const list = byId.get('listContacts')!;
    expect((create.responses as Record<string, unknown>)['401']).toBe((list.responses as Record<string, unknown>)['401']);
    expect(JSON.stringify(document)).toBe(before);
  });

  it('refuses to read a large field from a document the heads were not made from', () => {
    const heads = startupOperationHeads().operations;
    const other = { ...document, paths: { ...document.paths, '/v1/contacts': { post: { operationId: 'somethingElse' } } } };
    const create = operationsFrom(heads, () => other).find((op) => op.operationId === 'createContact')!;
    expect(() => create.requestBody).toThrow(/createContact: the operation heads do not match the document; run `npm run generate`/);
  });
});
