// The handler manifest (src/handlers/index.ts) against the section modules and the document: start-up routes each
// operation to its section from the manifest alone and imports the module on the operation's first request
// (src/http/api.ts), so a manifest that drifted from a module would only show at that request. Here every section
// is loaded and held to its entry, as the first request would, and to the document's security.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocument } from '../src/contract/document.ts';
import { handlerSections } from '../src/handlers/index.ts';
import { notImplementedOperations } from '../src/handlers/not-implemented.ts';
import {
  assertEveryOperationAccounted,
  assertHandlersMatchSecurity,
  assertSectionMatchesManifest,
  createApi,
  type ApiRequest,
} from '../src/http/api.ts';
import { openApiBackendFor } from '../src/http/openapi-backend.ts';
import type { HandlerMap } from '../src/http/handler-types.ts';
import { healthHandlers } from '../src/handlers/health.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import type { HandlerSection } from '../src/handlers/index.ts';

const backend = openApiBackendFor(loadDocument());
await backend.init();
const operations = backend.router.getOperations();

describe('handler manifest', () => {
  it('lists every operation of the document once, with the operations listed as not implemented', () => {
    expect(() =>
      assertEveryOperationAccounted(
        operations,
        handlerSections.flatMap((s) => s.operations),
        notImplementedOperations,
      ),
    ).not.toThrow();
  });

  it.each(handlerSections.map((s) => [s.module, s] as const))(
    'section %s has exactly the operations listed for it',
    async (_name, section) => {
      const map = await section.load();
      expect(() => assertSectionMatchesManifest(section, map)).not.toThrow();
      expect(() => assertHandlersMatchSecurity(operations, map)).not.toThrow();
    },
  );

  it('refuses a section whose module and manifest entry differ, naming the operation', async () => {
    const contacts = handlerSections.find((s) => s.module === 'contacts')!;
    const map = await contacts.load();
    const short: HandlerSection = { ...contacts, operations: contacts.operations.filter((id) => id !== 'getContact') };
    expect(() => assertSectionMatchesManifest(short, map)).toThrow(/getContact: handled by the module, not listed/);
    const long: HandlerSection = { ...contacts, operations: [...contacts.operations, 'getBlast'] };
    expect(() => assertSectionMatchesManifest(long, map)).toThrow(/getBlast: listed in the manifest, no handler/);
  });

  it('refuses an operation listed in two sections', () => {
    const ids = handlerSections.flatMap((s) => s.operations);
    expect(() => assertEveryOperationAccounted(operations, [...ids, 'getContact'], notImplementedOperations)).toThrow(
      /getContact: handled twice/,
    );
  });
});

describe('a section imported on first use', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  /** An API whose health section is `load` (every other operation listed as not implemented), and a /health request. */
  async function apiWith(load: () => Promise<HandlerMap>) {
    const rest = operations.map((o) => o.operationId!).filter((id) => id !== 'getHealth' && id !== 'getMetrics');
    const api = await createApi(srv.context, [{ module: 'health', operations: ['getHealth', 'getMetrics'], load }], rest);
    const match = api.match('get', '/health');
    if (match.kind !== 'found') throw new Error('no /health');
    const request = (): ApiRequest => ({
      method: 'GET',
      path: '/health',
      query: {},
      headers: {},
      body: undefined,
      files: [],
      requestId: 'r-lazy',
      log: pino({ level: 'silent' }),
      operation: match.operation,
    });
    return { api, request };
  }
  const health = healthHandlers as HandlerMap;

  it('imports the module once for concurrent first requests', async () => {
    let loads = 0;
    const { api, request } = await apiWith(async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return health;
    });
    expect(loads).toBe(0);
    const answers = await Promise.all([api.handle(request()), api.handle(request()), api.handle(request())]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(loads).toBe(1);
    await api.handle(request());
    expect(loads).toBe(1);
  });

  it('fails the requests waiting for a failed import, and imports again on the next one', async () => {
    let loads = 0;
    const { api, request } = await apiWith(async () => {
      if (++loads === 1) throw new Error('disk gone');
      return health;
    });
    const failed = await Promise.allSettled([api.handle(request()), api.handle(request())]);
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected']);
    expect(String((failed[0] as PromiseRejectedResult).reason)).toMatch(/handler section health failed to load/);
    expect((await api.handle(request())).status).toBe(200);
    expect(loads).toBe(2);
  });

  it('refuses a loaded module that is out of step with its manifest entry', async () => {
    const { api, request } = await apiWith(async () => ({ ...health, getContact: health.getHealth }) as HandlerMap);
    await expect(api.handle(request())).rejects.toSatisfy((e: unknown) =>
      /getContact: handled by the module, not listed in the manifest/.test(String((e as Error).cause)),
    );
  });
});
