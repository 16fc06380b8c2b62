// The request path every operation shares: routing, body handling, errors, request ids, health, docs,
// response validation and the handler registry.
import { definePublicHandlers } from '../src/http/handler-types.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, assertEveryOperationAccounted, type ApiRequest } from '../src/http/api.ts';
import { CompiledRouter } from '../src/http/router.ts';
import { ApiError } from '../src/domain/errors.ts';
import { listOperations } from '../src/contract/document.ts';
import { loadAllHandlers } from '../src/handlers/index.ts';
import { notImplementedOperations } from '../src/handlers/not-implemented.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import pino from 'pino';

const handlers = await loadAllHandlers();

let srv: TestServer;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Spine org')).apiKey.secret;
});
afterAll(() => srv.close());

const ops = () => listOperations(srv.context.document);
const opId = (method: string, path: string) => ops().find((o) => o.method === method && o.path === path)?.operationId;

describe('routing', () => {
  // Static segments must win over templates that could also match them.
  const staticCases: Array<[string, string, string]> = [
    ['get', '/v1/sender-ids/numbers', '/v1/sender-ids/numbers'],
    ['get', '/v1/contacts/attribute-keys', '/v1/contacts/attribute-keys'],
    ['post', '/v1/contacts/bulk/tag', '/v1/contacts/bulk/tag'],
    ['delete', '/v1/contacts/bulk/tag', '/v1/contacts/bulk/tag'],
    ['get', '/v1/contacts/import/3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b', '/v1/contacts/import/{jobId}'],
    ['post', '/v1/assets/upload', '/v1/assets/upload'],
    ['post', '/v1/dictionary-categories/reorder', '/v1/dictionary-categories/reorder'],
  ];
  for (const [method, url, template] of staticCases) {
    it(`${method.toUpperCase()} ${url} reaches ${template}`, () => {
      const router = new CompiledRouter(ops() as never);
      const match = router.match(method, url);
      expect(match.kind).toBe('found');
      const expected = opId(method, template);
      expect(expected).toBeTruthy();
      expect(match.kind === 'found' && match.operation.operationId).toBe(expected);
    });
  }

  it('still reaches a template when a static sibling dead-ends', () => {
    const router = new CompiledRouter(ops() as never);
    const match = router.match('get', '/v1/sender-ids/numbers-x');
    expect(match.kind === 'found' && match.operation.operationId).toBe(opId('get', '/v1/sender-ids/{id}'));
  });

  it('answers 404 ROUTE_NOT_FOUND for an unknown path', async () => {
    const res = await call(srv, 'GET', '/v1/no-such-thing', { key });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('ROUTE_NOT_FOUND');
  });

  it('answers 405 with Allow for a known path with another method', async () => {
    const res = await call(srv, 'PUT', '/v1/api-keys', { key });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST');
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('request bodies', () => {
  it('answers 413 for a body over the limit', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key, body: { name: 'x'.repeat(2 * 1024 * 1024), scopes: ['api-keys:read'] } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it("sizes the JSON limit by the operation's x-max-request-bytes", async () => {
    // POST /v1/contacts/bulk/tag documents 5 MB; ~2 MB of ids must reach validation, not a 413.
    const contactIds = Array.from({ length: 50_000 }, () => crypto.randomUUID());
    const res = await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [crypto.randomUUID()], contactIds } });
    expect(res.status).not.toBe(413);
    const huge = Array.from({ length: 150_000 }, () => crypto.randomUUID());
    expect(
      (await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [crypto.randomUUID()], contactIds: huge } })).status,
    ).toBe(413);
  });

  it('answers 415 for a media type the operation does not take', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 naming the body for malformed JSON', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key, rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.details[0].field).toBe('body');
  });

  it('answers 400 when a required body is missing', async () => {
    const res = await call(srv, 'POST', '/v1/api-keys', { key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('coerces and validates query parameters', async () => {
    expect((await call(srv, 'GET', '/v1/api-keys?limit=abc', { key })).status).toBe(400);
    const ok = await call(srv, 'GET', '/v1/api-keys?limit=5', { key });
    expect(ok.body.pagination.limit).toBe(5);
  });

  it('answers 400 for a path id that is not a UUID', async () => {
    const res = await call(srv, 'DELETE', '/v1/api-keys/not-a-uuid', { key });
    expect(res.status).toBe(400);
    expect(res.body.details[0].field).toBe('path.id');
  });
});

describe('request ids', () => {
  it('echoes X-Request-Id into the header and the error body', async () => {
    const res = await call(srv, 'GET', '/v1/api-keys', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
    expect(res.body.requestId).toBe('trace-abc.123');
  });

  it('generates one when none (or an unsafe one) is given', async () => {
    const res = await call(srv, 'GET', '/v1/api-keys', { headers: { 'x-request-id': 'has spaces <and> "quotes"' } });
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe('health and docs', () => {
  it('GET /health needs no key and reports the database', async () => {
    const res = await call(srv, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', database: { status: 'up', latencyMs: expect.any(Number) } });
  });

  it('serves the document and a reference page without a CDN', async () => {
    const doc = await call(srv, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const page = await call(srv, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/docs/redoc.standalone.js');
    expect(page.text).not.toMatch(/https?:\/\//);
    const script = await fetch(`${srv.baseUrl}/docs/redoc.standalone.js`);
    expect(script.status).toBe(200);
  });
});

describe('handler registry', () => {
  it('accounts for every operation exactly once', () => {
    const operations = ops().map((o) => ({ operationId: o.operationId }) as never);
    expect(() => assertEveryOperationAccounted(operations, Object.keys(handlers), notImplementedOperations)).not.toThrow();
  });

  it('refuses a handler for an operation the document lacks, and an operation with no handler', () => {
    const operations = ops().map((o) => ({ operationId: o.operationId }) as never);
    const extra = { ...handlers, noSuchOperation: async () => ({ status: 200, body: {} }) };
    expect(() => assertEveryOperationAccounted(operations, Object.keys(extra), notImplementedOperations)).toThrow(/noSuchOperation/);
    // Every operation is built now: take one handler away.
    const { getAnalyticsBotFunnel: _dropped, ...missingOne } = handlers;
    expect(() => assertEveryOperationAccounted(operations, Object.keys(missingOne), notImplementedOperations)).toThrow(
      /getAnalyticsBotFunnel/,
    );
  });

  it('answers 501 NOT_IMPLEMENTED naming the operation for one not built yet', async () => {
    // Whether or not any operation is still unbuilt, build an API in which one is listed as not implemented.
    const op = ops().find((o) => o.method === 'get' && !o.path.includes('{') && o.operationId !== 'getHealth')!;
    const { [op.operationId as keyof typeof handlers]: _built, ...others } = handlers;
    const api = await createApi(srv.context, others as never, [...notImplementedOperations, op.operationId!]);
    const match = api.match('get', op.path);
    if (match.kind !== 'found') throw new Error(`no ${op.path}`);
    const principal = await api.authorize(match.operation, {
      method: 'GET',
      path: '/',
      query: {},
      headers: { authorization: `Bearer ${key}` },
    });
    const req: ApiRequest = {
      method: 'GET',
      path: op.path,
      query: {},
      headers: {},
      body: undefined,
      files: [],
      requestId: 'r501',
      log: pino({ level: 'silent' }),
      operation: match.operation,
      principal,
    };
    await expect(api.handle(req)).rejects.toSatisfy(
      (e: unknown) => e instanceof ApiError && e.status === 501 && e.code === 'NOT_IMPLEMENTED' && e.message.includes(op.operationId!),
    );
  });
});

describe('response validation', () => {
  it('turns a response that breaks the document into a 500', async () => {
    const bad = definePublicHandlers({ getHealth: async () => ({ status: 200, body: { status: 'fine' } }) } as never);
    const rest = ops()
      .map((o) => o.operationId)
      .filter((o) => o !== 'getHealth');
    const api = await createApi(srv.context, bad, rest);
    const req: ApiRequest = {
      method: 'GET',
      path: '/health',
      query: {},
      headers: {},
      body: undefined,
      files: [],
      requestId: 'r1',
      log: pino({ level: 'silent' }),
    };
    const match = api.match('get', '/health');
    if (match.kind !== 'found') throw new Error('no /health');
    req.operation = match.operation;
    await expect(api.handle(req)).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ApiError &&
        e.status === 500 &&
        e.code === 'INTERNAL_ERROR' &&
        e.message === 'Internal server error.' &&
        !/schema|#\//.test(e.message),
    );
  });
});
