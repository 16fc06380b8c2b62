// contacts_org_rcs_created_idx holds only contacts whose RCS capability is known (migration 0065): an import's
// contacts, unknown until a lookup, cost it nothing, and the contact list's `rcsCap=true|false` (newest first)
// still reads it.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contactPageQuery } from '../src/db/queries/contacts/contacts.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

const indexSize = async () =>
  Number(
    (await sql<{ bytes: string }>`select pg_relation_size('contacts_org_rcs_created_idx')::text as bytes`.execute(srv.context.db)).rows[0]!
      .bytes,
  );

async function importCsv(key: string, csv: string) {
  const body = new FormData();
  body.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
  const res = await call(srv, 'POST', '/v1/contacts/import', { key, rawBody: body });
  expect(res.status, res.text).toBe(202);
  let job = res.body;
  for (let i = 0; i < 300 && !['completed', 'failed'].includes(job.status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await call(srv, 'GET', `/v1/contacts/import/${res.body.jobId}`, { key })).body;
  }
  expect(job.status, JSON.stringify(job)).toBe('completed');
  return job;
}

it('an import adds no entry for its contacts (capability unknown); the rcsCap list filters still read the index', async () => {
  const o = await srv.newOrg('RCS index org');
  const key = o.apiKey.secret;
  const rows = Array.from({ length: 5000 }, (_, i) => `+1415555${String(i).padStart(4, '0')},Contact ${i}`);
  const before = await indexSize();
  const job = await importCsv(key, ['phone,name', ...rows].join('\n'));
  expect(job.importedRows).toBe(5000);
  // 5,000 entries would take ~60 pages (the full index grew ~480 KB here); other test files running meanwhile
  // may add a few contacts of known capability.
  expect((await indexSize()) - before).toBeLessThan(64 * 1024);

  // A few contacts of known capability, newest last: the filters answer them in creation order.
  const { db } = srv.context;
  await sql`update contacts set rcs_capable = (right(phone, 1) = '0'), rcs_checked_at = now()
            where organization_id = ${o.organizationId} and right(phone, 2) in ('10', '11', '20')`.execute(db);
  await sql`analyze contacts`.execute(db);
  const count = async (query: string) =>
    (await call(srv, 'GET', `/v1/contacts?${query}&limit=100&sortBy=phone&sortOrder=asc`, { key })).body.data.map(
      (c: { phone: string }) => c.phone,
    ).length;
  expect(await count('rcsCap=true')).toBe(100); // 50 ending 10 and 50 ending 20 … of 5,000: 100
  expect(await count('rcsCap=false')).toBe(50);

  // The list's statement, as the handler builds it, plans an index scan of the partial index for either value.
  const tenantDb = (await tenantFor(srv.context, o.organizationId)).db;
  for (const rcsCap of [true, false]) {
    const q = contactPageQuery(tenantDb, o.organizationId, { rcsCap, sortBy: 'createdAt', sortOrder: 'desc' }, { limit: 20, offset: 0 });
    const compiled = q.compile();
    const plan = await db.connection().execute(async (c) => {
      await sql`set enable_seqscan = off`.execute(c);
      try {
        const { rows } = await c.executeQuery<{ 'QUERY PLAN': string }>({
          ...compiled,
          sql: `explain ${compiled.sql}`,
        });
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await sql`reset enable_seqscan`.execute(c);
      }
    });
    expect(plan, plan).toMatch(/Index Scan using contacts_org_rcs_created_idx/);
  }
});
