// Where the service leans on a library's unpublished internals, this file pins the behaviour it relies on, so an
// upgrade that changes them fails here, loudly and by name, instead of somewhere downstream:
// - pg-boss 12.35 (src/jobs/queue.ts): `pg-boss/dist/plans.js` exports `insertJobs` and `notifyChannelSql`, and a
//   statement built from `jobInsertOf`'s head and tail queues a job pg-boss itself finds, with its NOTIFY.
// - pg 8.23 (src/db/prepared.ts): a pool client's `query(text, values)` can be replaced per client, and a config
//   object with `name` makes a named prepared statement (pg_prepared_statements shows it).
// - openapi-backend 5.21.2 (src/http/openapi-backend.ts, src/http/api.ts): `quick` init loads our OpenAPI 3.1 document dereferenced; the router's
//   `getOperations()` flattens operations as api.ts reads them, and its `getOperations`/`getOperation` can be
//   replaced on the instance the validator shares; the validator reaches its validators through
//   `this.getRequestValidatorsForOperation` (so api.ts's wrapper is used by `validateRequest` too), each validator
//   coerces and fills in place the `{path, query, header, cookie, requestBody}` object api.ts builds; a second
//   `OpenAPIValidator` on the same router compiles the same validators index for index; `router.parseRequest`
//   answers what validated() hands on. (test/http-validation.test.ts compares validated() with the library's own
//   steps on 7,000+ requests; this file names the single assumptions.)
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { OpenAPIValidator, type OpenAPIBackend, type Operation } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../src/db/database.ts';
import { withPreparedStatements } from '../src/db/prepared.ts';
import { jobInsertOf } from '../src/jobs/queue.ts';
import { openApiBackendFor } from '../src/http/openapi-backend.ts';
import { listOperations, loadDocument } from '../src/contract/document.ts';

const url = inject('databaseUrl');

describe('pg-boss internals (src/jobs/queue.ts)', () => {
  let boss: PgBoss;
  let db: Db;
  const schema = `internals_${process.pid}`;
  beforeAll(async () => {
    boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
    await boss.start();
    db = createDb(url, 2).db;
  });
  afterAll(async () => {
    await boss.stop({ graceful: false });
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
    await db.destroy();
  });

  it('dist/plans.js still exports the two builders the queue imports', async () => {
    const plans = (await import('pg-boss/dist/plans.js')) as Record<string, unknown>;
    expect(typeof plans.insertJobs).toBe('function');
    expect(typeof plans.notifyChannelSql).toBe('function');
  });

  it('a statement made of the captured head and tail queues a job pg-boss fetches, and notifies its listeners', async () => {
    const queue = `probe-${randomUUID().slice(0, 8)}`;
    await boss.createQueue(queue, { notify: true } as never);
    const insert = await jobInsertOf(boss, queue);
    expect(insert).not.toBeNull();
    expect(insert!.notify).toContain('pg_notify(');
    const payload = JSON.stringify([{ data: { probe: 1 } }]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      const channel = (await client.query(`select ${insert!.notify!.replace(/^pg_notify\((.*), '[^']*'\)$/, '$1')} as c`)).rows[0]
        .c as string;
      await listener.query(`listen "${channel}"`);
      await client.query(`${insert!.head}$1${insert!.tail}`, [payload]);
      await client.query(`select ${insert!.notify}`);
      const [job] = await boss.fetch(queue);
      expect(job?.data).toEqual({ probe: 1 });
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toContain(queue);
    } finally {
      await client.end();
      await listener.end();
    }
  });
});

describe('pg internals (src/db/prepared.ts)', () => {
  it('a marked statement is prepared under its name on the client that runs it, once per connection', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const wrapped = withPreparedStatements(pool);
    try {
      const client = await wrapped.connect();
      try {
        const text = `/* prepared:internals-probe */ select $1::int + 1 as n`;
        expect((await client.query(text, [41])).rows).toEqual([{ n: 42 }]);
        expect((await client.query(text, [1])).rows).toEqual([{ n: 2 }]);
        const prepared = (await client.query(`select name, statement from pg_prepared_statements`)).rows as Array<{
          name: string;
          statement: string;
        }>;
        expect(prepared.filter((p) => p.statement === text)).toEqual([
          { name: expect.stringMatching(/^internals-probe-[0-9a-f]{16}$/), statement: text },
        ]);
        // An unmarked statement stays unnamed.
        await client.query('select 1 as one', []);
        expect(
          (await client.query(`select count(*)::int as n from pg_prepared_statements where statement = 'select 1 as one'`)).rows[0].n,
        ).toBe(0);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });
});

describe('openapi-backend internals (src/http/openapi-backend.ts)', () => {
  type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
  const document = loadDocument();
  /** openapi-backend exactly as createApi configures it (openApiBackendFor), initialised. */
  const backendOf = async (): Promise<OpenAPIBackend> => {
    const backend = openApiBackendFor(document);
    await backend.init();
    return backend;
  };
  const validatorsOf = (backend: OpenAPIBackend, id: string) =>
    (backend.validator.getRequestValidatorsForOperation(id) ?? []) as unknown as Validate[];
  let backend: OpenAPIBackend;
  beforeAll(async () => {
    backend = await backendOf();
  });

  it('quick init loads the OpenAPI 3.1 document, dereferenced (no $ref left in operations)', () => {
    const operations = backend.router.getOperations();
    expect(operations).toHaveLength(listOperations(document).length);
    // api.ts reads request bodies' schemas inline (the oneOf narrower) and treats a `$ref` parameter as a reason
    // to take the library's slow path: both assume the dereferenced form.
    expect(JSON.stringify(operations)).not.toContain('"$ref"');
  });

  it('router.getOperations() flattens each operation: path, lower-case method, path-item parameters appended, own security', () => {
    const byId = new Map(backend.router.getOperations().map((op) => [op.operationId!, op]));
    for (const info of listOperations(document)) {
      const op = byId.get(info.operationId)!;
      expect(op, info.operationId).toMatchObject({ path: info.path, method: info.method });
      const item = document.paths[info.path] as { parameters?: unknown[] };
      const own = (document.paths[info.path]![info.method] as { parameters?: unknown[]; security?: unknown[] }) ?? {};
      expect(op.parameters ?? [], info.operationId).toHaveLength((own.parameters ?? []).length + (item.parameters ?? []).length);
      expect(op.security, info.operationId).toEqual(own.security ?? []);
    }
    const revoke = byId.get('revokeMessage')!; // its `id` is declared on the path item
    expect(revoke.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path' })]);
  });

  it('router.getOperation(s) are replaceable on the instance, and the validator looks operations up through the same router', async () => {
    const fresh = await backendOf();
    expect((fresh.validator as unknown as { router: unknown }).router).toBe(fresh.router);
    const operations = fresh.router.getOperations();
    const asked: string[] = [];
    fresh.router.getOperations = () => operations;
    fresh.router.getOperation = (id: string) => {
      asked.push(id);
      return operations.find((op) => op.operationId === id);
    };
    expect(validatorsOf(fresh, 'createContact').length).toBeGreaterThan(0);
    expect(asked).toEqual(['createContact']);
  });

  it('validateRequest takes its validators from this.getRequestValidatorsForOperation, so a wrapper set on the instance decides', async () => {
    const fresh = await backendOf();
    const validator = fresh.validator as unknown as { getRequestValidatorsForOperation: (id: string) => Validate[] | undefined };
    const refuse: Validate = () => {
      refuse.errors = [{ keyword: 'probe', instancePath: '/requestBody', schemaPath: '#', params: {}, message: 'wrapped' }];
      return false;
    };
    validator.getRequestValidatorsForOperation = () => [refuse];
    const op = fresh.router.getOperation('createContact')!;
    const result = fresh.validator.validateRequest(
      { method: 'post', path: '/v1/contacts', headers: { 'content-type': 'application/json' }, query: {}, body: { phone: '+14155550101' } },
      op,
    );
    expect(result.errors).toEqual([expect.objectContaining({ keyword: 'probe', message: 'wrapped' })]);
  });

  it('a request validator coerces query values and fills defaults in place on {path, query, header, cookie, requestBody}, and stops at the first error', () => {
    const [validate] = validatorsOf(backend, 'listContacts');
    const parameters = { path: {}, query: { limit: '5' } as Record<string, unknown>, header: {}, cookie: {} };
    expect(validate!(parameters)).toBe(true);
    expect(parameters.query).toEqual({ limit: 5, page: 1, sortBy: 'createdAt', sortOrder: 'desc' });
    // Two wrong values, one error: api.ts decides validity with first-error validators (src/http/bounded-validation.ts).
    const wrong = { path: {}, query: { limit: 'x', page: 'y' }, header: {}, cookie: {} };
    expect(validate!(wrong)).toBe(false);
    expect(validate!.errors).toHaveLength(1);
  });

  it('an OpenAPIValidator on the same router compiles lazily the same validators, index for index, with all errors', () => {
    const detailed = new OpenAPIValidator({
      definition: backend.definition,
      ajvOpts: { strict: false, useDefaults: true, allErrors: true },
      router: backend.router,
      lazyCompileValidators: true,
      coerceTypes: true,
    });
    for (const op of backend.router.getOperations() as Operation[]) {
      const id = op.operationId!;
      expect(((detailed.getRequestValidatorsForOperation(id) ?? []) as unknown[]).length, id).toBe(validatorsOf(backend, id).length);
    }
    const [all] = (detailed.getRequestValidatorsForOperation('listContacts') ?? []) as unknown as Validate[];
    expect(all!({ path: {}, query: { limit: 'x', page: 'y' }, header: {}, cookie: {} })).toBe(false);
    expect(all!.errors!.length).toBeGreaterThan(1);
  });

  it('router.parseRequest: path parameters from the template, a copy of the query, lower-cased headers, cookies, a JSON body from text', () => {
    const op = backend.router.getOperation('revokeMessage')!;
    const query = { note: 'x' };
    const parsed = backend.router.parseRequest(
      {
        method: 'POST',
        path: '/v1/messages/3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b/revoke',
        query,
        headers: { 'Content-Type': 'application/json', Cookie: 'c=1' },
        body: '{"reason":"test"}',
      },
      op,
    );
    expect(parsed.params).toEqual({ id: '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b' });
    expect(parsed.query).toEqual(query);
    expect(parsed.query).not.toBe(query); // validated() coerces it in place: the caller's object must stay as sent
    expect(parsed.headers).toEqual({ 'content-type': 'application/json', cookie: 'c=1' });
    expect({ ...parsed.cookies }).toEqual({ c: '1' });
    expect(parsed.requestBody).toEqual({ reason: 'test' });
  });

  it('validateResponse(body, operationId, status) checks a body against that status’s schema', () => {
    const good = {
      status: 'ok',
      version: '1.0.0',
      uptimeSeconds: 1,
      database: { status: 'up', latencyMs: 1 },
      providers: [],
      time: '2026-11-21T09:30:00Z',
    };
    expect(backend.validateResponse(good, 'getHealth', 200).errors).toBeFalsy();
    expect(backend.validateResponse({ status: 'fine' }, 'getHealth', 200).errors?.length).toBeGreaterThan(0);
  });
});
