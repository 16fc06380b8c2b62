// Segments through HTTP: every condition type (tags any/all/none, type-aware attribute comparisons, rcsCap,
// createdAt, optedOut), all/any combination, preview count + sample, resolve pagination, tenant walls; saved
// segments (resolve answers a segmentId per query and organization) and their scheduled purge.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_WINDOW } from '../src/db/queries/contacts/segments.ts';
import { SEGMENT_TTL_DAYS, useSavedSegment } from '../src/domain/contacts/segments.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { QUEUES } from '../src/jobs/queue-names.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
const tag: Record<string, string> = {};
const id: Record<string, string> = {};

// name → [phone, tags, attributes, rcsCapable, createdAt, optedOut]
const PEOPLE: Record<string, [string, string[], Record<string, unknown>, boolean | null, string, boolean]> = {
  ann: [
    '+14155551001',
    ['a', 'b'],
    { ltv: 1500, tier: 'gold', since: '2024-03-01', vip: true, note: null },
    true,
    '2026-01-05T00:00:00Z',
    false,
  ],
  ben: ['+14155551002', ['a'], { ltv: 999.5, tier: 'Silver', since: '2025-11-20', code: '1500' }, false, '2026-02-10T00:00:00Z', false],
  cat: ['+14155551003', ['b'], { ltv: '2000', tier: 'bronze', vip: false }, null, '2026-03-15T00:00:00Z', true],
  dan: ['+14155551004', [], { tier: 'gold' }, true, '2026-04-20T00:00:00Z', false],
  eve: ['+14155551005', ['c'], {}, null, '2026-05-25T00:00:00Z', true],
};

beforeAll(async () => {
  srv = await startTestServer({ workers: true }); // workers: the saved-segment purge runs through the queue
  org = await srv.newOrg('Segments org');
  key = org.apiKey.secret;
  for (const t of ['a', 'b', 'c']) tag[t] = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `seg-${t}` } })).body.data.id;
  for (const [name, [phone, tags, attributes, rcs, createdAt, optedOut]] of Object.entries(PEOPLE)) {
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone, name, tags: tags.map((t) => tag[t]), attributes } });
    expect(res.status, res.text).toBe(201);
    id[name] = res.body.id;
    await srv.context.db
      .updateTable('contacts')
      .set({ rcs_capable: rcs, rcs_checked_at: rcs === null ? null : new Date(), created_at: new Date(createdAt) as never })
      .where('id', '=', res.body.id)
      .execute();
    if (optedOut)
      await srv.context.db
        .insertInto('opt_outs')
        .values({ organization_id: org.organizationId, phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
        .execute();
  }
});
afterAll(() => srv.close());

type Condition = Record<string, unknown>;

/** Names of the matching contacts, newest first (from the preview sample), after checking the count. */
async function matching(conditions: Condition[], match: 'all' | 'any' = 'all', k = key): Promise<string[]> {
  const res = await call(srv, 'POST', '/v1/segments/preview', { key: k, body: { match, conditions } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.count).toBe(res.body.data.sample.length);
  return res.body.data.sample.map((c: { name: string }) => c.name);
}

describe('segment conditions', () => {
  it('tags: any, all, none', async () => {
    expect(await matching([{ type: 'tags', op: 'any', tagIds: [tag.a, tag.c] }])).toEqual(['eve', 'ben', 'ann']);
    expect(await matching([{ type: 'tags', op: 'all', tagIds: [tag.a, tag.b, tag.a] }])).toEqual(['ann']);
    expect(await matching([{ type: 'tags', op: 'none', tagIds: [tag.a, tag.b] }])).toEqual(['eve', 'dan']);
    expect(await matching([{ type: 'tags', op: 'any', tagIds: ['00000000-0000-4000-8000-000000000009'] }])).toEqual([]);
  });

  it('attribute eq / neq compare JSON type and value', async () => {
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'eq', value: 'gold' }])).toEqual(['dan', 'ann']);
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'eq', value: 'silver' }])).toEqual([]); // case-sensitive
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'eq', value: 1500 }])).toEqual(['ann']);
    expect(await matching([{ type: 'attribute', attribute: 'code', op: 'eq', value: 1500 }])).toEqual([]); // "1500" is a string
    expect(await matching([{ type: 'attribute', attribute: 'vip', op: 'eq', value: false }])).toEqual(['cat']);
    expect(await matching([{ type: 'attribute', attribute: 'note', op: 'eq', value: null }])).toEqual(['ann']);
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'neq', value: 'gold' }])).toEqual(['eve', 'cat', 'ben']);
  });

  it('attribute ranges: numbers with numbers, strings with strings in code-point order, other types never', async () => {
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'gte', value: 1000 }])).toEqual(['ann']); // cat's "2000" is a string
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'lt', value: 1000 }])).toEqual(['ben']);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'gt', value: 999.5 }])).toEqual(['ann']);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'lte', value: 999.5 }])).toEqual(['ben']);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'gt', value: '1' }])).toEqual(['cat']);
    expect(await matching([{ type: 'attribute', attribute: 'since', op: 'gte', value: '2025-01-01' }])).toEqual(['ben']);
    // Code-point order: "Silver" < "bronze" < "gold".
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'lt', value: 'bronze' }])).toEqual(['ben']);
  });

  it('attribute contains (case-insensitive, strings only), in, exists, notExists', async () => {
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'contains', value: 'OL' }])).toEqual(['dan', 'ann']);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'contains', value: '15' }])).toEqual([]);
    expect(await matching([{ type: 'attribute', attribute: 'tier', op: 'contains', value: '%' }])).toEqual([]);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'in', value: [1500, '2000', true] }])).toEqual(['cat', 'ann']);
    expect(await matching([{ type: 'attribute', attribute: 'note', op: 'exists' }])).toEqual(['ann']);
    expect(await matching([{ type: 'attribute', attribute: 'ltv', op: 'notExists' }])).toEqual(['eve', 'dan']);
  });

  it('rcsCap true, false, unknown', async () => {
    expect(await matching([{ type: 'rcsCap', value: true }])).toEqual(['dan', 'ann']);
    expect(await matching([{ type: 'rcsCap', value: false }])).toEqual(['ben']);
    expect(await matching([{ type: 'rcsCap', value: null }])).toEqual(['eve', 'cat']);
  });

  it('createdAt: after inclusive, before exclusive', async () => {
    expect(await matching([{ type: 'createdAt', after: '2026-02-10T00:00:00Z', before: '2026-04-20T00:00:00Z' }])).toEqual(['cat', 'ben']);
    expect(await matching([{ type: 'createdAt', before: '2026-02-10T00:00:00Z' }])).toEqual(['ann']);
  });

  it('optedOut', async () => {
    expect(await matching([{ type: 'optedOut', value: true }])).toEqual(['eve', 'cat']);
    expect(await matching([{ type: 'optedOut', value: false }])).toEqual(['dan', 'ben', 'ann']);
  });

  it('combines with all (default) and any; an empty list matches everyone', async () => {
    const conditions = [
      { type: 'tags', op: 'any', tagIds: [tag.a] },
      { type: 'rcsCap', value: true },
    ];
    expect(await matching(conditions)).toEqual(['ann']);
    expect(await matching(conditions, 'any')).toEqual(['dan', 'ben', 'ann']);
    expect(await matching([])).toEqual(['eve', 'dan', 'cat', 'ben', 'ann']);
    expect(await matching([], 'any')).toEqual(['eve', 'dan', 'cat', 'ben', 'ann']);
    const res = await call(srv, 'POST', '/v1/segments/preview', {
      key,
      body: {
        conditions: [
          { type: 'optedOut', value: false },
          { type: 'attribute', attribute: 'ltv', op: 'exists' },
        ],
      },
    });
    expect(res.body.data.sample.map((c: { name: string }) => c.name)).toEqual(['ben', 'ann']);
  });

  it('tags all (three tags), none and contains combined under all and under any', async () => {
    const all3 = { type: 'tags', op: 'all', tagIds: [tag.a, tag.b, tag.c] };
    const allAB = { type: 'tags', op: 'all', tagIds: [tag.b, tag.a] };
    const noneAB = { type: 'tags', op: 'none', tagIds: [tag.a, tag.b] };
    const containsOl = { type: 'attribute', attribute: 'tier', op: 'contains', value: 'oL' };
    expect(await matching([all3])).toEqual([]);
    expect(await matching([allAB, { type: 'rcsCap', value: true }])).toEqual(['ann']);
    expect(await matching([allAB, { type: 'rcsCap', value: false }], 'any')).toEqual(['ben', 'ann']);
    expect(await matching([noneAB, { type: 'rcsCap', value: true }])).toEqual(['dan']);
    expect(await matching([noneAB, { type: 'rcsCap', value: false }], 'any')).toEqual(['eve', 'dan', 'ben']);
    expect(await matching([noneAB, { type: 'tags', op: 'none', tagIds: [tag.c] }])).toEqual(['dan']);
    // Contacts without the key (eve) or with a non-string value never match, also under any with a negation.
    expect(await matching([containsOl, { type: 'optedOut', value: true }], 'any')).toEqual(['eve', 'dan', 'cat', 'ann']);
    expect(await matching([containsOl, noneAB])).toEqual(['dan']);
    expect(await matching([{ type: 'attribute', attribute: 'since', op: 'contains', value: '-0' }])).toEqual(['ann']);
  });

  it('contains folds case beyond ASCII, as ILIKE does', async () => {
    const o = await srv.newOrg('Segments unicode org');
    for (const [phone, city] of [
      ['+14155552001', 'ÉCOLE Straße'],
      ['+14155552002', 'école'],
      ['+14155552003', 'Ecole'],
    ]) {
      const res = await call(srv, 'POST', '/v1/contacts', { key: o.apiKey.secret, body: { phone, name: city, attributes: { city } } });
      expect(res.status, res.text).toBe(201);
    }
    const names = (await matching([{ type: 'attribute', attribute: 'city', op: 'contains', value: 'éCo' }], 'all', o.apiKey.secret)).sort();
    expect(names).toEqual(['ÉCOLE Straße', 'école']);
    expect(await matching([{ type: 'attribute', attribute: 'city', op: 'contains', value: 'STRASSE' }], 'all', o.apiKey.secret)).toEqual(
      [],
    );
    expect(await matching([{ type: 'attribute', attribute: 'city', op: 'contains', value: 'straße' }], 'all', o.apiKey.secret)).toEqual([
      'ÉCOLE Straße',
    ]);
  });

  it('answers 400 when a value does not fit its operator', async () => {
    const bad = [
      { type: 'attribute', attribute: 'ltv', op: 'gt', value: true },
      { type: 'attribute', attribute: 'ltv', op: 'in', value: 3 },
      { type: 'attribute', attribute: 'ltv', op: 'exists', value: 1 },
      { type: 'createdAt' },
      { type: 'tags', op: 'some', tagIds: [tag.a] },
    ];
    for (const condition of bad) {
      const res = await call(srv, 'POST', '/v1/segments/preview', { key, body: { conditions: [condition] } });
      expect(res.status, JSON.stringify(condition)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('previewSegment', () => {
  it('returns the count and at most 10 full contacts, newest first', async () => {
    const o = await srv.newOrg('Preview org');
    for (let i = 0; i < 12; i++) {
      await call(srv, 'POST', '/v1/contacts', {
        key: o.apiKey.secret,
        body: { phone: `+141555520${String(i).padStart(2, '0')}`, attributes: { n: i } },
      });
    }
    const res = await call(srv, 'POST', '/v1/segments/preview', {
      key: o.apiKey.secret,
      body: { conditions: [{ type: 'attribute', attribute: 'n', op: 'gte', value: 1 }] },
    });
    expect(res.body.data.count).toBe(11);
    expect(res.body.data.sample).toHaveLength(10);
    expect(res.body.data.sample[0]).toMatchObject({ phone: '+14155552011', attributes: { n: 11 }, optedOut: false, tags: [] });
    expect(res.body.data.sample.at(-1).attributes.n).toBe(2);
  });

  it('finds the newest matches when they are older than the SAMPLE_WINDOW newest contacts (the sample sorts the matching set then)', async () => {
    const o = await srv.newOrg('Sparse preview org');
    // 12 old contacts with `old: n`, then SAMPLE_WINDOW + 10 newer ones without it.
    await sql`
      insert into contacts (organization_id, phone, attributes, created_at)
      select ${o.organizationId}, '+141555' || lpad(g::text, 5, '0'),
             case when g <= 12 then jsonb_build_object('old', g) else '{}'::jsonb end,
             timestamptz '2026-01-01' + g * interval '1 minute'
      from generate_series(1, ${SAMPLE_WINDOW + 22}::int) g`.execute(srv.context.db);
    const res = await call(srv, 'POST', '/v1/segments/preview', {
      key: o.apiKey.secret,
      body: { conditions: [{ type: 'attribute', attribute: 'old', op: 'exists' }] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.count).toBe(12);
    expect(res.body.data.sample.map((c: { attributes: { old: number } }) => c.attributes.old)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
  });

  it("never counts another organization's contacts", async () => {
    const o = await srv.newOrg('Empty segments org');
    const res = await call(srv, 'POST', '/v1/segments/preview', { key: o.apiKey.secret, body: { conditions: [] } });
    expect(res.body.data).toEqual({ count: 0, sample: [] });
    const ids = await call(srv, 'POST', '/v1/segments/resolve', {
      key: o.apiKey.secret,
      body: { conditions: [{ type: 'tags', op: 'any', tagIds: [tag.a] }] },
    });
    expect(ids.body).toEqual({
      data: { segmentId: expect.any(String), segmentExpiresAt: expect.any(String), contactIds: [] },
      pagination: { page: 1, limit: 1000, total: 0, hasMore: false },
    });
  });
});

describe('resolveSegment', () => {
  it('pages through the matching ids in creation order', async () => {
    const body = {
      match: 'any',
      conditions: [
        { type: 'optedOut', value: false },
        { type: 'tags', op: 'any', tagIds: [tag.c] },
      ],
    };
    const page1 = await call(srv, 'POST', '/v1/segments/resolve?limit=2', { key, body });
    expect(page1.status, page1.text).toBe(200);
    const segment = { segmentId: page1.body.data.segmentId, segmentExpiresAt: expect.any(String) };
    expect(page1.body).toEqual({
      data: { ...segment, contactIds: [id.ann, id.ben] },
      pagination: { page: 1, limit: 2, total: 4, hasMore: true },
    });
    const page2 = await call(srv, 'POST', '/v1/segments/resolve?limit=2&page=2', { key, body });
    expect(page2.body).toEqual({
      data: { ...segment, contactIds: [id.dan, id.eve] },
      pagination: { page: 2, limit: 2, total: 4, hasMore: false },
    });
    const all = await call(srv, 'POST', '/v1/segments/resolve', { key, body });
    expect(all.body.data.contactIds).toEqual([id.ann, id.ben, id.dan, id.eve]);
    expect(all.body.pagination.limit).toBe(1000);
    expect((await call(srv, 'POST', '/v1/segments/resolve?limit=1001', { key, body })).status).toBe(400);
  });

  it('keeps the total right past the last page', async () => {
    const body = { conditions: [{ type: 'optedOut', value: false }] };
    const past = await call(srv, 'POST', '/v1/segments/resolve?limit=2&page=5', { key, body });
    expect(past.status, past.text).toBe(200);
    expect(past.body).toMatchObject({ data: { contactIds: [] }, pagination: { page: 5, limit: 2, total: 3, hasMore: false } });
  });
});

describe('saved segments', () => {
  const DAY_MS = 24 * 60 * 60 * 1000;
  const resolve = async (body: unknown, k = key) => {
    const res = await call(srv, 'POST', '/v1/segments/resolve', { key: k, body });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { segmentId: string; segmentExpiresAt: string; contactIds: string[] };
  };
  const stored = (segmentId: string) =>
    srv.context.db.selectFrom('saved_segments').selectAll().where('id', '=', segmentId).executeTakeFirst();

  it('resolve saves the query and answers its segmentId, kept 90 days after this use', async () => {
    const before = Date.now();
    const query = { match: 'all', conditions: [{ type: 'tags', op: 'any', tagIds: [tag.a] }] };
    const data = await resolve(query);
    expect(data.segmentId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(data.contactIds).toEqual([id.ann, id.ben]);
    const expires = Date.parse(data.segmentExpiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + SEGMENT_TTL_DAYS * DAY_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + SEGMENT_TTL_DAYS * DAY_MS + 1000);
    // The query is what is saved (not the ids): a blast evaluates it again when sending starts.
    const row = await stored(data.segmentId);
    expect(row).toMatchObject({ organization_id: org.organizationId, query });
  });

  it('the same query, keys in another order and match defaulted, gives the same id; another query another id', async () => {
    const a = await resolve({
      match: 'all',
      conditions: [
        { type: 'attribute', attribute: 'tier', op: 'eq', value: 'gold' },
        { type: 'rcsCap', value: true },
      ],
    });
    const b = await resolve({
      conditions: [
        { value: 'gold', op: 'eq', attribute: 'tier', type: 'attribute' },
        { value: true, type: 'rcsCap' },
      ],
    });
    expect(b.segmentId).toBe(a.segmentId);
    expect(Date.parse(b.segmentExpiresAt)).toBeGreaterThanOrEqual(Date.parse(a.segmentExpiresAt)); // the resolve touched it
    const anotherPage = {
      conditions: [
        { type: 'attribute', attribute: 'tier', op: 'eq', value: 'gold' },
        { type: 'rcsCap', value: true },
      ],
    };
    const paged = await call(srv, 'POST', '/v1/segments/resolve?limit=1&page=2', { key, body: anotherPage });
    expect(paged.body.data.segmentId).toBe(a.segmentId); // any page: the id names the query, not the page
    const other = await resolve({
      match: 'any',
      conditions: [
        { type: 'attribute', attribute: 'tier', op: 'eq', value: 'gold' },
        { type: 'rcsCap', value: true },
      ],
    });
    expect(other.segmentId).not.toBe(a.segmentId);
    const count = await srv.context.db
      .selectFrom('saved_segments')
      .select(sql<string>`count(*)`.as('n'))
      .where('id', 'in', [a.segmentId, other.segmentId])
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(2);
  });

  it("another organization's identical query gets another id, and cannot use this one", async () => {
    const query = { conditions: [{ type: 'optedOut', value: false }] };
    const mine = await resolve(query);
    const o = await srv.newOrg('Segments tenancy org');
    const theirs = await resolve(query, o.apiKey.secret);
    expect(theirs.segmentId).not.toBe(mine.segmentId);
    expect(theirs.contactIds).toEqual([]);
    // What a blast does with a segmentId (useSavedSegment): only the owning organization finds it.
    expect(await useSavedSegment(await tenantFor(srv.context, o.organizationId), mine.segmentId)).toBeUndefined();
    const used = await useSavedSegment(await tenantFor(srv.context, org.organizationId), mine.segmentId);
    expect(used).toMatchObject({ segmentId: mine.segmentId, query: { match: 'all', conditions: query.conditions } });
  });

  it('the scheduled purge removes segments unused for 90 days and keeps the others; a blast use keeps one alive', async () => {
    const expired = await resolve({ conditions: [{ type: 'createdAt', before: '2026-02-01T00:00:00Z' }] });
    const fresh = await resolve({ conditions: [{ type: 'createdAt', before: '2026-03-01T00:00:00Z' }] });
    const revived = await resolve({ conditions: [{ type: 'createdAt', before: '2026-04-01T00:00:00Z' }] });
    const age = (segmentId: string, days: number) =>
      srv.context.db
        .updateTable('saved_segments')
        .set({ last_used_at: sql<Date>`now() - make_interval(days => ${days})` })
        .where('id', '=', segmentId)
        .execute();
    await age(expired.segmentId, SEGMENT_TTL_DAYS + 1);
    await age(fresh.segmentId, SEGMENT_TTL_DAYS - 1);
    await age(revived.segmentId, SEGMENT_TTL_DAYS + 1);
    // A blast referencing a segment marks it used (useSavedSegment), so the purge keeps it.
    const used = await useSavedSegment(await tenantFor(srv.context, org.organizationId), revived.segmentId);
    expect(used!.expiresAt.getTime()).toBeGreaterThan(Date.now() + (SEGMENT_TTL_DAYS - 1) * DAY_MS);

    await srv.context.queue!.send(QUEUES.segmentPurge, {});
    const deadline = Date.now() + 15_000;
    while ((await stored(expired.segmentId)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await stored(expired.segmentId)).toBeUndefined();
    expect(await stored(fresh.segmentId)).toBeDefined();
    expect(await stored(revived.segmentId)).toBeDefined();

    // Resolving a purged query again saves it anew, under a new id; a kept one keeps its id.
    const again = await resolve({ conditions: [{ type: 'createdAt', before: '2026-02-01T00:00:00Z' }] });
    expect(again.segmentId).not.toBe(expired.segmentId);
    expect(again.contactIds).toEqual([id.ann]);
    expect((await resolve({ conditions: [{ type: 'createdAt', before: '2026-03-01T00:00:00Z' }] })).segmentId).toBe(fresh.segmentId);
  });
});
