// Contacts through HTTP: CRUD, the list (filters, sorts, pagination), attribute keys, consent history, RCS
// checks (cache, billing, failures) and tenant walls.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Contacts org');
  other = await srv.newOrg('Other org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

let seq = 0;
/** A valid, unused US number whose last digit is `last` (the simulator's RCS rule). */
function phone(last = 1): string {
  seq++;
  return `+1415555${String(seq % 1000).padStart(3, '0')}${last}`;
}

async function create(body: Record<string, unknown>, k = key) {
  const res = await call(srv, 'POST', '/v1/contacts', { key: k, body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function newTag(name: string, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/tags', { key: k, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

describe('createContact', () => {
  it('stores the contact with tags, attributes, default TCPA settings inferred from the number', async () => {
    const vip = await newTag('VIP');
    const p = phone();
    const c = await create({
      phone: p,
      name: 'Ada Lovelace',
      tags: [vip, vip],
      attributes: { tier: 'gold', ltv: 1249.5, vip: true, ref: null },
    });
    expect(c).toMatchObject({
      name: 'Ada Lovelace',
      phone: p,
      tags: [vip],
      attributes: { tier: 'gold', ltv: 1249.5, vip: true, ref: null },
      rcsCapable: null,
      rcsCheckedAt: null,
      optedOut: false,
      tcpa: {
        timeZone: 'America/Los_Angeles',
        timeZoneSource: 'inferred',
        quietHoursStart: '21:00',
        quietHoursEnd: '08:00',
        consentType: 'NONE',
      },
    });
    const row = await srv.context.db
      .selectFrom('contacts')
      .select(['phone', 'phone_country'])
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ phone: p, phone_country: 'US' });
    const got = await call(srv, 'GET', `/v1/contacts/${c.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(c);
  });

  it('keeps an explicit time zone', async () => {
    const c = await create({ phone: phone(), timeZone: 'Europe/Paris' });
    expect(c.tcpa).toMatchObject({ timeZone: 'Europe/Paris', timeZoneSource: 'explicit' });
  });

  it('answers 409 ALREADY_EXISTS naming the existing contact for a second contact with the same phone', async () => {
    const p = phone();
    const first = await create({ phone: p });
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: p, name: 'Again' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ALREADY_EXISTS');
    expect(res.body.details[0]).toMatchObject({ field: 'body.phone', code: 'unique', message: first.id });
    // The same phone is free in another organization.
    await create({ phone: p }, other.apiKey.secret);
  });

  it('answers 400 INVALID_PHONE naming body.phone for a number that is not valid for its country', async () => {
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+11005550123' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_PHONE');
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.phone' })]);
  });

  it('answers 400 VALIDATION_ERROR for a phone that is not E.164', async () => {
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '(415) 555-0123' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain('body.phone');
  });

  it('answers 400 for an unknown time zone', async () => {
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(), timeZone: 'Mars/Olympus' } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.timeZone' })]);
  });

  it('answers 404 naming each unknown tag, and creates nothing', async () => {
    const known = await newTag('Known');
    const foreign = (await call(srv, 'POST', '/v1/tags', { key: other.apiKey.secret, body: { name: 'Theirs' } })).body.data.id;
    const p = phone();
    const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: p, tags: [known, foreign] } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.tags.1' })]);
    const list = await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key });
    expect(list.body.data).toEqual([]);
  });

  it('records consent other than NONE as a CONSENT_UPDATED entry from the API, by the calling key', async () => {
    const c = await create({ phone: phone(), consentType: 'MARKETING' });
    expect(c.tcpa.consentType).toBe('MARKETING');
    const history = await call(srv, 'GET', `/v1/contacts/${c.id}/consent`, { key });
    expect(history.body.data).toEqual([
      expect.objectContaining({
        contactId: c.id,
        action: 'CONSENT_UPDATED',
        source: 'API',
        consentType: 'MARKETING',
        actor: org.apiKey.id,
      }),
    ]);
    const none = await create({ phone: phone() });
    expect((await call(srv, 'GET', `/v1/contacts/${none.id}/consent`, { key })).body.data).toEqual([]);
  });

  it('starts opted out when the phone opted out before', async () => {
    const p = phone();
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: p, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    expect((await create({ phone: p })).optedOut).toBe(true);
  });

  it('needs contacts:create', async () => {
    const reader = await srv.newKey(org.organizationId, ['contacts:read']);
    const res = await call(srv, 'POST', '/v1/contacts', { key: reader.secret, body: { phone: phone() } });
    expect(res.status).toBe(403);
  });
});

describe('replaceContact', () => {
  it('replaces every mutable field and resets the ones left out', async () => {
    const [a, b] = [await newTag('Replace A'), await newTag('Replace B')];
    const c = await create({ phone: phone(), name: 'Old', tags: [a], attributes: { x: 1 }, timeZone: 'Europe/Paris' });
    const res = await call(srv, 'PUT', `/v1/contacts/${c.id}`, { key, body: { phone: c.phone, tags: [b], attributes: { y: 'z' } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, name: null, tags: [b], attributes: { y: 'z' }, tcpa: { timeZoneSource: 'inferred' } });
    expect(new Date(res.body.updatedAt) >= new Date(c.updatedAt)).toBe(true);
  });

  it('resets the RCS capability and follows the new number opt-out state when the phone changes', async () => {
    const c = await create({ phone: phone(1) });
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key })).body.data.rcsCapable).toBe(true);
    const next = phone(2);
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: next, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const res = await call(srv, 'PUT', `/v1/contacts/${c.id}`, { key, body: { phone: next } });
    expect(res.body).toMatchObject({ phone: next, rcsCapable: null, rcsCheckedAt: null, optedOut: true });
  });

  it('answers 409 when another contact has the phone, 400 for an invalid one, 404 for an unknown tag', async () => {
    const a = await create({ phone: phone() });
    const b = await create({ phone: phone() });
    const taken = await call(srv, 'PUT', `/v1/contacts/${b.id}`, { key, body: { phone: a.phone } });
    expect(taken.status).toBe(409);
    expect(taken.body.details[0]).toMatchObject({ field: 'body.phone', message: a.id });
    const invalid = await call(srv, 'PUT', `/v1/contacts/${b.id}`, { key, body: { phone: '+11005550123' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('INVALID_PHONE');
    const tag = await call(srv, 'PUT', `/v1/contacts/${b.id}`, {
      key,
      body: { phone: b.phone, tags: ['00000000-0000-4000-8000-000000000000'] },
    });
    expect(tag.status).toBe(404);
    expect(tag.body.details[0].field).toBe('body.tags.0');
    expect((await call(srv, 'GET', `/v1/contacts/${b.id}`, { key })).body.phone).toBe(b.phone);
  });
});

describe('deleteContact', () => {
  it('deletes once, keeps the consent history and the opt-out for a contact re-created with the phone', async () => {
    const tag = await newTag('Delete me tag');
    const p = phone();
    const c = await create({ phone: p, consentType: 'MARKETING', tags: [tag] });
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: org.organizationId, phone: p, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const del = await call(srv, 'DELETE', `/v1/contacts/${c.id}`, { key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { id: c.id, deleted: true } });
    expect((await call(srv, 'DELETE', `/v1/contacts/${c.id}`, { key })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}`, { key })).status).toBe(404);
    const links = await srv.context.db.selectFrom('contact_tags').select('tag_id').where('contact_id', '=', c.id).execute();
    expect(links).toEqual([]);

    const again = await create({ phone: p });
    expect(again.optedOut).toBe(true);
    const history = await call(srv, 'GET', `/v1/contacts/${again.id}/consent`, { key });
    expect(history.body.data).toEqual([expect.objectContaining({ contactId: c.id, action: 'CONSENT_UPDATED', phone: p })]);
  });
});

describe('listContactConsent', () => {
  it('lists the history newest first, paginated', async () => {
    const c = await create({ phone: phone() });
    const base = Date.now() - 3_600_000;
    const entries = ['OPT_IN', 'OPT_OUT', 'OVERRIDE'].map((action, i) => ({
      organization_id: org.organizationId,
      contact_id: c.id,
      phone: c.phone,
      action,
      source: action === 'OVERRIDE' ? 'OVERRIDE' : 'KEYWORD',
      keyword: action === 'OVERRIDE' ? null : action === 'OPT_IN' ? 'START' : 'STOP',
      channel: action === 'OVERRIDE' ? null : 'SMS',
      reason: action === 'OVERRIDE' ? 'customer called' : null,
      expires_at: action === 'OVERRIDE' ? new Date(base + 86_400_000) : null,
      created_at: new Date(base + i * 60_000),
    }));
    await srv.context.db.insertInto('consent_events').values(entries).execute();
    const page1 = await call(srv, 'GET', `/v1/contacts/${c.id}/consent?limit=2`, { key });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((e: { action: string }) => e.action)).toEqual(['OVERRIDE', 'OPT_OUT']);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 3, hasMore: true });
    const page2 = await call(srv, 'GET', `/v1/contacts/${c.id}/consent?limit=2&page=2`, { key });
    expect(page2.body.data.map((e: { action: string }) => e.action)).toEqual(['OPT_IN']);
    expect(page2.body.pagination.hasMore).toBe(false);
  });

  it('answers 404 for another organization', async () => {
    const c = await create({ phone: phone() });
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}/consent`, { key: other.apiKey.secret })).status).toBe(404);
  });
});

describe('listContacts', () => {
  let lister: Awaited<ReturnType<TestServer['newOrg']>>;
  let k: string;
  const ids: Record<string, string> = {};
  let gold: string;

  beforeAll(async () => {
    lister = await srv.newOrg('List org');
    k = lister.apiKey.secret;
    gold = await newTag('Gold', k);
    const people: Array<[string, string | null, boolean]> = [
      ['+14155550101', 'bob Stone', true],
      ['+14155550112', 'Alice Zed', false],
      ['+14155550123', null, false],
      ['+14155550134', 'carol Ng', true],
      ['+14155550145', 'Émile 50% off', false],
    ];
    for (const [p, name, tagged] of people) {
      const c = await create({ phone: p, ...(name ? { name } : {}), ...(tagged ? { tags: [gold] } : {}) }, k);
      ids[p] = c.id;
    }
    await srv.context.db
      .updateTable('contacts')
      .set({ rcs_capable: true, rcs_checked_at: new Date() })
      .where('id', '=', ids['+14155550101']!)
      .execute();
    await srv.context.db
      .updateTable('contacts')
      .set({ rcs_capable: false, rcs_checked_at: new Date() })
      .where('id', '=', ids['+14155550112']!)
      .execute();
  });

  const names = async (qs: string) => {
    const res = await call(srv, 'GET', `/v1/contacts?${qs}`, { key: k });
    expect(res.status, res.text).toBe(200);
    return res.body.data.map((c: { name: string | null; phone: string }) => c.name ?? c.phone);
  };

  it('lists newest first by default, with pagination', async () => {
    const res = await call(srv, 'GET', '/v1/contacts?limit=2', { key: k });
    expect(res.body.data.map((c: { phone: string }) => c.phone)).toEqual(['+14155550145', '+14155550134']);
    expect(res.body.pagination).toEqual({ page: 1, limit: 2, total: 5, hasMore: true });
    const last = await call(srv, 'GET', '/v1/contacts?limit=2&page=3', { key: k });
    expect(last.body.data.map((c: { phone: string }) => c.phone)).toEqual(['+14155550101']);
    expect(last.body.pagination).toEqual({ page: 3, limit: 2, total: 5, hasMore: false });
    expect(await names('sortBy=createdAt&sortOrder=asc&limit=1')).toEqual(['bob Stone']);
    const past = await call(srv, 'GET', '/v1/contacts?limit=2&page=4', { key: k });
    expect(past.body).toEqual({ data: [], pagination: { page: 4, limit: 2, total: 5, hasMore: false } });
  });

  it('sorts by name case-insensitively, unnamed contacts last in both orders', async () => {
    expect(await names('sortBy=name&sortOrder=asc')).toEqual(['Alice Zed', 'bob Stone', 'carol Ng', 'Émile 50% off', '+14155550123']);
    expect(await names('sortBy=name&sortOrder=desc')).toEqual(['Émile 50% off', 'carol Ng', 'bob Stone', 'Alice Zed', '+14155550123']);
  });

  it('sorts by phone', async () => {
    const res = await call(srv, 'GET', '/v1/contacts?sortBy=phone&sortOrder=desc', { key: k });
    expect(res.body.data.map((c: { phone: string }) => c.phone)).toEqual([
      '+14155550145',
      '+14155550134',
      '+14155550123',
      '+14155550112',
      '+14155550101',
    ]);
  });

  it('searches the name case-insensitively and the phone with or without +', async () => {
    expect(await names('search=STONE')).toEqual(['bob Stone']);
    expect(await names('search=5550123')).toEqual(['+14155550123']);
    expect(await names('search=%2B1415555013')).toEqual(['carol Ng']);
    expect(await names('search=50%25')).toEqual(['Émile 50% off']); // % is taken literally
    expect(await names('search=nobody')).toEqual([]);
  });

  it('filters by tag (unknown tag: empty page) and by known RCS capability', async () => {
    expect((await names('tag=' + gold)).sort()).toEqual(['bob Stone', 'carol Ng']);
    expect(await names('tag=00000000-0000-4000-8000-000000000000')).toEqual([]);
    expect(await names('rcsCap=true')).toEqual(['bob Stone']);
    expect(await names('rcsCap=false')).toEqual(['Alice Zed']);
    expect(await names(`tag=${gold}&rcsCap=true&search=bob`)).toEqual(['bob Stone']);
    const res = await call(srv, 'GET', `/v1/contacts?tag=${gold}`, { key: k });
    expect(res.body.pagination.total).toBe(2);
  });

  it('rejects bad parameters naming them', async () => {
    const res = await call(srv, 'GET', '/v1/contacts?limit=500&sortBy=age', { key: k });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['query.limit', 'query.sortBy']));
  });

  it("never shows another organization's contacts", async () => {
    const res = await call(srv, 'GET', '/v1/contacts?search=bob', { key: other.apiKey.secret });
    expect(res.body.data).toEqual([]);
    expect((await call(srv, 'GET', `/v1/contacts/${ids['+14155550101']}`, { key: other.apiKey.secret })).status).toBe(404);
    const put = await call(srv, 'PUT', `/v1/contacts/${ids['+14155550101']}`, {
      key: other.apiKey.secret,
      body: { phone: '+14155550101' },
    });
    expect(put.status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/contacts/${ids['+14155550101']}`, { key: other.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/contacts/${ids['+14155550101']}`, { key: k })).status).toBe(200);
  });
});

describe('listContacts sorted by name, page by page', () => {
  // The descending order is read from the ascending name index in two parts (named backward, unnamed by id):
  // unnamed contacts must still come last, ties (same name but for case) by id, and pages must join up.
  let k: string;
  let tag: string;
  const made: Array<{ id: string; name: string | null; tagged: boolean }> = [];

  beforeAll(async () => {
    k = (await srv.newOrg('Name sort org')).apiKey.secret;
    tag = await newTag('Sorted', k);
    const names = ['delta', null, 'Alpha', 'charlie', null, 'alpha', 'Bravo', null, 'echo', null];
    for (const [i, name] of names.entries()) {
      const tagged = i % 2 === 0;
      const c = await create({ phone: phone(), ...(name ? { name } : {}), ...(tagged ? { tags: [tag] } : {}) }, k);
      made.push({ id: c.id, name, tagged });
    }
  });

  /** Every page of the list at `limit`, joined: ids in the order the API gave them. */
  const walk = async (qs: string, limit: number) => {
    const out: string[] = [];
    for (let page = 1; ; page++) {
      const res = await call(srv, 'GET', `/v1/contacts?${qs}&limit=${limit}&page=${page}`, { key: k });
      expect(res.status, res.text).toBe(200);
      out.push(...res.body.data.map((c: { id: string }) => c.id));
      if (!res.body.pagination.hasMore) return { ids: out, total: res.body.pagination.total };
    }
  };
  /** The list's documented order: by name without case (ties by id), contacts without a name last (by id). */
  const expected = (order: 'asc' | 'desc', only: (c: (typeof made)[number]) => boolean = () => true) => {
    const sign = order === 'asc' ? 1 : -1;
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return made
      .filter(only)
      .sort((a, b) => {
        if ((a.name === null) !== (b.name === null)) return a.name === null ? 1 : -1;
        return sign * (cmp(a.name?.toLowerCase() ?? '', b.name?.toLowerCase() ?? '') || cmp(a.id, b.id));
      })
      .map((c) => c.id);
  };

  it('gives every contact once, in order, unnamed last, in both directions and at every page size', async () => {
    for (const order of ['desc', 'asc'] as const) {
      for (const limit of [1, 3, 4, 100]) {
        const { ids, total } = await walk(`sortBy=name&sortOrder=${order}`, limit);
        expect(ids, `${order}, limit ${limit}`).toEqual(expected(order));
        expect(total).toBe(made.length);
      }
    }
  });

  it('keeps that order under a filter (tag), and a page past the end is empty', async () => {
    const { ids, total } = await walk(`sortBy=name&sortOrder=desc&tag=${tag}`, 2);
    expect(ids).toEqual(expected('desc', (c) => c.tagged));
    expect(total).toBe(made.filter((c) => c.tagged).length);
    const past = await call(srv, 'GET', '/v1/contacts?sortBy=name&sortOrder=desc&limit=4&page=4', { key: k });
    expect(past.body.data).toEqual([]);
  });
});

describe('listContactAttributeKeys', () => {
  it('lists the distinct keys in code-point order', async () => {
    const o = await srv.newOrg('Keys org');
    await create({ phone: phone(), attributes: { beta: 1, Zulu: true } }, o.apiKey.secret);
    await create({ phone: phone(), attributes: { beta: 2, alpha: 'x', _under: null } }, o.apiKey.secret);
    const res = await call(srv, 'GET', '/v1/contacts/attribute-keys', { key: o.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: ['Zulu', '_under', 'alpha', 'beta'],
      truncated: false,
      pagination: { page: 1, limit: 4, total: 4, hasMore: false },
    });
  });

  it('caps the answer at 500 keys and says it is truncated', async () => {
    const o = await srv.newOrg('Many keys org');
    // 501 distinct keys over 6 contacts, in one statement.
    await sql`
      insert into contacts (organization_id, phone, attributes)
      select ${o.organizationId}, '+1415555' || lpad(g::text, 4, '0'),
             (select jsonb_object_agg('k' || lpad(i::text, 3, '0'), i) from generate_series(g * 100, least(g * 100 + 99, 500)) i)
      from generate_series(0, 5) g`.execute(srv.context.db);
    const res = await call(srv, 'GET', '/v1/contacts/attribute-keys', { key: o.apiKey.secret });
    expect(res.body.truncated).toBe(true);
    expect(res.body.data).toHaveLength(500);
    expect(res.body.data[0]).toBe('k000');
    expect(res.body.data.at(-1)).toBe('k499');
  });
});

describe('checkContactRcs', () => {
  const lookups = (contactId: string) =>
    srv.context.db
      .selectFrom('contact_rcs_lookups')
      .select(['rcs_capable', 'price', 'currency'])
      .where('contact_id', '=', contactId)
      .execute();

  it('bills a fresh lookup, then answers from the 7-day cache for free', async () => {
    const c = await create({ phone: phone(3) });
    const first = await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      contactId: c.id,
      phone: c.phone,
      status: 'COMPLETED',
      rcsCapable: true,
      cached: false,
      billable: true,
      cost: { amount: '0.0000', currency: 'USD' },
      failureReason: null,
    });
    expect(new Date(first.body.data.expiresAt).getTime() - new Date(first.body.data.checkedAt).getTime()).toBe(7 * 86_400_000);
    const second = await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    expect(second.body.data).toMatchObject({
      status: 'COMPLETED',
      rcsCapable: true,
      cached: true,
      billable: false,
      cost: null,
      checkedAt: first.body.data.checkedAt,
    });
    expect(await lookups(c.id)).toEqual([{ rcs_capable: true, price: '0.0000', currency: 'USD' }]);
    const contact = (await call(srv, 'GET', `/v1/contacts/${c.id}`, { key })).body;
    expect(contact).toMatchObject({ rcsCapable: true, rcsCheckedAt: first.body.data.checkedAt });
  });

  it('bills a valid negative answer too', async () => {
    const c = await create({ phone: phone(7) });
    const res = await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    expect(res.body.data).toMatchObject({ status: 'COMPLETED', rcsCapable: false, billable: true });
    expect(await lookups(c.id)).toHaveLength(1);
  });

  it('looks up again once the cached answer is 7 days old', async () => {
    const c = await create({ phone: phone(4) });
    await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    await srv.context.db
      .updateTable('contacts')
      .set({ rcs_checked_at: new Date(Date.now() - 7 * 86_400_000 - 1000) })
      .where('id', '=', c.id)
      .execute();
    const res = await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    expect(res.body.data).toMatchObject({ cached: false, billable: true });
    expect(await lookups(c.id)).toHaveLength(2);
  });

  it('answers FAILED, free, and leaves the contact unchanged when the lookup cannot be performed', async () => {
    const c = await create({ phone: '+14155559999' });
    const res = await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'FAILED',
      rcsCapable: null,
      cached: false,
      expiresAt: null,
      billable: false,
      cost: null,
    });
    expect(res.body.data.failureReason).toEqual(expect.any(String));
    expect(await lookups(c.id)).toEqual([]);
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}`, { key })).body).toMatchObject({ rcsCapable: null, rcsCheckedAt: null });
  });

  it('makes the answer filterable as rcsCap', async () => {
    const o = await srv.newOrg('RCS filter org');
    const yes = await create({ phone: phone(0) }, o.apiKey.secret);
    const no = await create({ phone: phone(9) }, o.apiKey.secret);
    await create({ phone: phone(2) }, o.apiKey.secret); // never checked
    for (const c of [yes, no]) await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key: o.apiKey.secret });
    const capable = await call(srv, 'GET', '/v1/contacts?rcsCap=true', { key: o.apiKey.secret });
    expect(capable.body.data.map((c: { id: string }) => c.id)).toEqual([yes.id]);
    const not = await call(srv, 'GET', '/v1/contacts?rcsCap=false', { key: o.apiKey.secret });
    expect(not.body.data.map((c: { id: string }) => c.id)).toEqual([no.id]);
  });

  it('needs contacts:update and stays within the organization', async () => {
    const c = await create({ phone: phone() });
    const reader = await srv.newKey(org.organizationId, ['contacts:read']);
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key: reader.secret })).status).toBe(403);
    expect((await call(srv, 'GET', `/v1/contacts/${c.id}/rcs-check`, { key: other.apiKey.secret })).status).toBe(404);
    expect(await lookups(c.id)).toEqual([]);
  });
});
