// The operations the API routes and validates (src/http/operations.ts) are openapi-backend's own: what its quick init
// and router.getOperations() make of the document, field for field, dereferenced the same way; only the request
// bodies and responses are dereferenced on their first read instead of at start (issue 38, bench part a).
// test/http-validation.test.ts then runs every operation's requests through createApi against the library's steps.
import { describe, expect, it } from 'vitest';
import { loadDocument } from '../src/contract/document.ts';
import { openApiBackendFor } from '../src/http/api.ts';
import { operationsOf } from '../src/http/operations.ts';

const document = loadDocument();

describe('operationsOf (src/http/operations.ts)', () => {
  it("equals openapi-backend's operations, field for field, in the library's order", async () => {
    const library = openApiBackendFor(document);
    await library.init();
    const theirs = library.router.getOperations();
    const ours = operationsOf(document);
    expect(ours.map((op) => `${op.method} ${op.path}`)).toEqual(theirs.map((op) => `${op.method} ${op.path}`));
    for (const [i, op] of ours.entries()) expect(op, op.operationId).toEqual(theirs[i]);
    expect(JSON.stringify(ours.map((op) => [op.parameters, op.requestBody]))).not.toContain('"$ref"');
  });

  it('dereferences request bodies and responses on their first read, one copy per target, leaving the document as it was', () => {
    const before = JSON.stringify(document);
    const ours = operationsOf(document);
    const byId = new Map(ours.map((op) => [op.operationId!, op]));
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
});
