// SQL for contact imports (POST /v1/contacts/import): the job with its stored upload, and the statements of one
// batch — new contacts COPY'd straight into contacts, tag links and consent entries; rows of existing contacts
// COPY'd into a temporary staging table, then merged by one set-based statement; never one statement per row.
// Job records are kept 7 days after they end; older ones are swept when the organization starts a new import.
//
// Where a batch's database time goes (issue 38, bench part d, pg_walinspect over a COPY of the bench's rows: 148,501
// contacts, 184,502 tag links, 99,000 consent entries, ~460 MB of WAL): the indexes and foreign keys, not the rows.
// B-tree leaf inserts 179 MB (1.94 million: eight B-trees on contacts, two on contact_tags, four on consent_events),
// B-tree splits 58 MB, the two GIN indexes' pending-list appends (fastupdate) 112 MB and their merges 42 MB, the
// heap 58 MB, the tag links' key checks' row locks 6 MB; full-page images 16 MB (3.5%): wal_compression, which
// compresses only those, would save little. The trigram index alone writes ~700 B per contact and costs ~1.5-2 s of
// the contacts COPY's ~6 s of backend CPU; it serves the list's search. Two batches write at once; sampling
// pg_stat_activity every 20 ms during the bench's import (2 runs) found 1.55-1.6 of the two backends on CPU on
// average, ~0.13 waiting for the worker's next statement and ~0.02 on locks: the time is the work itself.
// perf over the two batch backends (DWARF call graphs, 2026-11-29, ids drawn by the worker): COPY is 97% of their CPU;
// index inserts 58% (the B-trees 34%, the GINs 21%, of which merging their pending lists 10.5%), the foreign keys'
// per-row checks 29% (one SPI query each, its executor start-up ~10% and row lock ~9%: ~616,000 checks, contacts and
// consent entries → organizations, links → contacts and → tags), reading the COPY text 7%, extending the files 7%.
// Drawing the ids with time_ordered_uuid() had been ~5% more (OpenSSL per id): timeOrderedIds, in the worker.
// Looked at and kept, for whoever looks next (one index or setting at a time, same COPY):
// - fastupdate off on the trigram index: the COPY's CPU ~3x (6 → 17-21 s). A larger gin_pending_list_limit or
//   work_mem for the batch, or merging the pending list once per batch (gin_clean_pending_list): within the noise
//   (±0.5 s); a large pending list left behind would also be read by every search until vacuum merges it, and the
//   next ordinary insert past the limit (an API request) would merge all of it. Measured again 2026-11-29 (both GINs
//   at a 2 GB limit, one gin_clean_pending_list after the import, 3 alternating imports each): WAL 2,906 → 2,865
//   B/row, CPU within the noise.
// - What each index and key costs (issue 38; the same COPY of the bench's rows with one index or key dropped in a
//   rolled-back transaction, backend CPU, median of 3 alternating rounds at load 3-9, so ±0.3 s): contacts
//   ~6 s in all, of which the trigram index ~1.6 s, the attributes GIN ~0.8 s, each B-tree ~0.3-0.5 s, the key
//   to organizations ~0.6 s; tag links ~2.3-2.6 s, of which the key to contacts ~0.8 s and to tags ~0.7 s (one
//   SPI lookup and row lock per link, whatever the order: links COPY'd sorted by tag cost the same); consent
//   entries ~1.4 s, the key to organizations ~0.2 s. With the worker's ~2.5 s (csv-parse ~0.4 s, the rest spread
//   over validation, the COPY text and the garbage collector) an import costs ~11.5 s of CPU: on two cores no
//   less than ~5.8 s while these indexes and keys stay.
// - Dropped: the descending name index (migration 0060); the ascending one gives both sorts (contacts.ts,
//   byNameDescending). Made partial: contacts_org_rcs_created_idx holds only known RCS capabilities (migration 0065),
//   which an imported contact never has.
// - Kept: contacts_org_rcs_idx (see migration 0034). Measured again with contacts_org_id_idx (0054) present, at
//   1,000,000 contacts: the list's total count 98 → 215 ms without it (797 → 17,778 buffers: a sequential scan),
//   with rcsCap 49 → 176 ms. contacts_org_id_idx serves the blast audience's slices (keyset by id within one
//   organization; the primary key alone walks every organization's contacts). The trigram index serves the
//   documented search (any substring of the name or the phone). consent_events' four B-trees: the key, the
//   contact's and the phone's history, and the date ranges of the compliance reports and analytics.
//   contact_tags' two: by contact (the key) and by tag (filters, counts).
import { sql, type Selectable } from 'kysely';
import { copyField, copyRow, type CopyIn } from '../../copy.ts';
import { inTransaction, type Db } from '../../database.ts';
import type { AttributeValue, ContactImportJobsTable, ImportColumn, ImportRowError } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { isUniqueViolation } from '../../errors.ts';
import { CONTACT_PHONE_UNIQUE } from './contacts.ts';
import { timeOrderedIds } from '../../../lib/time-ordered-ids.ts';

export type ImportJobRow = Selectable<ContactImportJobsTable>;

const RETENTION = sql<Date>`now() - interval '7 days'`;

// ---- the job ----

export async function insertImportJob(
  db: TenantDb,
  orgId: string,
  job: {
    fileName: string | null;
    columns: ImportColumn[];
    defaultCountry: string | null;
    tagIds: string[];
    actor: string | null;
    data: Buffer;
  },
): Promise<ImportJobRow> {
  await tenant(db.deleteFrom('contact_import_jobs'), orgId).where('completed_at', '<', RETENTION).execute();
  const row = await db
    .insertInto('contact_import_jobs')
    .values({
      organization_id: orgId,
      file_name: job.fileName,
      columns: JSON.stringify(job.columns),
      default_country: job.defaultCountry,
      tag_ids: job.tagIds,
      actor: job.actor,
      total_rows: null,
      error: null,
      started_at: null,
      completed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .insertInto('contact_import_files')
    .values({ job_id: row.id, organization_id: orgId, data: job.data, size: job.data.length })
    .execute();
  return row;
}

export function getImportJob(db: TenantDb, orgId: string, id: string): Promise<ImportJobRow | undefined> {
  return tenant(db.selectFrom('contact_import_jobs'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Claims the job for a run: queued (or processing, when a crashed run is re-delivered) → processing. */
export function startImportJob(db: TenantDb, orgId: string, id: string): Promise<ImportJobRow | undefined> {
  return tenant(db.updateTable('contact_import_jobs'), orgId)
    .set({ status: 'processing', started_at: sql`coalesce(started_at, now())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

export async function importFileOf(db: TenantDb, orgId: string, jobId: string): Promise<Buffer | undefined> {
  const row = await tenant(db.selectFrom('contact_import_files'), orgId).select('data').where('job_id', '=', jobId).executeTakeFirst();
  return row?.data;
}

export type ImportProgress = {
  imported: number;
  updated: number;
  skipped: number;
  errorCount: number;
  /** Errors to append to the stored list (the caller keeps it to the first 1,000). */
  errors: ImportRowError[];
  linesDone: number;
};

/** Adds one committed batch's outcome (same transaction as the batch, so a resumed run never counts twice). */
export async function addImportProgress(db: TenantDb, orgId: string, id: string, p: ImportProgress): Promise<void> {
  await tenant(db.updateTable('contact_import_jobs'), orgId)
    .set((eb) => ({
      imported_rows: eb('imported_rows', '+', p.imported),
      updated_rows: eb('updated_rows', '+', p.updated),
      skipped_rows: eb('skipped_rows', '+', p.skipped),
      error_count: eb('error_count', '+', p.errorCount),
      processed_rows: eb('processed_rows', '+', p.imported + p.updated + p.skipped + p.errorCount),
      errors: sql<string>`errors || ${JSON.stringify(p.errors)}::jsonb`,
      lines_done: p.linesDone,
    }))
    .where('id', '=', id)
    .execute();
}

/** Ends the job and drops its stored upload, at once; answers the ended job (undefined if it is gone). */
export function finishImportJob(
  db: TenantDb,
  orgId: string,
  id: string,
  end: { totalRows: number | null; error: string | null },
): Promise<ImportJobRow | undefined> {
  return inTransaction(db, async (tx) => {
    const job = await tenant(tx.updateTable('contact_import_jobs'), orgId)
      .set({ status: end.error ? 'failed' : 'completed', error: end.error, total_rows: end.totalRows, completed_at: sql`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    await tenant(tx.deleteFrom('contact_import_files'), orgId).where('job_id', '=', id).execute();
    return job;
  });
}

// ---- one batch ----

export type ExistingContact = {
  id: string;
  phone: string;
  name: string | null;
  time_zone: string | null;
  consent_type: string;
  attributes: Record<string, AttributeValue>;
  tag_ids: string[];
};

/** The organization's contacts with these phones, with their tags, locked until the batch commits. */
export async function lockContactsByPhone(db: TenantDb, orgId: string, phones: string[]): Promise<ExistingContact[]> {
  if (phones.length === 0) return [];
  const { rows } = await sql<ExistingContact>`
    select c.id, c.phone, c.name, c.time_zone, c.consent_type, c.attributes,
           array(select ct.tag_id from contact_tags ct where ct.contact_id = c.id) as tag_ids
    from contacts c
    where c.organization_id = ${orgId} and c.phone = any(${phones}::text[])
    for update of c`.execute(db);
  return rows;
}

type UpsertRow = {
  phone: string;
  country: string | null;
  name: string | null;
  timeZone: string | null;
  consentType: string;
  attributes: Record<string, AttributeValue>;
};

/** A planned write: the merged values, the tags to link, and whether the consent type changes (an audit entry). */
export type StagedRow = UpsertRow & { newTagIds: string[]; consentChanged: boolean };

// System handle: COPY into the import's temporary staging table: touches no tenant table.
/**
 * Fills the batch's staging table (temporary, dropped at commit; emptied when a retry round fills it again) with
 * one COPY. Must run on the connection of `copy`, in its transaction.
 */
export async function stageRows(db: Db, copy: CopyIn, rows: StagedRow[]): Promise<void> {
  await sql`
    create temporary table if not exists import_stage (
      phone text not null, country text, name text, time_zone text, consent_type text not null, attributes jsonb not null,
      new_tag_ids uuid[] not null, consent_changed boolean not null
    ) on commit drop`.execute(db);
  await sql`truncate import_stage`.execute(db);
  await copy(
    'copy import_stage from stdin',
    rows.map((r) => copyRow([contactFields(r), `{${r.newTagIds.join(',')}}`, r.consentChanged ? 't' : 'f'])),
  );
}

/**
 * A row's contact columns as one run of tab-separated COPY fields (phone, country, name, time zone, consent type,
 * attributes as JSON), taken by copyRow as one field: no array per row to spread into the row's own.
 */
function contactFields(r: StagedRow): string {
  return `${copyField(r.phone)}\t${copyField(r.country)}\t${copyField(r.name)}\t${copyField(r.timeZone)}\t${copyField(r.consentType)}\t${copyField(JSON.stringify(r.attributes))}`;
}

/**
 * Contacts that did not exist when the batch locked its phones, written straight into their tables: the contacts
 * with ids drawn beforehand (timeOrderedIds, in the layout of time_ordered_uuid(), the column's default), their tag
 * links and their CONSENT_UPDATED entries (source IMPORT), one COPY each. The same rows as mergeStagedRows stores for new contacts, without its
 * staging table, conflict checks and joins (7.8 → 6.9 s of database CPU for the bench's 150,000 rows). Under a
 * savepoint: when someone else has inserted one of the phones since the lock (a unique violation), nothing of it
 * is kept and false is returned, so the caller merges these rows instead. Must run on the connection of `copy`.
 */
export async function copyNewContacts(
  db: TenantDb,
  copy: CopyIn,
  orgId: string,
  rows: StagedRow[],
  actor: string | null,
): Promise<boolean> {
  if (rows.length === 0) return true;
  // The consent entries' ids are drawn here too: left to the column's default (time_ordered_uuid(), volatile),
  // PostgreSQL's COPY inserts the table's rows one by one instead of in multi-row batches (copyfrom.c), which cost
  // the bench's 99,000 entries a heap WAL record each (96,800 Heap/INSERT records, pg_walinspect). Drawn in this
  // process, in the same layout: PostgreSQL's time_ordered_uuid() costs ~5 µs of backend CPU an id.
  let entries = 0;
  for (const r of rows) if (r.consentChanged) entries++;
  const ids = timeOrderedIds(rows.length + entries);
  let entryId = rows.length; // contacts take the first ids, entries the rest, in the order they are written
  const links: string[] = [];
  const consent: string[] = [];
  const contacts = rows.map((r, i) => {
    const id = ids[i]!;
    for (const tagId of r.newTagIds) links.push(copyRow([orgId, id, tagId]));
    if (r.consentChanged)
      consent.push(
        copyRow([ids[entryId++]!, orgId, id, copyField(r.phone), 'CONSENT_UPDATED', 'IMPORT', copyField(r.consentType), copyField(actor)]),
      );
    return copyRow([id, orgId, contactFields(r)]);
  });
  await sql`savepoint import_new_contacts`.execute(db);
  try {
    await copy('copy contacts (id, organization_id, phone, phone_country, name, time_zone, consent_type, attributes) from stdin', contacts);
  } catch (error) {
    if (!isUniqueViolation(error, CONTACT_PHONE_UNIQUE)) throw error;
    await sql`rollback to savepoint import_new_contacts`.execute(db);
    return false;
  }
  if (links.length) await copy('copy contact_tags (organization_id, contact_id, tag_id) from stdin', links);
  if (consent.length)
    await copy('copy consent_events (id, organization_id, contact_id, phone, action, source, consent_type, actor) from stdin', consent);
  await sql`release savepoint import_new_contacts`.execute(db);
  return true;
}

export type MergeOutcome = { inserted: number; updated: number; missing: string[] };

/**
 * The staged rows merged in one statement: new contacts inserted, existing ones updated, their new tag links and
 * CONSENT_UPDATED audit entries (source IMPORT) added. Only contacts locked by lockContactsByPhone (`lockedIds`)
 * may be updated: a phone inserted by someone else since then is left alone and reported in `missing` (the
 * caller retries it as an existing contact).
 */
export async function mergeStagedRows(db: TenantDb, orgId: string, lockedIds: string[], actor: string | null): Promise<MergeOutcome> {
  const { rows } = await sql<{ inserted: number; updated: number; missing: string[] }>`
    with written as (
      insert into contacts as c (organization_id, phone, phone_country, name, time_zone, consent_type, attributes)
      select ${orgId}, s.phone, s.country, s.name, s.time_zone, s.consent_type, s.attributes from import_stage s
      on conflict (organization_id, phone) do update
        set name = excluded.name, time_zone = excluded.time_zone, consent_type = excluded.consent_type,
            attributes = excluded.attributes, updated_at = now()
        where c.id = any(${lockedIds}::uuid[])
      returning c.id, c.phone, (c.xmax = 0) as inserted
    ), links as (
      insert into contact_tags (organization_id, contact_id, tag_id)
      select ${orgId}, w.id, t.tag_id from written w join import_stage s on s.phone = w.phone cross join unnest(s.new_tag_ids) as t(tag_id)
      on conflict (contact_id, tag_id) do nothing
    ), audit as (
      insert into consent_events (organization_id, contact_id, phone, action, source, consent_type, actor)
      select ${orgId}, w.id, w.phone, 'CONSENT_UPDATED', 'IMPORT', s.consent_type, ${actor}
      from written w join import_stage s on s.phone = w.phone
      where s.consent_changed
    )
    select (select count(*) from written where inserted)::int as inserted,
           (select count(*) from written where not inserted)::int as updated,
           array(select s.phone from import_stage s where s.phone not in (select w.phone from written w)) as missing`.execute(db);
  const row = rows[0]!;
  return { inserted: row.inserted, updated: row.updated, missing: row.missing };
}
