// Tags and bulk tagging through HTTP: create/list/delete (cascade), the 1,000-tag cap, synchronous bulk tag
// and untag with their counts, the asynchronous job above 1,000 contacts, and tenant walls.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Tags org');
  other = await srv.newOrg('Other tags org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function newTag(name: string, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/tags', { key: k, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

/** `n` contacts of the organization, inserted in one statement; their ids in creation order. */
async function seedContacts(orgId: string, n: number, prefix: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    insert into contacts (organization_id, phone, created_at)
    select ${orgId}, ${prefix} || lpad(g::text, 4, '0'), now() + g * interval '1 microsecond'
    from generate_series(1, ${n}) g
    returning id`.execute(srv.context.db);
  return rows.map((r) => r.id);
}

const tagsOf = async (contactId: string) =>
  (await srv.context.db.selectFrom('contact_tags').select('tag_id').where('contact_id', '=', contactId).execute())
    .map((r) => r.tag_id)
    .sort();

describe('tags', () => {
  it('creates trimmed, unique names compared case-insensitively, listed by name case-insensitively', async () => {
    const o = await srv.newOrg('Tag list org');
    const res = await call(srv, 'POST', '/v1/tags', { key: o.apiKey.secret, body: { name: '  newsletter ' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: 'newsletter', id: expect.any(String), createdAt: expect.any(String) });
    const dup = await call(srv, 'POST', '/v1/tags', { key: o.apiKey.secret, body: { name: 'NewsLetter' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    expect(dup.body.details[0].field).toBe('body.name');
    await newTag('VIP', o.apiKey.secret);
    await newTag('alpha', o.apiKey.secret);
    const list = await call(srv, 'GET', '/v1/tags', { key: o.apiKey.secret });
    expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(['alpha', 'newsletter', 'VIP']);
    // Same name in another organization is fine, and each sees only its own.
    await newTag('VIP', other.apiKey.secret);
    expect((await call(srv, 'GET', '/v1/tags', { key: other.apiKey.secret })).body.data.map((t: { name: string }) => t.name)).not.toContain(
      'alpha',
    );
  });

  it('refuses a blank name', async () => {
    const res = await call(srv, 'POST', '/v1/tags', { key, body: { name: '   ' } });
    expect(res.status).toBe(400);
  });

  it('caps an organization at 1,000 tags (422)', async () => {
    const o = await srv.newOrg('Tag cap org');
    await sql`insert into tags (organization_id, name) select ${o.organizationId}, 't' || g from generate_series(1, 999) g`.execute(
      srv.context.db,
    );
    expect((await call(srv, 'POST', '/v1/tags', { key: o.apiKey.secret, body: { name: 'last one' } })).status).toBe(201);
    const over = await call(srv, 'POST', '/v1/tags', { key: o.apiKey.secret, body: { name: 'one too many' } });
    expect(over.status).toBe(422);
    expect(over.body.code).toBe('UNPROCESSABLE');
  });

  it('deletes a tag and removes it from every contact, keeping the contacts', async () => {
    const doomed = await newTag('Doomed');
    const kept = await newTag('Kept');
    const a = (await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550201', tags: [doomed, kept] } })).body;
    const b = (await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550202', tags: [doomed] } })).body;
    expect((await call(srv, 'DELETE', `/v1/tags/${doomed}`, { key: other.apiKey.secret })).status).toBe(404);
    const res = await call(srv, 'DELETE', `/v1/tags/${doomed}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: doomed, deleted: true, contactsUntagged: 2 } });
    expect((await call(srv, 'GET', `/v1/contacts/${a.id}`, { key })).body.tags).toEqual([kept]);
    expect((await call(srv, 'GET', `/v1/contacts/${b.id}`, { key })).body.tags).toEqual([]);
    expect((await call(srv, 'DELETE', `/v1/tags/${doomed}`, { key })).status).toBe(404);
  });
});

describe('bulk tag, synchronous (up to 1,000 contacts)', () => {
  it('tags set-based and counts tagged, already tagged, not found and failed distinct contacts', async () => {
    const [t1, t2] = [await newTag('Bulk 1'), await newTag('Bulk 2')];
    const ids = await seedContacts(org.organizationId, 4, '+1415555030');
    const [fresh, half, full, crowded] = ids as [string, string, string, string];
    await srv.context.db
      .insertInto('contact_tags')
      .values([
        { organization_id: org.organizationId, contact_id: half, tag_id: t1 },
        { organization_id: org.organizationId, contact_id: full, tag_id: t1 },
        { organization_id: org.organizationId, contact_id: full, tag_id: t2 },
      ])
      .execute();
    // `crowded` carries 49 tags: two more would make 51.
    await sql`
      with t as (insert into tags (organization_id, name) select ${org.organizationId}, 'crowd ' || g from generate_series(1, 49) g returning id)
      insert into contact_tags (organization_id, contact_id, tag_id) select ${org.organizationId}, ${crowded}, id from t`.execute(
      srv.context.db,
    );
    const foreign = (await seedContacts(other.organizationId, 1, '+1415555039'))[0]!;
    const unknown = '00000000-0000-4000-8000-000000000001';

    const res = await call(srv, 'POST', '/v1/contacts/bulk/tag', {
      key,
      body: { tagIds: [t1, t2], contactIds: [fresh, half, full, crowded, fresh, foreign, unknown] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { tagged: 2, alreadyTagged: 1, notFound: 2, failed: 1 } });
    expect(await tagsOf(fresh)).toEqual([t1, t2].sort());
    expect(await tagsOf(half)).toEqual([t1, t2].sort());
    expect(await tagsOf(crowded)).toHaveLength(49);
    expect(await tagsOf(foreign)).toEqual([]);
  });

  it('answers 404 naming an unknown tag and tags nothing', async () => {
    const tag = await newTag('Bulk known');
    const [c] = await seedContacts(org.organizationId, 1, '+1415555031');
    const res = await call(srv, 'POST', '/v1/contacts/bulk/tag', {
      key,
      body: { tagIds: [tag, '00000000-0000-4000-8000-000000000002'], contactIds: [c] },
    });
    expect(res.status).toBe(404);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.tagIds.1' })]);
    expect(await tagsOf(c!)).toEqual([]);
    const foreignTag = await newTag('Their bulk tag', other.apiKey.secret);
    expect((await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [foreignTag], contactIds: [c] } })).status).toBe(404);
  });

  it('untags set-based, counting distinct contacts that lost a tag, idempotently', async () => {
    const [t1, t2] = [await newTag('Untag 1'), await newTag('Untag 2')];
    const ids = await seedContacts(org.organizationId, 3, '+1415555032');
    await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [t1, t2], contactIds: ids.slice(0, 2) } });
    const body = { tagIds: [t1, t2], contactIds: [...ids, ids[0]!, '00000000-0000-4000-8000-000000000003'] };
    const res = await call(srv, 'DELETE', '/v1/contacts/bulk/tag', { key, body });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { untagged: 2 } });
    for (const id of ids) expect(await tagsOf(id)).toEqual([]);
    expect((await call(srv, 'DELETE', '/v1/contacts/bulk/tag', { key, body })).body).toEqual({ data: { untagged: 0 } });
    // Another organization's key cannot untag these contacts.
    await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [t1], contactIds: ids } });
    const theirTag = await newTag('Their untag', other.apiKey.secret);
    expect(
      (await call(srv, 'DELETE', '/v1/contacts/bulk/tag', { key: other.apiKey.secret, body: { tagIds: [t1], contactIds: ids } })).status,
    ).toBe(404);
    const none = await call(srv, 'DELETE', '/v1/contacts/bulk/tag', {
      key: other.apiKey.secret,
      body: { tagIds: [theirTag], contactIds: ids },
    });
    expect(none.body).toEqual({ data: { untagged: 0 } });
    expect(await tagsOf(ids[0]!)).toEqual([t1]);
  });
});

describe('bulk tag, asynchronous (more than 1,000 contacts)', () => {
  it('answers 202 with a job that completes with the counts', async () => {
    const tag = await newTag('Async bulk');
    const ids = await seedContacts(org.organizationId, 1500, '+141555');
    await srv.context.db
      .insertInto('contact_tags')
      .values({ organization_id: org.organizationId, contact_id: ids[0]!, tag_id: tag })
      .execute();
    const missing = ['00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000005'];
    const res = await call(srv, 'POST', '/v1/contacts/bulk/tag', {
      key,
      body: { tagIds: [tag], contactIds: [...ids, ...missing, ids[1]!] },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', tagIds: [tag], total: 1502, processed: 0, tagged: 0, completedAt: null });
    expect(res.headers.get('location')).toBe(`/v1/contacts/bulk/tag/${res.body.jobId}`);

    let job = res.body;
    for (let i = 0; i < 100 && !['completed', 'failed'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await call(srv, 'GET', `/v1/contacts/bulk/tag/${res.body.jobId}`, { key })).body;
    }
    expect(job).toMatchObject({
      status: 'completed',
      total: 1502,
      processed: 1502,
      tagged: 1499,
      alreadyTagged: 1,
      notFound: 2,
      failed: 0,
      error: null,
    });
    expect(job.completedAt).toEqual(expect.any(String));
    const { n } = await srv.context.db
      .selectFrom('contact_tags')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tag_id', '=', tag)
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(1500);

    expect((await call(srv, 'GET', `/v1/contacts/bulk/tag/${res.body.jobId}`, { key: other.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', '/v1/contacts/bulk/tag/00000000-0000-4000-8000-000000000006', { key })).status).toBe(404);
  });
});
