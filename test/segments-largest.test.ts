// The largest segment the document allows (20 conditions of 50 tag ids each, SegmentQueryRequest) is answered in
// bounded time, while /health keeps answering. `tags all` was a join of one link per tag: PostgreSQL's planner
// searched its join orders, and such a preview held a database backend for minutes (issue 31, item 8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
let tags: string[];
/** Per contact, the indexes of the tags it carries. */
const carried: number[][] = [];

const CONTACTS = 200;
const TAGS = 50;

beforeAll(async () => {
  srv = await startTestServer();
  const org = await srv.newOrg('Largest segment org');
  key = org.apiKey.secret;
  const orgId = org.organizationId;
  const db = srv.context.db;
  tags = (
    await db
      .insertInto('tags')
      .values(Array.from({ length: TAGS }, (_, i) => ({ organization_id: orgId, name: `t${i}` })))
      .returning('id')
      .execute()
  ).map((r) => r.id);
  const contacts = await db
    .insertInto('contacts')
    .values(
      Array.from({ length: CONTACTS }, (_, i) => ({
        organization_id: orgId,
        phone: `+1415555${String(i).padStart(4, '0')}`,
        phone_country: 'US',
        attributes: '{}',
      })),
    )
    .returning('id')
    .execute();
  // Contact i carries tags 0..(i % 51) - 1: four contacts carry all 50, the others fewer.
  const links = contacts.flatMap((c, i) => {
    carried[i] = Array.from({ length: i % (TAGS + 1) }, (_, t) => t);
    return carried[i]!.map((t) => ({ organization_id: orgId, contact_id: c.id, tag_id: tags[t]! }));
  });
  await db.insertInto('contact_tags').values(links).execute();
});
afterAll(() => srv.close());

/** 20 conditions, each naming all 50 tags (in another order, so no two are the same text). */
const largest = (op: 'all' | 'any' | 'none', match: 'all' | 'any') => ({
  match,
  conditions: Array.from({ length: 20 }, (_, i) => ({ type: 'tags', op, tagIds: [...tags.slice(i), ...tags.slice(0, i)] })),
});

/** POST /v1/segments/preview, cut off after 10 s (the old planner took minutes), with the time it took. */
async function preview(body: unknown): Promise<{ status: number; count: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${srv.baseUrl}/v1/segments/preview`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const json = (await res.json()) as { data: { count: number } };
  return { status: res.status, count: json.data?.count, ms: performance.now() - t0 };
}

describe('the largest segment the document allows', () => {
  it('20 conditions × 50 tag ids (tags all, match all) answers within a second, and /health answers meanwhile', async () => {
    const pending = preview(largest('all', 'all'));
    const health = await call(srv, 'GET', '/health');
    expect(health.status).toBe(200);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.count).toBe(carried.filter((t) => t.length === TAGS).length);
    expect(answer.ms).toBeLessThan(1000);
  });

  it.each([
    ['all', 'any', (t: number[]) => t.length === TAGS],
    ['any', 'all', (t: number[]) => t.length > 0],
    ['any', 'any', (t: number[]) => t.length > 0],
    ['none', 'all', (t: number[]) => t.length === 0],
    ['none', 'any', (t: number[]) => t.length === 0],
  ] as const)('tags %s under match %s answers within a second, with the right count', async (op, match, expected) => {
    const answer = await preview(largest(op, match));
    expect(answer.status).toBe(200);
    expect(answer.count).toBe(carried.filter(expected).length);
    expect(answer.ms).toBeLessThan(1000);
  });

  it('resolves the largest segment within a second too (the same predicate as blast audiences)', async () => {
    const t0 = performance.now();
    const res = await call(srv, 'POST', '/v1/segments/resolve', { key, body: largest('all', 'all') });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(carried.filter((t) => t.length === TAGS).length);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
