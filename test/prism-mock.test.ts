// `npm run mock` (Prism) answers every operation with believable data: each of the documented operations,
// called once with its request example, answers 2xx, and the answer validates against the documented schema.
// Error states too: `Prefer: code=<status>` answers the shared error response's generic example, and
// `Prefer: code=<status>, example=<CODE>` the example of that error code (openapi/common.yaml `examples`).
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join, dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { documentPath, listOperations, loadDocument } from '../src/contract/document.ts';

type Json = Record<string, any>;
const doc = loadDocument() as Json;
const require = createRequire(import.meta.url);
const prismBin = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');

let prism: ChildProcess;
let base: string;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prism = spawn(process.execPath, [prismBin, 'mock', '-h', '127.0.0.1', '-p', String(port), documentPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    prism.stdout!.on('data', onData);
    prism.stderr!.on('data', onData);
    prism.on('exit', (code) => reject(new Error(`prism exited with ${code}:\n${output}`)));
  });
}, 120_000);

afterAll(() => {
  prism?.kill('SIGTERM');
});

const deref = (node: Json | undefined): Json | undefined => {
  let n = node;
  for (let i = 0; n?.$ref && i < 20; i++)
    n = String(n.$ref)
      .slice(2)
      .split('/')
      .reduce((a: Json, p) => a?.[p], doc);
  return n;
};

function sampleValue(schema: Json | undefined, name: string): string {
  const s = deref(schema);
  if (s?.examples?.length) return String(s.examples[0]);
  if (s?.example !== undefined) return String(s.example);
  if (s?.enum?.length) return String(s.enum[0]);
  if (s?.default !== undefined) return String(s.default);
  if (s?.anyOf || s?.oneOf) return sampleValue((s.anyOf ?? s.oneOf)[0], name);
  if (s?.format === 'uuid') return '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b';
  if (s?.format === 'date') return '2026-11-01';
  if (s?.format === 'date-time') return '2026-11-01T00:00:00Z';
  if (s?.type === 'integer' || s?.type === 'number') return String(s.minimum ?? 1);
  if (s?.type === 'boolean') return 'true';
  return name === 'variant' ? 'thumbnail' : 'sample';
}

function buildRequest(path: string, method: string): { url: string; init: RequestInit } {
  const item = doc.paths[path];
  const op = item[method];
  const params: Json[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => deref(p)!);
  const url = path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    encodeURIComponent(sampleValue(params.find((p) => p.name === name && p.in === 'path')?.schema, name)),
  );
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const p of params) {
    if (!p.required) continue;
    if (p.in === 'query') query.set(p.name, sampleValue(p.schema, p.name));
    if (p.in === 'header') headers[p.name] = sampleValue(p.schema, p.name);
  }
  if (op.security?.length !== 0) headers.authorization = 'Bearer msk_example0_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
  let body: RequestInit['body'] | undefined;
  const content = deref(op.requestBody)?.content ?? {};
  if (content['application/json']) {
    const media = content['application/json'];
    const example = media.example ?? deref(media.schema)?.examples?.[0];
    headers['content-type'] = 'application/json';
    body = JSON.stringify(example);
  } else if (content['multipart/form-data']) {
    const media = content['multipart/form-data'];
    const schema = deref(media.schema)!;
    const example = media.example ?? schema.examples?.[0] ?? {};
    const form = new FormData();
    for (const [name, prop0] of Object.entries((schema.properties ?? {}) as Json)) {
      const prop = deref(prop0 as Json)!;
      const binary = prop.format === 'binary' || deref(prop.items)?.format === 'binary';
      if (binary) {
        const file = new Blob(['phone,name\n+14155550123,Ada\n'], { type: 'text/csv' });
        form.append(name, file, 'sample.csv');
        if (prop.type === 'array') form.append(name, file, 'sample2.csv');
      } else if (example[name] !== undefined) {
        form.append(name, typeof example[name] === 'string' ? example[name] : JSON.stringify(example[name]));
      }
    }
    body = form;
  }
  const qs = query.toString();
  return { url: `${base}${url}${qs ? `?${qs}` : ''}`, init: { method: method.toUpperCase(), headers, body } };
}

describe('Prism mock', () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc, 'doc');

  it('answers every operation with a 2xx that matches the document', async () => {
    const failures: string[] = [];
    const operations = listOperations(doc as never);
    for (const { path, method, operationId } of operations) {
      const { url, init } = buildRequest(path, method);
      const res = await fetch(url, init);
      const text = await res.text();
      const where = `${method.toUpperCase()} ${path} (${operationId})`;
      if (res.status < 200 || res.status > 299) {
        failures.push(`${where}: ${res.status} ${text.slice(0, 300)}`);
        continue;
      }
      const response = deref(doc.paths[path][method].responses[String(res.status)]);
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const media = response?.content?.[type];
      if (response?.content && !media) {
        failures.push(`${where}: answered ${type}, not a documented media type`);
        continue;
      }
      if (media && type.includes('json')) {
        const schemaRef = media.schema?.$ref ? { $ref: `doc${media.schema.$ref}` } : media.schema;
        const validate = ajv.compile(schemaRef);
        if (!validate(JSON.parse(text))) failures.push(`${where}: body does not match: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(operations.length).toBeGreaterThan(0);
  }, 180_000);

  it('has a named example of every error code in the shared error responses (no Prism needed)', () => {
    const named = new Map<string, string>(); // example name → the code its value carries
    for (const response of Object.values(doc.components.responses as Json))
      for (const [name, example] of Object.entries((response.content?.['application/json']?.examples ?? {}) as Json))
        named.set(name, deref(example as Json)!.value.code);
    // ROUTE_NOT_FOUND is the answer of no operation: a path the document does not have.
    const codes = (deref(doc.components.schemas.ErrorCode)!.enum as string[]).filter((c) => c !== 'ROUTE_NOT_FOUND');
    expect(codes.filter((code) => named.get(code) !== code)).toEqual([]);
    expect([...named.keys()].filter((name) => !codes.includes(name))).toEqual([]);
  });

  it('answers each shared error response’s examples by name (Prefer: code=…, example=<CODE>), the generic one first', async () => {
    // The status each example of the default response (`Error`) stands for: the one its code is answered with.
    const defaultStatus: Record<string, number> = {
      INTERNAL_ERROR: 500,
      EXPORT_FAILED: 500,
      NOT_IMPLEMENTED: 501,
      UPSTREAM_ERROR: 502,
      SERVICE_UNAVAILABLE: 503,
      METHOD_NOT_ALLOWED: 405,
      NOT_ACCEPTABLE: 406,
      REQUEST_TIMEOUT: 408,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      EXPECTATION_FAILED: 417,
      HEADERS_TOO_LARGE: 431,
    };
    const failures: string[] = [];
    let checked = 0;
    for (const [name, response] of Object.entries(doc.components.responses as Json)) {
      const examples = Object.keys(response.content?.['application/json']?.examples ?? {});
      if (examples.length === 0) continue;
      // The first operation answering this shared response, and the status it answers it under.
      const ref = `#/components/responses/${name}`;
      const use = listOperations(doc as never)
        .flatMap(({ path, method }) =>
          Object.entries(doc.paths[path][method].responses as Json)
            .filter(([, r]) => (r as Json).$ref === ref)
            .map(([status]) => ({ path, method, status })),
        )
        .find((u) => u.status !== 'default' || name === 'Error');
      if (!use) continue; // a shared response no operation uses
      for (const [i, example] of [undefined, ...examples].entries()) {
        const expected = example ?? examples[0]!;
        const status = use.status === 'default' ? (defaultStatus[expected] ?? 500) : Number(use.status);
        const prefer = example ? `code=${status}, example=${example}` : `code=${status}`;
        const { url, init } = buildRequest(use.path, use.method);
        const res = await fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), Prefer: prefer } });
        const body = (await res.json()) as { code?: string };
        const where = `${name} via ${use.method.toUpperCase()} ${use.path}, Prefer: ${prefer}${i === 0 ? ' (no example named)' : ''}`;
        if (res.status !== status || body.code !== expected) failures.push(`${where}: ${res.status} ${body.code}`);
        checked++;
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  }, 120_000);

  it('answers error states with their own examples (Prefer: code=…)', async () => {
    const cases: Array<[string, string, number, string]> = [
      ['get', '/v1/contacts/{id}', 404, 'NOT_FOUND'],
      ['post', '/v1/contacts', 400, 'VALIDATION_ERROR'],
      ['post', '/v1/contacts', 401, 'UNAUTHENTICATED'],
      ['post', '/v1/contacts/import', 413, 'PAYLOAD_TOO_LARGE'],
      ['delete', '/v1/tags/{id}', 409, 'CONFLICT'],
    ];
    for (const [method, path, status, code] of cases) {
      if (!doc.paths[path]?.[method]?.responses?.[String(status)]) continue; // only documented statuses
      const { url, init } = buildRequest(path, method);
      const res = await fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), Prefer: `code=${status}` } });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(((await res.json()) as { code: string }).code, `${method} ${path}`).toBe(code);
    }
  }, 60_000);
});
