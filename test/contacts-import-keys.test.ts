// An import batch skips PostgreSQL's per-row foreign-key checks where the database role may (skipRowKeyChecks,
// src/db/key-checks.ts) because it locks every row it refers to itself. These tests hold it to that: the same file
// gives the same rows with and without the checks, a tag deleted while a batch reads it leaves no link behind, the
// setting ends with the batch's transaction, and the tables written that way carry no trigger that replica mode
// would silence besides the foreign keys' own.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { AppContext } from '../src/app-context.ts';
import { createDb } from '../src/db/database.ts';
import { skipRowKeyChecks } from '../src/db/key-checks.ts';
import { insertImportJob } from '../src/db/queries/contacts/imports.ts';
import { runImportJob } from '../src/domain/contacts/import-worker.ts';
import { resolveColumns } from '../src/domain/contacts/import.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { untilWaitingOnLock } from './support/wait.ts';

/** The tables an import batch writes (the staging table is temporary and has no keys). */
const WRITTEN = ['contacts', 'tags', 'contact_tags', 'consent_events', 'contact_import_jobs'];

const CSV = [
  'phone,name,tags,tier,consentType',
  '+14155550801,Ada,vip;news,gold,MARKETING',
  '+14155550802,Grace,vip,,TRANSACTIONAL',
  '+14155550803,Alan,,silver,',
  'nope,Bad,,,',
  '+14155550801,Again,,,',
].join('\n');

let srv: TestServer;
/** A login role that is not a superuser, as a managed database's often is. */
const role = `import_plain_${randomBytes(4).toString('hex')}`;
let plain: ReturnType<typeof createDb>;

beforeAll(async () => {
  srv = await startTestServer();
  await sql.raw(`create role ${role} login password 'plain'`).execute(srv.context.db);
  await sql
    .raw(`grant usage on schema public to ${role}; grant select, insert, update, delete on all tables in schema public to ${role}`)
    .execute(srv.context.db);
  const url = new URL(inject('databaseUrl'));
  url.username = role;
  url.password = 'plain';
  plain = createDb(url.toString(), 3);
});
afterAll(async () => {
  await plain?.db.destroy();
  await sql.raw(`drop owned by ${role}; drop role ${role}`).execute(srv.context.db);
  await srv.close();
});

async function runImport(app: Pick<AppContext, 'db' | 'pool' | 'log' | 'queue'>, orgId: string, csv: string) {
  const job = await insertImportJob(srv.context.db, orgId, {
    fileName: 'keys.csv',
    columns: resolveColumns(csv.slice(0, csv.indexOf('\n')).split(','), undefined),
    defaultCountry: 'US',
    tagIds: [],
    actor: null,
    data: Buffer.from(csv),
  });
  await runImportJob(app, { organizationId: orgId, jobId: job.id });
  return job.id;
}

/** What an import stored for the organization, without ids or times. */
async function stored(orgId: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select c.phone, c.name, c.consent_type, c.attributes,
           array(select t.name from contact_tags ct join tags t on t.id = ct.tag_id where ct.contact_id = c.id order by t.name) as tags,
           array(select e.consent_type from consent_events e where e.contact_id = c.id and e.source = 'IMPORT') as consent
    from contacts c where c.organization_id = ${orgId} order by c.phone`.execute(srv.context.db);
  const job = (
    await sql<Record<string, unknown>>`
    select status, imported_rows, updated_rows, error_count, jsonb_path_query_array(errors, '$[*].code') as codes
    from contact_import_jobs where organization_id = ${orgId}`.execute(srv.context.db)
  ).rows;
  return { rows, job };
}

it('skips the per-row key checks only where the role may, and stores the same rows either way', async () => {
  // Whether the role may is what the database says, and the setting ends with the transaction.
  const asked = async (db: typeof plain.db) => {
    const o = await srv.newOrg('Key checks probe org');
    const within = await db
      .transaction()
      .execute(async (tx) => [
        await skipRowKeyChecks(tx, o.organizationId),
        (await sql<{ r: string }>`select current_setting('session_replication_role') as r`.execute(tx)).rows[0]!.r,
      ]);
    const after = (await sql<{ r: string }>`select current_setting('session_replication_role') as r`.execute(db)).rows[0]!.r;
    return [...within, after];
  };
  expect(await asked(srv.context.db)).toEqual([true, 'replica', 'origin']);
  expect(await asked(plain.db)).toEqual([false, 'origin', 'origin']);

  const skipped = await srv.newOrg('Import without row checks');
  const checked = await srv.newOrg('Import with row checks');
  await runImport(srv.context, skipped.organizationId, CSV);
  await runImport({ ...plain, log: srv.context.log, queue: srv.context.queue }, checked.organizationId, CSV);
  const a = await stored(skipped.organizationId);
  expect(a.job).toEqual([
    { status: 'completed', imported_rows: 3, updated_rows: 0, error_count: 2, codes: ['INVALID_PHONE', 'DUPLICATE_IN_FILE'] },
  ]);
  expect(a.rows.map((r) => [r.phone, r.tags, r.consent])).toEqual([
    ['+14155550801', ['news', 'vip'], ['MARKETING']],
    ['+14155550802', ['vip'], ['TRANSACTIONAL']],
    ['+14155550803', [], []],
  ]);
  expect(await stored(checked.organizationId)).toEqual(a);
});

it('leaves no link to a tag deleted while a batch reads it: the batch waits for the delete, then creates the tag anew', async () => {
  const o = await srv.newOrg('Import tag race org');
  const { rows } = await sql<{
    id: string;
  }>`insert into tags (organization_id, name) values (${o.organizationId}, 'vip') returning id`.execute(srv.context.db);
  const doomed = rows[0]!.id;
  const other = await srv.context.pool.connect();
  try {
    await other.query('begin');
    await other.query('delete from tags where id = $1', [doomed]);
    const run = runImport(srv.context, o.organizationId, 'phone,tags\n+14155550811,vip\n+14155550812,vip\n');
    // The batch's locking read of its tags waits on the deleted row; once the delete commits it finds no tag.
    await untilWaitingOnLock(srv.context.db, '%from "tags"%', 'the import to wait on the deleted tag');
    await other.query('commit');
    await run;
  } finally {
    other.release();
  }
  const { rows: links } = await sql<{ tag_id: string; name: string | null }>`
    select ct.tag_id, t.name from contact_tags ct left join tags t on t.id = ct.tag_id
    where ct.organization_id = ${o.organizationId}`.execute(srv.context.db);
  expect(links).toHaveLength(2);
  for (const link of links) expect(link).toMatchObject({ name: 'vip' });
  expect(links.map((l) => l.tag_id)).not.toContain(doomed);
});

it('writes under replica mode only to tables whose triggers are all foreign keys’ (replica mode silences any other)', async () => {
  const { rows } = await sql<{ table: string; trigger: string }>`
    select c.relname as table, t.tgname as trigger from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where c.relname = any(${WRITTEN}) and c.relnamespace = 'public'::regnamespace
      and not exists (select from pg_constraint k where k.oid = t.tgconstraint and k.contype = 'f')
    order by 1, 2`.execute(srv.context.db);
  expect(rows).toEqual([]);
});
