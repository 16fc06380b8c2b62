// A contact created by someone else while an import batch writes: the batch's new contacts go in by plain COPY
// (import-worker.ts), and a phone inserted since the batch looked is a unique violation there. The batch must
// then fall back to the merge, which updates that contact as an existing one, and lose nothing else.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertImportJob } from '../src/db/queries/contacts/imports.ts';
import { runImportJob } from '../src/domain/contacts/import-worker.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { resolveColumns } from '../src/domain/contacts/import.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { untilWaitingOnLock } from './support/wait.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

it('updates a contact created while its batch was being written, and still creates the others', async () => {
  const o = await srv.newOrg('Import race org');
  const csv = 'phone,name,tags,consentType\n+14155550941,From file,vip,MARKETING\n+14155550942,Second,vip;news,\n';
  const job = await insertImportJob((await tenantFor(srv.context, o.organizationId)).db, o.organizationId, {
    fileName: 'race.csv',
    columns: resolveColumns(['phone', 'name', 'tags', 'consentType'], undefined),
    defaultCountry: null,
    tagIds: [],
    actor: null,
    data: Buffer.from(csv),
  });
  // Someone else inserts the first phone and has not committed when the import looks for it.
  const other = await srv.context.pool.connect();
  try {
    await other.query('begin');
    await other.query(`insert into contacts (organization_id, phone, name) values ($1, '+14155550941', 'Created meanwhile')`, [
      o.organizationId,
    ]);
    const run = runImportJob(srv.context, { organizationId: o.organizationId, jobId: job.id });
    // Wait until the import's COPY waits on that row, then commit it: the COPY fails on the unique key.
    await untilWaitingOnLock(srv.context.db, 'copy contacts%', 'the import to wait on the uncommitted contact');
    await other.query('commit');
    await run;
  } finally {
    other.release();
  }
  const key = o.apiKey.secret;
  const done = (await call(srv, 'GET', `/v1/contacts/import/${job.id}`, { key })).body;
  expect(done).toMatchObject({ status: 'completed', processedRows: 2, importedRows: 1, updatedRows: 1, errorCount: 0 });
  const contacts = (await call(srv, 'GET', '/v1/contacts?limit=10&sortBy=phone&sortOrder=asc', { key })).body.data;
  const tags = new Map(
    ((await call(srv, 'GET', '/v1/tags', { key })).body.data as Array<{ id: string; name: string }>).map((t) => [t.id, t.name]),
  );
  type Shown = { phone: string; name: string; tags: string[]; tcpa: { consentType: string } };
  expect(contacts.map((c: Shown) => [c.phone, c.name, c.tags.map((t) => tags.get(t)).sort(), c.tcpa.consentType])).toEqual([
    ['+14155550941', 'From file', ['vip'], 'MARKETING'],
    ['+14155550942', 'Second', ['news', 'vip'], 'NONE'],
  ]);
  const { rows: audit } = await srv.context.pool.query(
    `select phone, consent_type from consent_events where organization_id = $1 and source = 'IMPORT'`,
    [o.organizationId],
  );
  expect(audit).toEqual([{ phone: '+14155550941', consent_type: 'MARKETING' }]);
});
