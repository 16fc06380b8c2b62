// Benchmark (d): CSV import of a generated ~10 MB file (~150,000 rows) through the real import path — the
// upload-time checks and job row with the stored file (as POST /v1/contacts/import does), then the worker
// function runContactImport — next to a plain COPY of the same rows (as the import stored them, the COPY text
// built beforehand, so only PostgreSQL's work is timed): once into a table without indexes (the wire and the
// heap alone), and once into `contacts` itself for another organization, paying what every contact write pays
// (its nine indexes, two of them GIN, and the organization foreign key). The goal is measured against the latter.
import pino from 'pino';
import { sql } from 'kysely';
import type { AppContext } from '../src/app-context.ts';
import { copyField, copyRow, inCopyTransaction } from '../src/db/copy.ts';
import { createDb } from '../src/db/database.ts';
import { insertImportJob, getImportJob } from '../src/db/queries/contacts/imports.ts';
import { readHeader, resolveColumns } from '../src/domain/contacts/import.ts';
import { runImportJob as runContactImport } from '../src/domain/contacts/import-worker.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Linus', 'Radia', 'Ken', 'Dennis', 'Katherine', 'Tim', 'Hedy', 'Niklaus', 'Sophie', 'Guido', 'Anita'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'McCarthy', 'Hamilton', 'Torvalds', 'Perlman', 'Thompson', 'Ritchie', 'Johnson', 'Berners-Lee', 'Lamarr', 'Wirth', 'Wilson', 'van Rossum', 'Borg'];
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
    const line = String(Math.floor(n / 800) * 37 % 10000).padStart(4, '0');
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

export type ImportBenchResult = {
  bytes: number;
  rows: number;
  importSeconds: number;
  reimportSeconds: number;
  imported: number;
  errors: number;
  reimportSkipped: number;
  /** COPY into a table without indexes. */
  plainSeconds: number;
  /** COPY into contacts (another organization): same indexes and foreign key as the import's writes. */
  indexedSeconds: number;
};

export async function benchContactImport(url: string, rows = 150_000): Promise<ImportBenchResult> {
  const { db, pool } = createDb(url, 4);
  try {
    const org = await createOrganization(db, loadDocument(), 'Import bench org');
    const app = { db, pool, log: pino({ level: 'silent' }) } as unknown as AppContext;
    const csv = generateCsv(rows);

    const runImport = async () => {
      const t0 = performance.now();
      const columns = resolveColumns(await readHeader(csv), undefined);
      const job = await insertImportJob(db, org.organizationId, { fileName: 'bench.csv', columns, defaultCountry: 'US', tagIds: [], actor: org.apiKey.id, data: csv });
      await runContactImport(app, { organizationId: org.organizationId, jobId: job.id });
      const seconds = (performance.now() - t0) / 1000;
      const done = (await getImportJob(db, org.organizationId, job.id))!;
      if (done.status !== 'completed' || done.processed_rows !== rows) throw new Error(`import bench: job ended ${done.status} (${done.error}), ${done.processed_rows}/${rows} rows`);
      return { seconds, done };
    };
    const first = await runImport();
    const again = await runImport(); // the same file: every valid row matches an existing contact

    // Baseline: the same valid rows (as the import stored them) in one plain COPY.
    const stored = await db.selectFrom('contacts').select(['phone', 'phone_country', 'name', 'consent_type', 'attributes']).where('organization_id', '=', org.organizationId).execute();
    const other = await createOrganization(db, loadDocument(), 'Import bench baseline org');
    const text = stored.map((r) =>
      copyRow([other.organizationId, r.phone, copyField(r.phone_country), copyField(r.name), r.consent_type, copyField(JSON.stringify(r.attributes))]),
    );
    const load = async (table: string) => {
      const t0 = performance.now();
      await inCopyTransaction(pool, (_tx, copy) => copy(`copy ${table} (organization_id, phone, phone_country, name, consent_type, attributes) from stdin`, text));
      return (performance.now() - t0) / 1000;
    };
    await sql`create table bench_plain (organization_id uuid, phone text, phone_country text, name text, consent_type text, attributes jsonb)`.execute(db);
    const plainSeconds = await load('bench_plain');
    const indexedSeconds = await load('contacts');
    await sql`drop table bench_plain`.execute(db);

    return {
      bytes: csv.length,
      rows,
      importSeconds: first.seconds,
      reimportSeconds: again.seconds,
      imported: first.done.imported_rows,
      errors: first.done.error_count,
      reimportSkipped: again.done.skipped_rows,
      plainSeconds,
      indexedSeconds,
    };
  } finally {
    await db.destroy();
  }
}
