// Every documented operation is routed and answers something honest: a 2xx, a 4xx ErrorResponse, or
// 501 NOT_IMPLEMENTED — never an unhandled 404/405 or a 500. Responses are validated against the document
// by the test server, so a 2xx that breaks the contract fails here too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations } from '../src/contract/document.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Every operation org')).apiKey.secret;
});
afterAll(() => srv.close());

const SAMPLE_PARAMS: Record<string, string> = {
  senderName: 'acme-agent',
  variant: 'thumbnail',
};

type Schema = { examples?: unknown[]; example?: unknown; $ref?: string; enum?: unknown[] };

function resolve(doc: Record<string, any>, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) {
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((node: any, part) => node?.[part], doc) as Schema;
  }
  return s;
}

function samplePath(doc: Record<string, any>, path: string, method: string): string {
  const item = doc.paths[path];
  const params = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map((p: Schema) => resolve(doc, p) as any);
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const p = params.find((x) => x?.name === name && x.in === 'path');
    const schema = resolve(doc, p?.schema);
    if (schema?.enum?.length) return String(schema.enum[0]);
    if (schema?.examples?.length) return String(schema.examples[0]);
    return SAMPLE_PARAMS[name] ?? '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b';
  });
}

describe('every operation', () => {
  it('is routed and answers 2xx, 4xx or 501 — never 404 ROUTE_NOT_FOUND, 405 or 5xx', async () => {
    const document = srv.context.document as Record<string, any>;
    const failures: string[] = [];
    const seen = { implemented: 0, notImplemented: 0 };
    for (const op of listOperations(srv.context.document)) {
      const operation = document.paths[op.path][op.method];
      const content = operation.requestBody?.content ?? {};
      const json = content['application/json'];
      const body = json ? (json.example ?? resolve(document, json.schema)?.examples?.[0]) : undefined;
      const url = samplePath(document, op.path, op.method);
      const res = await call(srv, op.method.toUpperCase(), url, { key: op.scopes.length ? key : undefined, body });
      if (res.status === 501) seen.notImplemented++;
      else seen.implemented++;
      const routed = !(res.status === 404 && res.body?.code === 'ROUTE_NOT_FOUND') && res.status !== 405;
      const honest = res.status < 500 || res.status === 501;
      if (!routed || !honest)
        failures.push(`${op.method.toUpperCase()} ${op.path} (${op.operationId}) → ${res.status} ${res.text.slice(0, 200)}`);
      if (res.status >= 400) expect(res.body).toMatchObject({ code: expect.any(String), requestId: expect.any(String) });
    }
    expect(failures).toEqual([]);
    expect(seen.implemented + seen.notImplemented).toBe(listOperations(srv.context.document).length);
  });
});
