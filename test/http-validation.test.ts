// The router validates a request and builds its handler's input from one parse of the request (src/http/api.ts,
// validated()). openapi-backend's own steps parse it three times: validateRequest, then the handler's request parsed
// again from the coerced values. Both must hand a handler the same input, and refuse the same requests: this runs
// every operation of the document through the router with handlers that record their input, and compares each
// input with what openapi-backend's own steps produce for the same request.
import { parse as parseQuery } from 'node:querystring';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import fc from 'fast-check';
import pino from 'pino';
import { createApi, type Api } from '../src/http/api.ts';
import { openApiBackendFor } from '../src/http/openapi-backend.ts';
import { loadAllHandlers } from '../src/handlers/index.ts';
import { notImplementedOperations } from '../src/handlers/not-implemented.ts';
import { definePublicHandlers, isPublicHandler, type HandlerMap } from '../src/http/handler-types.ts';
import { ApiError } from '../src/domain/errors.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { describeOperations, type OpInfo } from './support/fuzz/requests.ts';
import { paramText, validish, type Doc } from './support/fuzz/schema.ts';

const handlers = await loadAllHandlers();

let srv: TestServer;
let api: Api;
let reference: OpenAPIBackend;
let organizationId: string;
let seen: unknown;

beforeAll(async () => {
  srv = await startTestServer();
  organizationId = (await srv.newOrg('Validation org')).organizationId;
  // Every implemented operation answers 200 with an empty body and records what it was given.
  const recording: Record<string, unknown> = {};
  for (const [operationId, real] of Object.entries(handlers)) {
    const record = async (input: unknown) => {
      seen = input;
      return { status: 200, body: {} };
    };
    recording[operationId] = isPublicHandler(real) ? Object.values(definePublicHandlers({ [operationId]: record } as never))[0] : record;
  }
  // Responses are not checked here: the recording handlers answer an empty body.
  api = await createApi(
    { ...srv.context, config: { ...srv.context.config, validateResponses: false } },
    recording as HandlerMap,
    notImplementedOperations,
  );
  // openapi-backend configured as createApi configures it, but collecting every error as the library does by
  // default: the API's first-error validators (src/http/bounded-validation.ts) must refuse the same requests and
  // coerce and fill in the same values.
  reference = openApiBackendFor(srv.context.document, { allErrors: true });
  await reference.init();
});
afterAll(() => srv.close());

let keys = 0;

type Sample = { path: string; query: string; headers: Record<string, string>; body: unknown };

/** Requests for one operation: valid-ish values for its parameters and body (the fuzz test's generators), a fixed seed. */
function samples(op: OpInfo): Sample[] {
  const doc = srv.context.document as unknown as Doc;
  const optional = (params: OpInfo['query']) =>
    fc.tuple(
      ...params.map((p) => fc.option(paramText(doc, p.schema), { freq: 3 }).map((v) => (v === null ? undefined : ([p.name, v] as const)))),
    );
  const arb = fc.record({
    path: fc.tuple(...op.pathParams.map((p) => paramText(doc, p.schema))),
    query: optional(op.query),
    headers: optional(op.headers),
    body: op.json ? fc.option(validish(doc, op.json), { freq: 8 }) : fc.constant(undefined),
    contentType: fc.constantFrom('application/json', 'Application/JSON; charset=utf-8', undefined),
  });
  const sampled = fc.sample(arb, { numRuns: 40, seed: 13 }).map((r) => {
    let i = 0;
    const headers: Record<string, string> = {};
    for (const h of r.headers) if (h) headers[h[0]] = h[1];
    if (r.contentType) headers['content-type'] = r.contentType;
    return {
      path: op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.path[i++]!)),
      query: r.query.flatMap((q) => (q ? [`${encodeURIComponent(q[0])}=${encodeURIComponent(q[1])}`] : [])).join('&'),
      headers,
      body: r.body === null ? undefined : r.body,
    };
  });
  // Bodies not parsed yet (a string) take openapi-backend's own steps: they must agree as well.
  const strings = op.json ? ['{"name":"x"}', 'not json'].map((body) => ({ ...sampled[0]!, body })) : [];
  return [...sampled, ...strings];
}

/** openapi-backend's own steps: validateRequest, then parseRequest of the coerced request (what a handler got). */
function expected(req: Record<string, unknown>, op: Operation): { refused: boolean; input?: unknown } {
  const validation = reference.validator.validateRequest(req as never, op.operationId!);
  if (validation.errors) return { refused: true };
  const parsed = reference.router.parseRequest(validation.coerced as never, reference.router.getOperation(op.operationId!));
  return {
    refused: false,
    input: { path: parsed.params ?? {}, query: parsed.query ?? {}, headers: parsed.headers ?? {}, body: parsed.requestBody, files: [] },
  };
}

describe('request validation and handler input', () => {
  it('equal openapi-backend’s own steps for every operation', async () => {
    const log = pino({ level: 'silent' });
    const principal = { organizationId, apiKeyId: 'test', scopes: new Set<string>() };
    let compared = 0;
    let accepted = 0;
    const infos = new Map(describeOperations(srv.context.document as unknown as Doc).map((info) => [info.operationId, info]));
    for (const op of api.operations) {
      if (!(op.operationId! in handlers) || infos.get(op.operationId!)!.multipart) continue;
      for (const sample of samples(infos.get(op.operationId!)!)) {
        const key = `validation-${keys++}`; // a new key each time: no request replays another
        const request = () => ({
          method: op.method.toUpperCase(),
          path: sample.path,
          query: parseQuery(sample.query) as Record<string, string | string[]>,
          headers: {
            ...sample.headers,
            ...(Object.keys(sample.headers).some((h) => h.toLowerCase() === 'idempotency-key') ? { 'idempotency-key': key } : {}),
          },
          body: structuredClone(sample.body),
          files: [],
          requestId: 'req_test',
          log,
        });
        const want = expected(request(), op);
        seen = undefined;
        let refused = false;
        try {
          await api.handle({ ...request(), operation: op, principal });
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          refused = true;
        }
        const label = `${op.operationId} ${sample.path}?${sample.query} ${JSON.stringify(sample.headers)} ${JSON.stringify(sample.body)}`;
        expect(refused, label).toBe(want.refused);
        if (!refused) expect(seen, label).toStrictEqual(want.input);
        compared++;
        if (!refused) accepted++;
      }
    }
    expect(compared).toBeGreaterThan(5000);
    expect(accepted).toBeGreaterThan(compared / 2); // most samples are valid, so most comparisons are of handler inputs
  }, 120_000);
});
