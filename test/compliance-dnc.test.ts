// Compliance section through HTTP: the Do-Not-Contact list (listDncEntries, createDncEntry,
// createDncEntriesBatch, deleteDncEntry).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  [owner, other] = await Promise.all([srv.newOrg('DNC org'), srv.newOrg('DNC other org')]);
});
afterAll(() => srv.close());

const add = (key: string, body: unknown) => call(srv, 'POST', '/v1/compliance/dnc', { key, body });

describe('createDncEntry', () => {
  it('adds a phone once; a second add returns the same entry with created: false', async () => {
    const first = await add(owner.apiKey.secret, { phone: '+14155550188', reason: 'Asked by email' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      created: true,
      data: { phone: '+14155550188', reason: 'Asked by email', source: 'API', actor: owner.apiKey.id, createdAt: expect.any(String) },
    });
    const again = await add(owner.apiKey.secret, { phone: '+14155550188', reason: 'Different reason' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ created: false, data: first.body.data });
  });

  it('refuses a non-E.164 phone (VALIDATION_ERROR) and an impossible number (INVALID_PHONE)', async () => {
    const format = await add(owner.apiKey.secret, { phone: '415-555-0188' });
    expect(format.status).toBe(400);
    expect(format.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'body.phone' })] });
    const invalid = await add(owner.apiKey.secret, { phone: '+10005550188' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ code: 'INVALID_PHONE', details: [{ field: 'body.phone', message: expect.any(String) }] });
  });

  it('needs compliance:create', async () => {
    const key = await srv.newKey(owner.organizationId, ['compliance:read']);
    expect((await add(key.secret, { phone: '+14155550177' })).status).toBe(403);
  });
});

describe('a phone listed after its messages were accepted', () => {
  // No workers here: accepted messages stay queued, as behind a sender's rate in a long blast.
  async function queuedTo(org: typeof owner, phone: string) {
    const contact = await srv.context.db
      .insertInto('contacts')
      .values({
        organization_id: org.organizationId,
        phone,
        attributes: '{}',
        consent_type: 'MARKETING',
        time_zone: 'UTC',
        quiet_hours_start: '00:00',
        quiet_hours_end: '00:00',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key: org.apiKey.secret,
      body: { contactId: contact.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order shipped' } },
    });
    expect(sent.body.data.status).toBe('queued');
    return sent.body.data.messageId as string;
  }
  const messageOf = (id: string) =>
    srv.context.db
      .selectFrom('messages')
      .select(['status', 'error_code', 'cost_units', 'dispatch_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('fails them unsent and unbilled (DNC_LISTED), by one entry or by a batch; another organization’s messages to the number go on', async () => {
    const single = await queuedTo(owner, '+14155550271');
    const batched = await queuedTo(owner, '+14155550272');
    const elsewhere = await queuedTo(other, '+14155550271');
    expect((await add(owner.apiKey.secret, { phone: '+14155550271' })).body.created).toBe(true);
    expect(
      (await call(srv, 'POST', '/v1/compliance/dnc/batch', { key: owner.apiKey.secret, body: { phones: ['+14155550272'] } })).status,
    ).toBe(200);
    for (const id of [single, batched])
      expect(await messageOf(id)).toEqual({ status: 'failed', error_code: 'DNC_LISTED', cost_units: null, dispatch_at: null });
    expect(await messageOf(elsewhere)).toMatchObject({ status: 'queued', error_code: null });
  });
});

describe('listDncEntries', () => {
  it('lists newest first with pagination and searches a phone substring', async () => {
    const org = await srv.newOrg('DNC list org');
    for (const phone of ['+14155550101', '+13125550102', '+14155550103'])
      expect((await add(org.apiKey.secret, { phone })).status).toBe(200);

    const all = await call(srv, 'GET', '/v1/compliance/dnc?limit=2', { key: org.apiKey.secret });
    expect(all.status).toBe(200);
    expect(all.body.data.map((e: { phone: string }) => e.phone)).toEqual(['+14155550103', '+13125550102']);
    expect(all.body.pagination).toEqual({ page: 1, limit: 2, total: 3, hasMore: true });
    const page2 = await call(srv, 'GET', '/v1/compliance/dnc?limit=2&page=2', { key: org.apiKey.secret });
    expect(page2.body.data.map((e: { phone: string }) => e.phone)).toEqual(['+14155550101']);
    const past = await call(srv, 'GET', '/v1/compliance/dnc?limit=2&page=5', { key: org.apiKey.secret });
    expect(past.body).toEqual({ data: [], pagination: { page: 5, limit: 2, total: 3, hasMore: false } });

    const plus = await call(srv, 'GET', `/v1/compliance/dnc?search=${encodeURIComponent('+1415')}`, { key: org.apiKey.secret });
    expect(plus.body.data.map((e: { phone: string }) => e.phone)).toEqual(['+14155550103', '+14155550101']);
    const digits = await call(srv, 'GET', '/v1/compliance/dnc?search=50102', { key: org.apiKey.secret });
    expect(digits.body.data.map((e: { phone: string }) => e.phone)).toEqual(['+13125550102']);
    const none = await call(srv, 'GET', '/v1/compliance/dnc?search=999999', { key: org.apiKey.secret });
    expect(none.body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, hasMore: false } });

    const bad = await call(srv, 'GET', '/v1/compliance/dnc?search=41%25', { key: org.apiKey.secret });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('query.search');
  });

  it('shows only the caller’s organization', async () => {
    const res = await call(srv, 'GET', '/v1/compliance/dnc?search=4155550188', { key: other.apiKey.secret });
    expect(res.body.data).toEqual([]);
  });
});

describe('createDncEntriesBatch', () => {
  it('reports every item in order, dedups, and stores only valid phones; repeating adds nothing', async () => {
    const org = await srv.newOrg('DNC batch org');
    await add(org.apiKey.secret, { phone: '+14155550188' });
    const phones = ['+14155550188', '+14155550199', '+14155550199', '555-0100', '+10005550188', '+442071234567'];
    const res = await call(srv, 'POST', '/v1/compliance/dnc/batch', { key: org.apiKey.secret, body: { phones, reason: 'CRM export' } });
    expect(res.status).toBe(200);
    const { results, ...counts } = res.body.data;
    expect(results.map((r: { phone: string; status: string }) => [r.phone, r.status])).toEqual([
      ['+14155550188', 'already_listed'],
      ['+14155550199', 'added'],
      ['+14155550199', 'duplicate_in_request'],
      ['555-0100', 'invalid'],
      ['+10005550188', 'invalid'],
      ['+442071234567', 'added'],
    ]);
    expect(counts).toEqual({ added: 2, alreadyListed: 1, invalid: 2, duplicateInRequest: 1 });
    expect(results.map((r: { id: string | null }) => r.id === null)).toEqual([false, false, true, true, true, false]);

    const list = await call(srv, 'GET', '/v1/compliance/dnc', { key: org.apiKey.secret });
    expect(list.body.pagination.total).toBe(3);
    const byPhone = new Map(list.body.data.map((e: { phone: string }) => [e.phone, e]));
    expect(byPhone.get('+14155550199')).toMatchObject({ id: results[1].id, source: 'BATCH', reason: 'CRM export', actor: org.apiKey.id });
    expect(byPhone.get('+14155550188')).toMatchObject({ id: results[0].id, source: 'API' });

    const again = await call(srv, 'POST', '/v1/compliance/dnc/batch', { key: org.apiKey.secret, body: { phones } });
    expect(again.body.data).toMatchObject({ added: 0, alreadyListed: 3, invalid: 2, duplicateInRequest: 1 });
    expect(again.body.data.results[1].id).toBe(results[1].id);
  });

  it('handles 10,000 phones in one call and refuses 10,001', async () => {
    const org = await srv.newOrg('DNC big batch org');
    const phones = Array.from({ length: 10_000 }, (_, i) => `+1312555${String(i).padStart(4, '0')}`);
    const res = await call(srv, 'POST', '/v1/compliance/dnc/batch', { key: org.apiKey.secret, body: { phones } });
    expect(res.status).toBe(200);
    expect(res.body.data.added + res.body.data.invalid).toBe(10_000);
    expect(res.body.data.added).toBeGreaterThan(9_000);
    const total = (await call(srv, 'GET', '/v1/compliance/dnc?limit=1', { key: org.apiKey.secret })).body.pagination.total;
    expect(total).toBe(res.body.data.added);

    const tooMany = await call(srv, 'POST', '/v1/compliance/dnc/batch', {
      key: org.apiKey.secret,
      body: { phones: [...phones, '+13125550000'] },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.details[0].field).toBe('body.phones');
  });
});

describe('deleteDncEntry', () => {
  async function entry(phone: string) {
    return (await add(owner.apiKey.secret, { phone })).body.data.id as string;
  }

  it('answers 403 to a key without a brand or platform admin role', async () => {
    const id = await entry('+14155550160');
    const key = await srv.newKey(owner.organizationId, ['compliance:delete', 'compliance:read']);
    const res = await call(srv, 'DELETE', `/v1/compliance/dnc/${id}`, { key: key.secret });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    const roleOnly = await srv.newKey(owner.organizationId, ['role:brand_admin']);
    expect((await call(srv, 'DELETE', `/v1/compliance/dnc/${id}`, { key: roleOnly.secret })).status).toBe(403);
  });

  for (const role of ['role:brand_admin', 'role:platform_admin']) {
    it(`removes the entry with ${role}; a second delete answers 404`, async () => {
      const id = await entry(role === 'role:brand_admin' ? '+14155550161' : '+14155550162');
      const key = await srv.newKey(owner.organizationId, ['compliance:delete', role]);
      const res = await call(srv, 'DELETE', `/v1/compliance/dnc/${id}`, { key: key.secret });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, id });
      expect((await call(srv, 'DELETE', `/v1/compliance/dnc/${id}`, { key: key.secret })).status).toBe(404);
      const list = await call(srv, 'GET', '/v1/compliance/dnc', { key: owner.apiKey.secret });
      expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(id);
    });
  }

  it('answers 404 for another organization’s entry and leaves it listed', async () => {
    const id = await entry('+14155550163');
    const res = await call(srv, 'DELETE', `/v1/compliance/dnc/${id}`, { key: other.apiKey.secret });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    const list = await call(srv, 'GET', '/v1/compliance/dnc?search=4155550163', { key: owner.apiKey.secret });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
  });
});
