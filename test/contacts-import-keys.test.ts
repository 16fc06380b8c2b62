// A contact import behaves the same for every database role (issue 36): PostgreSQL checks its foreign keys row by
// row and fires every trigger, under a superuser (the embedded server's role) as under a plain login role; it
// used to switch the checks off (session_replication_role = replica) only where the role was a superuser. These
// tests hold it to that: the same file gives the same rows for both roles, a trigger on the written tables fires
// for each row under both, and a tag deleted while a batch reads it leaves no link behind.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { AppContext } from '../src/app-context.ts';
import { createDb } from '../src/db/database.ts';
import { insertImportJob } from '../src/db/queries/contacts/imports.ts';
import { runImportJob } from '../src/domain/contacts/import-worker.ts';
import { resolveColumns } from '../src/domain/contacts/import.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { untilWaitingOnLock } from './support/wait.ts';

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
  const job = await insertImportJob((await tenantFor(srv.context, orgId)).db, orgId, {
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

it('checks keys and fires triggers row by row for every role, and stores the same rows either way', async () => {
  const superuser = await srv.newOrg('Import as superuser');
  const plainOrg = await srv.newOrg('Import as plain role');
  // A probe trigger (not a foreign key's) on a written table: replica mode would silence it, as it silences the
  // per-row key checks. It counts only these two organizations' rows, so other test files do not see it.
  const orgs = `'${superuser.organizationId}', '${plainOrg.organizationId}'`;
  await sql
    .raw(
      `create table import_trigger_probe (organization_id uuid not null);
       grant insert on import_trigger_probe to ${role};
       create function import_trigger_probe() returns trigger language plpgsql as $$ begin
         if new.organization_id in (${orgs}) then insert into import_trigger_probe values (new.organization_id); end if;
         return null; end $$;
       create trigger import_trigger_probe after insert on contact_tags for each row execute function import_trigger_probe();`,
    )
    .execute(srv.context.db);
  try {
    await runImport(srv.context, superuser.organizationId, CSV);
    await runImport({ ...plain, log: srv.context.log, queue: srv.context.queue }, plainOrg.organizationId, CSV);
    const fired = await sql<{ organization_id: string; n: number }>`
      select organization_id, count(*)::int as n from import_trigger_probe group by 1`.execute(srv.context.db);
    // Three tag links each (Ada: vip, news; Grace: vip).
    expect(Object.fromEntries(fired.rows.map((r) => [r.organization_id, r.n]))).toEqual({
      [superuser.organizationId]: 3,
      [plainOrg.organizationId]: 3,
    });
  } finally {
    await sql
      .raw('drop trigger import_trigger_probe on contact_tags; drop function import_trigger_probe(); drop table import_trigger_probe')
      .execute(srv.context.db);
  }
  const a = await stored(superuser.organizationId);
  expect(a.job).toEqual([
    { status: 'completed', imported_rows: 3, updated_rows: 0, error_count: 2, codes: ['INVALID_PHONE', 'DUPLICATE_IN_FILE'] },
  ]);
  expect(a.rows.map((r) => [r.phone, r.tags, r.consent])).toEqual([
    ['+14155550801', ['news', 'vip'], ['MARKETING']],
    ['+14155550802', ['vip'], ['TRANSACTIONAL']],
    ['+14155550803', [], []],
  ]);
  expect(await stored(plainOrg.organizationId)).toEqual(a);
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
