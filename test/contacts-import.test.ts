// CSV import through HTTP and the job worker: good rows imported, bad rows reported with their line numbers,
// re-imports without duplicates, header mapping, upload-time 400/404/413/415, and tenant walls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImportJob, insertImportJob } from '../src/db/queries/contacts/imports.ts';
import { runImportJob } from '../src/domain/contacts/import-worker.ts';
import { resolveColumns } from '../src/domain/contacts/import.ts';
import { MAX_TAG_NAME_CHARACTERS } from '../src/domain/contacts/attribute-limits.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  other = await srv.newOrg('Other import org');
});
afterAll(() => srv.close());

function form(csv: string | Blob, fields: Record<string, string> = {}, fileName = 'contacts.csv'): FormData {
  const f = new FormData();
  f.append('file', typeof csv === 'string' ? new Blob([csv], { type: 'text/csv' }) : csv, fileName);
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const upload = (key: string, body: FormData) => call(srv, 'POST', '/v1/contacts/import', { key, rawBody: body });

async function importCsv(key: string, csv: string, fields: Record<string, string> = {}) {
  const res = await upload(key, form(csv, fields));
  expect(res.status, res.text).toBe(202);
  expect(res.headers.get('location')).toBe(`/v1/contacts/import/${res.body.jobId}`);
  let job = res.body;
  for (let i = 0; i < 150 && !['completed', 'failed'].includes(job.status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await call(srv, 'GET', `/v1/contacts/import/${res.body.jobId}`, { key })).body;
  }
  expect(job.status, JSON.stringify(job)).toBe('completed');
  return job;
}

const contactsOf = async (key: string) => (await call(srv, 'GET', '/v1/contacts?limit=100&sortBy=phone&sortOrder=asc', { key })).body;

const GOOD_AND_BAD = [
  'phone,name,tags,loyaltyTier,consentType,timeZone',
  '+14155550301,Ada Lovelace,VIP;newsletter,gold,MARKETING,', // row 2
  '+14155550302,"King, Ada",vip,,,America/New_York', // row 3
  'not a phone,Bad Phone,,,,', // row 4
  ',No Phone,,,,', // row 5
  '+1 415 555 0301,Duplicate,,,,', // row 6 (same as row 2)
  '+14155550303,"Multi', // row 7-8: a quoted name over two lines
  'line",,,,', //
  '+14155550304,Short row', // row 9: too few columns
  '+14155550305,Bad zone,,,,Mars/Olympus', // row 10
  '+14155550306,Bad consent,,,MAYBE,', // row 11
  '',
  '+447400123456,Brit,,silver,TRANSACTIONAL,', // row 13
].join('\n');

describe('importContacts', () => {
  it('imports the good rows and reports each bad row with its line number', async () => {
    const o = await srv.newOrg('Import org');
    const key = o.apiKey.secret;
    const job = await importCsv(key, GOOD_AND_BAD);
    expect(job).toMatchObject({
      fileName: 'contacts.csv',
      totalRows: 10,
      processedRows: 10,
      importedRows: 4,
      updatedRows: 0,
      skippedRows: 0,
      errorCount: 6,
      error: null,
    });
    expect(job.errors.map((e: { row: number; code: string }) => [e.row, e.code])).toEqual([
      [4, 'INVALID_PHONE'],
      [5, 'MISSING_PHONE'],
      [6, 'DUPLICATE_IN_FILE'],
      [9, 'MALFORMED_ROW'],
      [10, 'INVALID_VALUE'],
      [11, 'INVALID_VALUE'],
    ]);
    expect(job.errors[0]).toMatchObject({ column: 'phone', value: 'not a phone', code: 'INVALID_PHONE' });
    expect(job.errors[2]).toMatchObject({ column: 'phone', value: '+1 415 555 0301', message: 'Same phone as row 2.' });

    const { data } = await contactsOf(key);
    expect(data.map((c: { phone: string }) => c.phone)).toEqual(['+14155550301', '+14155550302', '+14155550303', '+447400123456']);
    const [ada, king, multi, brit] = data;
    // Ids drawn by the worker (timeOrderedIds), time-ordered like the column's default, in the file's order.
    const ids = data.map((c: { id: string }) => c.id);
    expect(ids.map((i: string) => i[14])).toEqual(['7', '7', '7', '7']);
    expect([...ids].sort()).toEqual(ids);
    const tags = (await call(srv, 'GET', '/v1/tags', { key })).body.data;
    expect(tags.map((t: { name: string }) => t.name)).toEqual(['newsletter', 'VIP']); // created by name, 'vip' matched 'VIP'
    const id = (name: string) => tags.find((t: { name: string }) => t.name === name).id;
    expect(ada).toMatchObject({ name: 'Ada Lovelace', attributes: { loyaltyTier: 'gold' }, tcpa: { consentType: 'MARKETING' } });
    expect(ada.tags.sort()).toEqual([id('VIP'), id('newsletter')].sort());
    expect(king).toMatchObject({
      name: 'King, Ada',
      tags: [id('VIP')],
      attributes: {},
      tcpa: { timeZone: 'America/New_York', timeZoneSource: 'explicit', consentType: 'NONE' },
    });
    expect(multi.name).toBe('Multi\nline');
    expect(brit).toMatchObject({ name: 'Brit', attributes: { loyaltyTier: 'silver' }, tcpa: { consentType: 'TRANSACTIONAL' } });

    const history = (await call(srv, 'GET', `/v1/contacts/${ada.id}/consent`, { key })).body.data;
    expect(history).toEqual([
      expect.objectContaining({ action: 'CONSENT_UPDATED', source: 'IMPORT', consentType: 'MARKETING', actor: o.apiKey.id }),
    ]);
    expect(history[0].id[14]).toBe('7'); // time-ordered (migration 0034): an import's entries append to the key
  });

  it('creates no duplicates when the same file is imported again, and updates what changed', async () => {
    const o = await srv.newOrg('Re-import org');
    const key = o.apiKey.secret;
    await importCsv(key, GOOD_AND_BAD);
    const before = await contactsOf(key);
    const again = await importCsv(key, GOOD_AND_BAD);
    expect(again).toMatchObject({ totalRows: 10, importedRows: 0, updatedRows: 0, skippedRows: 4, errorCount: 6 });
    const after = await contactsOf(key);
    expect(after.pagination.total).toBe(4);
    expect(after.data).toEqual(before.data);

    // Non-empty cells overwrite, empty cells never erase, tags are added, consent changes are audited.
    const changed = await importCsv(
      key,
      ['phone,name,tags,loyaltyTier,consentType', '+14155550301,,Extra,platinum,TRANSACTIONAL', '+14155550302,,,,'].join('\n'),
    );
    expect(changed).toMatchObject({ importedRows: 0, updatedRows: 1, skippedRows: 1, errorCount: 0 });
    const ada = (await contactsOf(key)).data[0];
    expect(ada).toMatchObject({ name: 'Ada Lovelace', attributes: { loyaltyTier: 'platinum' }, tcpa: { consentType: 'TRANSACTIONAL' } });
    expect(ada.tags).toHaveLength(3);
    const history = (await call(srv, 'GET', `/v1/contacts/${ada.id}/consent`, { key })).body.data;
    expect(history.map((e: { consentType: string }) => e.consentType)).toEqual(['TRANSACTIONAL', 'MARKETING']);
  });

  it('never clears an opt-out', async () => {
    const o = await srv.newOrg('Opt-out import org');
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: o.organizationId, phone: '+14155550401', source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    await importCsv(o.apiKey.secret, 'phone,consentType\n+14155550401,MARKETING\n');
    expect((await contactsOf(o.apiKey.secret)).data[0]).toMatchObject({ optedOut: true });
  });

  it('stores cells holding backslashes, tabs, line breaks and a literal \\N exactly (rows travel as COPY text)', async () => {
    const o = await srv.newOrg('Copy escapes org');
    const name = 'Back\\slash\tTab';
    const note = 'two\nlines\r\nand \\N and "quotes" and \\t';
    const csv = `phone,name,note,city\n+14155550501,"${name}","${note.replaceAll('"', '""')}",\\N\n`;
    const job = await importCsv(o.apiKey.secret, csv);
    expect(job).toMatchObject({ importedRows: 1, errorCount: 0 });
    const [contact] = (await contactsOf(o.apiKey.secret)).data;
    expect(contact).toMatchObject({ name, attributes: { note: note.trim(), city: '\\N' } });
  });

  it('follows an explicit mapping, reads national numbers with defaultCountry, and adds tagIds to every row', async () => {
    const o = await srv.newOrg('Mapping org');
    const key = o.apiKey.secret;
    const tag = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'Imported' } })).body.data.id;
    const csv = ['Mobile,Full name,Tier,Notes', '(415) 555-0501,Grace Hopper,admiral,ignored', '415-555-0502,Alan Turing,,x'].join('\r\n');
    const job = await importCsv(key, csv, {
      mapping: JSON.stringify({ Mobile: 'phone', 'Full name': 'name', Tier: 'attribute:rank', Notes: 'ignore' }),
      defaultCountry: 'US',
      tagIds: tag,
    });
    expect(job).toMatchObject({ importedRows: 2, errorCount: 0 });
    const { data } = await contactsOf(key);
    expect(data).toEqual([
      expect.objectContaining({ phone: '+14155550501', name: 'Grace Hopper', attributes: { rank: 'admiral' }, tags: [tag] }),
      expect.objectContaining({ phone: '+14155550502', name: 'Alan Turing', attributes: {}, tags: [tag] }),
    ]);
    const noCountry = await importCsv(key, 'phone\n(415) 555-0503\n');
    expect(noCountry.errors).toEqual([expect.objectContaining({ row: 2, code: 'INVALID_PHONE' })]);
  });

  it('reads a tags cell: one name, names repeated without case (first spelling kept), a name too long, a job tag named again', async () => {
    const o = await srv.newOrg('Tags cell org');
    const key = o.apiKey.secret;
    const imported = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'Imported' } })).body.data.id;
    const long = 'x'.repeat(MAX_TAG_NAME_CHARACTERS + 1);
    const csv = [
      'phone,tags',
      '+14155550701,Solo',
      '+14155550702,"  vip ; VIP;Vip;beta "',
      `+14155550703,${long}`,
      `+14155550704,"ok;${long}"`,
      '+14155550705,imported',
      '+14155550706,',
    ].join('\n');
    const job = await importCsv(key, csv, { tagIds: imported });
    expect(job).toMatchObject({ importedRows: 4, errorCount: 2 });
    expect(job.errors).toEqual([
      expect.objectContaining({ row: 4, column: 'tags', code: 'INVALID_VALUE' }),
      expect.objectContaining({ row: 5, column: 'tags', code: 'INVALID_VALUE' }),
    ]);
    const names = new Map(
      (await call(srv, 'GET', '/v1/tags?limit=100', { key })).body.data.map((t: { id: string; name: string }) => [t.id, t.name]),
    );
    const { data } = await contactsOf(key);
    expect(data.map((c: { phone: string; tags: string[] }) => [c.phone, c.tags.map((t) => names.get(t)).sort()])).toEqual([
      ['+14155550701', ['Imported', 'Solo']],
      ['+14155550702', ['Imported', 'beta', 'vip']],
      ['+14155550705', ['Imported']],
      ['+14155550706', ['Imported']],
    ]);
  });

  it('rejects a row whose contact would carry more than 50 tags', async () => {
    const o = await srv.newOrg('Too many tags org');
    const names = Array.from({ length: 51 }, (_, i) => `t${i}`).join(';');
    const job = await importCsv(o.apiKey.secret, `phone,tags\n+14155550601,${names}\n+14155550602,ok\n`);
    expect(job).toMatchObject({ importedRows: 1, errorCount: 1 });
    expect(job.errors[0]).toMatchObject({ row: 2, code: 'TOO_MANY_TAGS' });
  });

  it('counts an existing contact’s tags when a batch tried its rows as all new first (the COPY refused)', async () => {
    const o = await srv.newOrg('Carried tags org');
    const key = o.apiKey.secret;
    const tags = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(';');
    await importCsv(key, `phone,tags\n+14155550603,${tags('t', 30)}\n`);
    // A new job's first batch COPYs its rows as new contacts; +14155550603 exists, so it is planned again against
    // that contact: 30 carried + 21 new tags is over the cap, and only the new phone is imported.
    const job = await importCsv(key, `phone,tags\n+14155550604,ok\n+14155550603,${tags('u', 21)}\n`);
    expect(job).toMatchObject({ importedRows: 1, updatedRows: 0, errorCount: 1 });
    expect(job.errors).toEqual([expect.objectContaining({ row: 3, code: 'TOO_MANY_TAGS' })]);
    const { data } = await contactsOf(key);
    expect(data.map((c: { phone: string; tags: string[] }) => [c.phone, c.tags.length])).toEqual([
      ['+14155550603', 30],
      ['+14155550604', 1],
    ]);
  });

  it('reports a row the CSV parser cannot read as MALFORMED_ROW and goes on', async () => {
    const o = await srv.newOrg('Malformed org');
    const job = await importCsv(o.apiKey.secret, 'phone,name\n+14155550711,Bad "quote" here\n+14155550712,Fine\n');
    expect(job).toMatchObject({ totalRows: 2, importedRows: 1, errorCount: 1 });
    expect(job.errors).toEqual([expect.objectContaining({ row: 2, code: 'MALFORMED_ROW', column: null })]);
  });

  it('reports a cell holding a NUL character (U+0000) as INVALID_VALUE on its line and goes on', async () => {
    const o = await srv.newOrg('NUL cell org');
    const csv = [
      'phone,name,loyaltyTier,notes',
      '+14155550721,Ada\0Lovelace,,',
      '+14155550722,Fine,gold,',
      '+14155550723,Also fine,sil\0ver,',
      '+14155550724,Ignored column,,a\0b',
    ].join('\n');
    const job = await importCsv(o.apiKey.secret, csv, {
      mapping: '{"phone":"phone","name":"name","loyaltyTier":"attribute:loyaltyTier","notes":"ignore"}',
    });
    expect(job).toMatchObject({ totalRows: 4, processedRows: 4, importedRows: 2, errorCount: 2, error: null });
    expect(job.errors).toEqual([
      {
        row: 2,
        column: 'name',
        value: 'Ada\uFFFDLovelace',
        code: 'INVALID_VALUE',
        message: 'The cell contains a NUL character (U+0000), which cannot be stored.',
      },
      expect.objectContaining({ row: 4, column: 'loyaltyTier', code: 'INVALID_VALUE' }),
    ]);
    // A NUL in an ignored column stores nothing, so the row is imported.
    expect((await contactsOf(o.apiKey.secret)).data.map((c: { name: string }) => c.name)).toEqual(['Fine', 'Ignored column']);
  });

  it('keeps the first 1,000 errors and counts them all', async () => {
    const o = await srv.newOrg('Many errors org');
    const rows = Array.from({ length: 1200 }, (_, i) => `bad${i}`);
    const job = await importCsv(o.apiKey.secret, ['phone', ...rows, '+14155550701'].join('\n'));
    expect(job).toMatchObject({ totalRows: 1201, processedRows: 1201, importedRows: 1, errorCount: 1200 });
    expect(job.errors).toHaveLength(1000);
    expect(job.errors.at(-1).row).toBe(1001);
  });

  describe('checks before the job starts (nothing imported)', () => {
    let o: Awaited<ReturnType<TestServer['newOrg']>>;
    beforeAll(async () => {
      o = await srv.newOrg('Upload checks org');
    });
    const jobs = () =>
      srv.context.db.selectFrom('contact_import_jobs').select('id').where('organization_id', '=', o.organizationId).execute();

    it('answers 413 for a body over 10 MB', async () => {
      const big = 'phone\n' + '+14155550801\n'.repeat(Math.ceil((11 * 1024 * 1024) / 13));
      const res = await upload(o.apiKey.secret, form(big));
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
      expect(await jobs()).toEqual([]);
      expect((await contactsOf(o.apiKey.secret)).data).toEqual([]);
    });

    it('accepts uploads above the general 1 MB body limit, up to 10 MB', async () => {
      const o2 = await srv.newOrg('Large upload org');
      const job = await importCsv(o2.apiKey.secret, `phone,notes\n+14155550802,${'x'.repeat(2 * 1024 * 1024)}\n`, {
        mapping: '{"phone":"phone","notes":"ignore"}',
      });
      expect(job).toMatchObject({ importedRows: 1, errorCount: 0 });
    });

    it('answers 400 naming body.file or body.mapping for a missing file, a file without phone column, a bad mapping', async () => {
      const noFile = new FormData();
      noFile.append('mapping', '{}');
      const cases: Array<[FormData, string]> = [
        [noFile, 'body.file'],
        [form(''), 'body.file'],
        [form('name,email\nAda,a@b.c\n'), 'body.file'],
        [form('phone,phone\n+14155550901,+14155550902\n'), 'body.file'],
        [form('phone,name\n', { mapping: 'not json' }), 'body.mapping'],
        [form('phone,name\n', { mapping: '["phone"]' }), 'body.mapping'],
        [form('phone,name\n', { mapping: '{"phone":"phone","Nope":"name"}' }), 'body.mapping'],
        [form('phone,name\n', { mapping: '{"phone":"phone","name":"email"}' }), 'body.mapping'],
        [form('phone,name\n', { mapping: '{"name":"name"}' }), 'body.mapping'],
        [form('phone,name\n', { defaultCountry: 'ZZ' }), 'body.defaultCountry'],
      ];
      for (const [body, field] of cases) {
        const res = await upload(o.apiKey.secret, body);
        expect(res.status, res.text).toBe(400);
        expect(res.body.code).toBe('VALIDATION_ERROR');
        expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      expect(await jobs()).toEqual([]);
    });

    it('answers 400 for a header wider than 200 columns (80,000 here) and for a NUL in the header, quickly', async () => {
      const wide = ['phone', ...Array.from({ length: 79_999 }, (_, i) => `c${i}`)].join(',');
      expect(wide.length).toBeGreaterThan(500_000);
      for (const mapping of [undefined, '{"phone":"phone"}']) {
        const res = await upload(o.apiKey.secret, form(`${wide}\n+14155550904${','.repeat(79_999)}\n`, mapping ? { mapping } : {}));
        expect(res.status, res.text).toBe(400);
        expect(res.body).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: [{ field: 'body.file', message: 'the header row has 80000 columns; at most 200' }],
        });
      }
      const atCap = ['phone', ...Array.from({ length: 199 }, (_, i) => `c${i}`)];
      expect(resolveColumns(atCap, undefined)).toHaveLength(200);
      const nul = await upload(o.apiKey.secret, form('phone,na\0me\n+14155550905,x\n'));
      expect(nul.status).toBe(400);
      expect(nul.body.details[0]).toMatchObject({ field: 'body.file', message: 'header column 2 contains a NUL character (U+0000)' });
      expect(await jobs()).toEqual([]);
      expect((await contactsOf(o.apiKey.secret)).data).toEqual([]);
    });

    it('answers 404 for an unknown tag id', async () => {
      const theirs = (await call(srv, 'POST', '/v1/tags', { key: other.apiKey.secret, body: { name: 'Not yours' } })).body.data.id;
      const res = await upload(o.apiKey.secret, form('phone\n+14155550903\n', { tagIds: theirs }));
      expect(res.status).toBe(404);
      expect(res.body.details[0].field).toBe('body.tagIds');
      expect(await jobs()).toEqual([]);
    });

    it('answers 415 for a body that is not multipart', async () => {
      const res = await call(srv, 'POST', '/v1/contacts/import', { key: o.apiKey.secret, body: { file: 'phone\n' } });
      expect(res.status).toBe(415);
    });
  });

  it('resumes a re-delivered job after the last committed batch, still reporting duplicates of earlier rows', async () => {
    const o = await srv.newOrg('Resume org');
    const csv = 'phone,name\n+14155550921,A\n+14155550922,B\nbad,C\n+14155550923,D\n+14155550921,E\n';
    const db = srv.context.db;
    const tenantDb = (await tenantFor(srv.context, o.organizationId)).db;
    const job = await insertImportJob(tenantDb, o.organizationId, {
      fileName: 'r.csv',
      columns: resolveColumns(['phone', 'name'], undefined),
      defaultCountry: null,
      tagIds: [],
      actor: null,
      data: Buffer.from(csv),
    });
    // A first run committed lines 1-3 (rows A and B), then its worker died.
    await db
      .updateTable('contact_import_jobs')
      .set({ status: 'processing', imported_rows: 2, processed_rows: 2, lines_done: 3 })
      .where('id', '=', job.id)
      .execute();
    await runImportJob(srv.context, { organizationId: o.organizationId, jobId: job.id });
    const done = (await call(srv, 'GET', `/v1/contacts/import/${job.id}`, { key: o.apiKey.secret })).body;
    expect(done).toMatchObject({ status: 'completed', totalRows: 5, processedRows: 5, importedRows: 3, errorCount: 2 });
    expect(done.errors.map((e: { row: number; code: string }) => [e.row, e.code])).toEqual([
      [4, 'INVALID_PHONE'],
      [6, 'DUPLICATE_IN_FILE'],
    ]);
    expect((await contactsOf(o.apiKey.secret)).data.map((c: { name: string }) => c.name)).toEqual(['D']); // A and B were the first run's
    expect(await db.selectFrom('contact_import_files').select('job_id').where('job_id', '=', job.id).execute()).toEqual([]);
    // A job that already ended is left alone when delivered again.
    await runImportJob(srv.context, { organizationId: o.organizationId, jobId: job.id });
    expect((await getImportJob(tenantDb, o.organizationId, job.id))!.processed_rows).toBe(5);
  });

  it("answers 404 for another organization's job", async () => {
    const o = await srv.newOrg('Job owner org');
    const job = await importCsv(o.apiKey.secret, 'phone\n+14155550911\n');
    expect((await call(srv, 'GET', `/v1/contacts/import/${job.jobId}`, { key: other.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/contacts/import/${job.jobId}`, { key: o.apiKey.secret })).status).toBe(200);
  });
});
