// Benchmark (d): CSV import of a generated ~10 MB file (~150,000 rows) through the real import path — the
// upload-time checks and job row with the stored file (as POST /v1/contacts/import does), then the worker
// function runContactImport — next to a plain COPY of the same rows, measured in the same run.
//
// The reference the goal is judged against (`indexedSeconds`): everything the import stored — its contacts, their
// tag links and their consent entries (CONSENT_UPDATED, source IMPORT) — COPY'd for another organization into
// the same three tables, in one transaction, with the COPY text (ids included) built beforehand, so only
// PostgreSQL's work is timed: every index, foreign key and the WAL of those tables, which any way of storing
// these rows pays. (Only contacts, as before, left out the ~185,000 links and ~99,000 consent entries the import
// also writes, and flattered the reference.) `plainSeconds` is the same COPY into three tables without indexes or
// constraints: the wire and the heap alone, for scale, not a goal.
import pino from 'pino';
import { sql } from 'kysely';
import type { AppContext } from '../src/app-context.ts';
import { copyField, copyRow, inCopyTransaction } from '../src/db/copy.ts';
import { createDb } from '../src/db/database.ts';
import { startQueue, stopQueue } from '../src/jobs/queue.ts';
import { createQueues } from '../src/jobs/workers.ts';
import { bindTenant, loadTenantTables } from '../src/db/tenant.ts';
import { insertImportJob, getImportJob } from '../src/db/queries/contacts/imports.ts';
import { readHeader, resolveColumns } from '../src/domain/contacts/import.ts';
import { runImportJob as runContactImport } from '../src/domain/contacts/import-worker.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';
import { postmasterOf, USER_HZ, watchCpu } from './process-cpu.ts';

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'John',
  'Margaret',
  'Linus',
  'Radia',
  'Ken',
  'Dennis',
  'Katherine',
  'Tim',
  'Hedy',
  'Niklaus',
  'Sophie',
  'Guido',
  'Anita',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'McCarthy',
  'Hamilton',
  'Torvalds',
  'Perlman',
  'Thompson',
  'Ritchie',
  'Johnson',
  'Berners-Lee',
  'Lamarr',
  'Wirth',
  'Wilson',
  'van Rossum',
  'Borg',
];
const CITIES = ['San Francisco', 'New York', 'Austin', 'Chicago', 'Seattle', 'Boston', 'Denver', 'Miami', 'Portland', 'Atlanta'];
const TIERS = ['gold', 'silver', 'bronze', 'platinum'];
const TAGS = ['newsletter', 'vip', 'webinar', 'trial', 'churn', 'partner', 'beta', 'events'];
const AREAS = [201, 202, 206, 212, 213, 305, 312, 347, 404, 415, 512, 617, 646, 702, 713, 718, 773, 808, 818, 917];

/** ~150,000 data rows, about 10 MB: realistic names, US numbers in mixed formats, attributes, tags; 0.5% bad phones, 0.5% repeats. */
export function generateCsv(rows: number): Buffer {
  const lines = ['phone,name,tags,city,tier,ltv,consentType'];
  for (let i = 0; i < rows; i++) {
    const area = AREAS[i % AREAS.length]!;
    const n = Math.floor(i / AREAS.length);
    const exchange = 200 + (n % 800);
    const line = String((Math.floor(n / 800) * 37) % 10000).padStart(4, '0');
    let phone = i % 3 === 0 ? `+1${area}${exchange}${line}` : i % 3 === 1 ? `(${area}) ${exchange}-${line}` : `${area}-${exchange}-${line}`;
    if (i % 200 === 7) phone = `555-01${i % 100}`;
    else if (i % 200 === 11 && i > 200) phone = lines[i - 150]!.split(',')[0]!;
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    const name = i % 50 === 0 ? `"${last}, ${first}"` : `${first} ${last}`;
    const tags = i % 4 === 0 ? '' : i % 4 === 1 ? TAGS[i % TAGS.length]! : `${TAGS[i % TAGS.length]};${TAGS[(i + 3) % TAGS.length]}`;
    const ltv = ((i * 7919) % 500000) / 100;
    const consent = i % 3 === 0 ? 'MARKETING' : i % 3 === 1 ? 'TRANSACTIONAL' : '';
    lines.push(`${phone},${name},${tags},${CITIES[i % CITIES.length]},${TIERS[i % TIERS.length]},${ltv},${consent}`);
  }
  return Buffer.from(lines.join('\n') + '\n');
}

/**
 * What one import cost, beside its wall time: CPU seconds of this process (the worker's parsing and COPY text) and
 * of the PostgreSQL server (every process of it, /proc; null elsewhere), and the WAL it wrote. On a shared machine
 * the wall time follows the other processes; these much less.
 */
type ImportCost = { nodeCpuSeconds: number; postgresCpuSeconds: number | null; walBytes: number };

export type ImportBenchResult = {
  bytes: number;
  rows: number;
  importSeconds: number;
  reimportSeconds: number;
  importCost: ImportCost;
  reimportCost: ImportCost;
  imported: number;
  errors: number;
  reimportSkipped: number;
  /** Tag links and consent entries the first import wrote, also in the reference COPY. */
  links: number;
  consentEntries: number;
  /** The reference rows COPY'd into three tables without indexes or constraints (scale only). */
  plainSeconds: number;
  /** The goal's reference: the same rows COPY'd into contacts, contact_tags and consent_events (another organization). */
  indexedSeconds: number;
  /** What the two COPY figures load, for the report's labels. */
  reference: string;
};

export async function benchContactImport(url: string, rows = 150_000): Promise<ImportBenchResult> {
  const { db, pool } = createDb(url, 4);
  // The end of an import raises its events (contact_import.completed, event triggers), which enqueue jobs: the job
  // queue is a real one, without workers (nothing is delivered during the bench).
  const queue = await startQueue(url, { workers: false });
  await createQueues(queue);
  try {
    const org = await createOrganization(db, loadDocument(), 'Import bench org');
    const app = { db, pool, queue, log: pino({ level: 'silent' }) } as unknown as AppContext;
    const csv = generateCsv(rows);

    const postmaster = await postmasterOf(db);
    const runImport = async () => {
      const wal0 = (await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(db)).rows[0]!.lsn;
      const pg = watchCpu({}, postmaster);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const columns = resolveColumns(await readHeader(csv), undefined);
      const tenantDb = bindTenant(db, org.organizationId, await loadTenantTables(db));
      const job = await insertImportJob(tenantDb, org.organizationId, {
        fileName: 'bench.csv',
        columns,
        defaultCountry: 'US',
        tagIds: [],
        actor: org.apiKey.id,
        data: csv,
      });
      await runContactImport(app, { organizationId: org.organizationId, jobId: job.id });
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const pgUsed = pg.read()?.get('PostgreSQL') ?? null;
      pg.stop();
      const wal = await sql<{ bytes: string }>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${wal0}::pg_lsn)::text as bytes`.execute(db);
      const cost: ImportCost = {
        nodeCpuSeconds: (cpu.user + cpu.system) / 1e6,
        postgresCpuSeconds: pgUsed === null ? null : pgUsed / USER_HZ,
        walBytes: Number(wal.rows[0]!.bytes),
      };
      const done = (await getImportJob(tenantDb, org.organizationId, job.id))!;
      if (done.status !== 'completed' || done.processed_rows !== rows)
        throw new Error(`import bench: job ended ${done.status} (${done.error}), ${done.processed_rows}/${rows} rows`);
      return { seconds, done, cost };
    };
    const first = await runImport();
    const again = await runImport(); // the same file: every valid row matches an existing contact

    // The reference: what the first import stored, as COPY text for another organization, built before timing.
    const org1 = org.organizationId;
    const other = await createOrganization(db, loadDocument(), 'Import bench baseline org');
    const org2 = other.organizationId;
    const stored = await db
      .selectFrom('contacts')
      .select(['id', 'phone', 'phone_country', 'name', 'time_zone', 'consent_type', 'attributes'])
      .where('organization_id', '=', org1)
      .execute();
    // Ids as the table's default makes them (time_ordered_uuid(), migration 0029), drawn before the timed COPY.
    const { rows: ids } = await sql<{ id: string }>`select time_ordered_uuid() as id from generate_series(1, ${stored.length})`.execute(db);
    const idOf = new Map(stored.map((r, i) => [r.id, ids[i]!.id]));
    const { rows: tagIds } = await sql<{ from: string; to: string }>`
      with theirs as (select id, name from tags where organization_id = ${org1}),
           ours as (insert into tags (organization_id, name) select ${org2}, name from theirs returning id, name)
      select theirs.id as from, ours.id as to from theirs join ours using (name)`.execute(db);
    const tagOf = new Map(tagIds.map((t) => [t.from, t.to]));
    const links = await db.selectFrom('contact_tags').select(['contact_id', 'tag_id']).where('organization_id', '=', org1).execute();
    const consent = await db
      .selectFrom('consent_events')
      .select(['contact_id', 'phone', 'action', 'source', 'consent_type', 'actor'])
      .where('organization_id', '=', org1)
      .where('source', '=', 'IMPORT')
      .execute();
    const text = {
      contacts: stored.map((r) =>
        copyRow([
          idOf.get(r.id)!,
          org2,
          r.phone,
          copyField(r.phone_country),
          copyField(r.name),
          copyField(r.time_zone),
          r.consent_type,
          copyField(JSON.stringify(r.attributes)),
        ]),
      ),
      links: links.map((l) => copyRow([org2, idOf.get(l.contact_id)!, tagOf.get(l.tag_id)!])),
      consent: consent.map((e) =>
        copyRow([org2, idOf.get(e.contact_id!)!, e.phone, e.action, e.source, copyField(e.consent_type), copyField(e.actor)]),
      ),
    };
    const load = async (tables: { contacts: string; links: string; consent: string }) => {
      const t0 = performance.now();
      await inCopyTransaction(pool, async (_tx, copy) => {
        await copy(
          `copy ${tables.contacts} (id, organization_id, phone, phone_country, name, time_zone, consent_type, attributes) from stdin`,
          text.contacts,
        );
        await copy(`copy ${tables.links} (organization_id, contact_id, tag_id) from stdin`, text.links);
        await copy(
          `copy ${tables.consent} (organization_id, contact_id, phone, action, source, consent_type, actor) from stdin`,
          text.consent,
        );
      });
      return (performance.now() - t0) / 1000;
    };
    await sql`create table bench_plain_contacts (id uuid, organization_id uuid, phone text, phone_country text, name text, time_zone text, consent_type text, attributes jsonb)`.execute(
      db,
    );
    await sql`create table bench_plain_links (organization_id uuid, contact_id uuid, tag_id uuid)`.execute(db);
    await sql`create table bench_plain_consent (organization_id uuid, contact_id uuid, phone text, action text, source text, consent_type text, actor text)`.execute(
      db,
    );
    const plainSeconds = await load({ contacts: 'bench_plain_contacts', links: 'bench_plain_links', consent: 'bench_plain_consent' });
    const indexedSeconds = await load({ contacts: 'contacts', links: 'contact_tags', consent: 'consent_events' });
    await sql`drop table bench_plain_contacts, bench_plain_links, bench_plain_consent`.execute(db);

    return {
      bytes: csv.length,
      rows,
      importSeconds: first.seconds,
      reimportSeconds: again.seconds,
      importCost: first.cost,
      reimportCost: again.cost,
      imported: first.done.imported_rows,
      errors: first.done.error_count,
      reimportSkipped: again.done.skipped_rows,
      links: links.length,
      consentEntries: consent.length,
      reference: `the rows the import stored (${stored.length} contacts, ${links.length} tag links, ${consent.length} consent entries), COPY'd in one transaction`,
      plainSeconds,
      indexedSeconds,
    };
  } finally {
    await stopQueue(queue);
    await db.destroy();
  }
}
