// Request validation costs time linear in the request (src/http/bounded-validation.ts), over HTTP and through /mcp,
// and a refused body is still described field by field. Issue 31: 20,000 empty carousel cards (60 KB) held the
// event loop 7.7 s, 100,000 (300 KB) for minutes, every tenant and /health waiting; a createBlast with 10,000
// contact ids spent 1.6 s comparing them pairwise for `uniqueItems`. The caps below are generous (a shared machine):
// they prove "bounded", the figures are in `npm run bench -- --only h`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, startTestServer, type CallResult, type TestServer } from './support/server.ts';

const CAP_MS = 1_000;

let srv: TestServer;
let key: string;
let senderId: string;

beforeAll(async () => {
  srv = await startTestServer();
  const org = await srv.newOrg('Validation cost');
  key = org.apiKey.secret;
  senderId = org.senderId;
  // Validators are compiled on an operation's first request (and the detailed ones on its first refusal): once
  // here, so the caps below measure validation, not compilation.
  for (const path of ['/v1/blasts', '/v1/segments/preview'])
    expect((await call(srv, 'POST', path, { key, body: { name: 5 } })).status).toBe(400);
});
afterAll(() => srv.close());

const uuid = (i: number) => `3f2b8c1e-6d4a-4f7e-9b1a-${String(i).padStart(12, '0')}`;
const cards = (n: number) => ({ type: 'carousel', cards: Array.from({ length: n }, () => ({})) });
const fields = (res: CallResult) => (res.body.details as Array<{ field: string; code: string }>).map((d) => `${d.field}:${d.code}`);

/** `work` while /health is polled beside it: how long the work took and the slowest /health answer meanwhile. */
async function besideHealth<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; slowestHealth: number; polls: number }> {
  const t0 = performance.now();
  let done = false;
  const pending = work().finally(() => (done = true));
  const health: number[] = [];
  while (!done) {
    const h0 = performance.now();
    const res = await fetch(`${srv.baseUrl}/health`);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    health.push(performance.now() - h0);
  }
  const result = await pending;
  return { result, ms: performance.now() - t0, slowestHealth: Math.max(0, ...health), polls: health.length };
}

describe('validation time is bounded by the size of the request', () => {
  for (const n of [20_000, 100_000]) {
    it(`refuses ${n.toLocaleString('en-US')} empty carousel cards in milliseconds while /health answers`, async () => {
      const {
        result: res,
        ms,
        slowestHealth,
      } = await besideHealth(() =>
        call(srv, 'POST', '/v1/blasts', { key, body: { name: 'Huge', senderId, contactIds: [uuid(1)], contentJson: cards(n) } }),
      );
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details).toContainEqual({
        field: 'body.contentJson.cards',
        message: 'must NOT have more than 10 items',
        code: 'maxItems',
      });
      expect(res.body.details.length).toBeLessThanOrEqual(20);
      expect(ms).toBeLessThan(CAP_MS);
      expect(slowestHealth).toBeLessThan(CAP_MS);
    });
  }

  it('refuses 100,000 empty carousel cards given to the createBlast tool over /mcp the same way', async () => {
    const client = new Client({ name: 'validation-cost.test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${srv.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    );
    try {
      const tool = () =>
        client.callTool({
          name: 'createBlast',
          arguments: { body: { name: 'Huge', senderId, contactIds: [uuid(1)], contentJson: cards(100_000) } },
        }) as Promise<CallToolResult>;
      const { result, ms, slowestHealth } = await besideHealth(tool);
      expect(result.isError).toBe(true);
      const first = result.content[0];
      const error = JSON.parse(first?.type === 'text' ? first.text : '{}');
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details).toContainEqual({
        field: 'body.contentJson.cards',
        message: 'must NOT have more than 10 items',
        code: 'maxItems',
      });
      expect(ms).toBeLessThan(CAP_MS);
      expect(slowestHealth).toBeLessThan(CAP_MS);
    } finally {
      await client.close();
    }
  });

  it('finds a duplicate among 10,000 contact ids without comparing every pair', async () => {
    // Ajv compared pairs from the end: a duplicate at the start was found last, after 50 million comparisons.
    const contactIds = Array.from({ length: 10_000 }, (_, i) => uuid(i === 1 ? 0 : i));
    const {
      result: res,
      ms,
      slowestHealth,
    } = await besideHealth(() =>
      call(srv, 'POST', '/v1/blasts', { key, body: { name: 'Dup', senderId, contactIds, contentJson: { type: 'text', text: 'hi' } } }),
    );
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'body.contactIds', message: 'must NOT have duplicate items (items ## 0 and 1 are identical)', code: 'uniqueItems' },
    ]);
    expect(ms).toBeLessThan(CAP_MS / 2);
    expect(slowestHealth).toBeLessThan(CAP_MS / 2);
  });
});

describe('a body of far more objects and keys than any valid request is refused before it is parsed', () => {
  // 5 MB of `{}` where 50 tag ids are allowed: 1.7 million objects, which JSON.parse took 0.3–1.2 s to build
  // (5 s with other test files running), every tenant's requests and /health waiting (src/http/json-node-bound.ts).
  // 400,000 keys in one object took it 0.3–0.6 s.
  const emptyObjects = (n: number) => `[${'{},'.repeat(n - 1)}{}]`;
  const untag = (text: string) =>
    fetch(`${srv.baseUrl}/v1/contacts/bulk/tag`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: text,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { code: string; details: unknown[] } }));
  const refusal = {
    field: 'body',
    message: 'holds more than 200,000 objects and arrays',
    code: 'maxNodes',
  };

  it('answers 400 naming the body, without parsing it: a text that is not even JSON gets the same answer', async () => {
    const items = emptyObjects(1_700_000);
    const whole = await untag(`{"tagIds":${items},"contactIds":["${uuid(1)}"]}`);
    expect(whole.status).toBe(400);
    expect(whole.body.code).toBe('VALIDATION_ERROR');
    expect(whole.body.details).toEqual([refusal]);
    // cut short: JSON.parse would refuse it as `parse`; the count refuses it first
    const cut = await untag(`{"tagIds":${items.slice(0, -1)}`);
    expect(cut.status).toBe(400);
    expect(cut.body.details).toEqual([refusal]);
  });

  it('counts keys as it counts objects: 400,000 unknown fields are refused the same way', async () => {
    const keys = Array.from({ length: 400_000 }, (_, i) => `"k${i}":0`).join(',');
    const res = await untag(`{${keys},"tagIds":["${uuid(2)}"],"contactIds":["${uuid(1)}"]}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ ...refusal, message: 'holds more than 200,000 keys' }]);
  });

  it('parses a body within the bound as usual: its mistakes are named field by field', async () => {
    // 150,000 objects where 50 tag ids are allowed: under 200,000, so parsed and validated, the items named
    const res = await untag(`{"tagIds":${emptyObjects(150_000)},"contactIds":["${uuid(1)}"]}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ field: 'body.tagIds.0', message: 'must be string', code: 'type' });
    // braces and colons inside strings are text, not nodes: 450,000 of them in one field is a plain (too long) string
    const text = await untag(`{"tagIds":["${'{[:'.repeat(150_000)}"],"contactIds":["${uuid(1)}"]}`);
    expect(text.status).toBe(400);
    expect(text.body.details).not.toContainEqual(expect.objectContaining({ code: 'maxNodes' }));
  });
});

describe('a big refused body is still described field by field', () => {
  it('names an array over its maxItems and a mistake elsewhere in the same body', async () => {
    const contactIds = Array.from({ length: 20_000 }, (_, i) => uuid(i));
    const res = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 5, senderId, contactIds, contentJson: { type: 'text', text: 'hi' } },
    });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(expect.arrayContaining(['body.name:type', 'body.contactIds:maxItems']));
    expect(res.body.details).toContainEqual({ field: 'body.contactIds', message: 'must NOT have more than 10000 items', code: 'maxItems' });
  });

  it('names a bad item far beyond the items described in detail', async () => {
    const contactIds = Array.from({ length: 5_000 }, (_, i) => (i === 4_000 ? 'not-a-uuid' : uuid(i)));
    const res = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Far', senderId, contactIds, contentJson: { type: 'text', text: 'hi' } },
    });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['body.contactIds.4000:format']);
  });

  it('reports the mistakes of a long array up to its 25th item, and none that the body does not have', async () => {
    // 30 cards where 10 are allowed, every other one with a bad title: maxItems, then each bad title among the first 25
    const body = {
      name: 'Many',
      senderId,
      contactIds: [uuid(1)],
      contentJson: { type: 'carousel', cards: Array.from({ length: 30 }, (_, i) => (i % 2 ? { title: 'ok' } : { title: 5 })) },
    };
    const res = await call(srv, 'POST', '/v1/blasts', { key, body });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([
      'body.contentJson.cards:maxItems',
      ...Array.from({ length: 13 }, (_, i) => `body.contentJson.cards.${2 * i}.title:type`),
    ]);
  });

  it('describes a oneOf mistake by the branch its type names, the size of a cut array included', async () => {
    // The condition's tagIds are cut in the detailed copy: their maxItems is read from the schema, and kept when the
    // oneOf is narrowed to the `tags` branch.
    const tagIds = Array.from({ length: 60 }, (_, i) => uuid(i));
    const res = await call(srv, 'POST', '/v1/segments/preview', {
      key,
      body: { conditions: [{ type: 'tags', op: 'any', tagIds, extra: true }] },
    });
    expect(res.status).toBe(400);
    expect(fields(res).sort()).toEqual(['body.conditions.0.extra:additionalProperties', 'body.conditions.0.tagIds:maxItems']);
  });

  it('does not report a required field that the detailed copy cut away', async () => {
    // 120 unknown fields before `phone`: the copy keeps 100 fields, so it lacks `phone`; the request does not.
    const body: Record<string, unknown> = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`u${i}`, i]));
    body.phone = '+14155550199';
    const res = await call(srv, 'POST', '/v1/contacts', { key, body });
    expect(res.status).toBe(400);
    expect(fields(res)).not.toContain('body.phone:required');
    expect(fields(res)).toContain('body.u0:additionalProperties');
  });
});
