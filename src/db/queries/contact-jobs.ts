// SQL for the Contacts section's asynchronous jobs: bulk tag jobs and contact import jobs (with their stored
// uploads). Job records are kept 7 days after they end; older ones are swept when the organization starts a new
// job of the same kind.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { ContactBulkTagJobsTable, ContactImportJobsTable, ImportColumn, ImportRowError } from '../tables/contacts.ts';
import { tenant } from '../tenant.ts';
import type { BulkTagCounts } from './tags.ts';

export type BulkTagJobRow = Selectable<ContactBulkTagJobsTable>;
export type ImportJobRow = Selectable<ContactImportJobsTable>;

const RETENTION = sql<Date>`now() - interval '7 days'`;

// ---- bulk tag jobs ----

export async function insertBulkTagJob(db: Db, orgId: string, tagIds: string[], contactIds: string[]): Promise<BulkTagJobRow> {
  await tenant(db.deleteFrom('contact_bulk_tag_jobs'), orgId).where('completed_at', '<', RETENTION).execute();
  return db
    .insertInto('contact_bulk_tag_jobs')
    .values({ organization_id: orgId, tag_ids: tagIds, contact_ids: contactIds, total: contactIds.length, error: null, started_at: null, completed_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The job as shown to clients (without its id list). */
export function getBulkTagJob(db: Db, orgId: string, id: string) {
  return tenant(db.selectFrom('contact_bulk_tag_jobs'), orgId)
    .select(['id', 'status', 'tag_ids', 'total', 'processed', 'tagged', 'already_tagged', 'not_found', 'failed', 'error', 'created_at', 'completed_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Claims the job for a run: queued (or running, when a crashed run is re-delivered) → running. */
export function startBulkTagJob(db: Db, orgId: string, id: string): Promise<BulkTagJobRow | undefined> {
  return tenant(db.updateTable('contact_bulk_tag_jobs'), orgId)
    .set({ status: 'running', started_at: sql`coalesce(started_at, now())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

export async function addBulkTagProgress(db: Db, orgId: string, id: string, c: BulkTagCounts): Promise<void> {
  await tenant(db.updateTable('contact_bulk_tag_jobs'), orgId)
    .set((eb) => ({
      processed: eb('processed', '+', c.tagged + c.alreadyTagged + c.notFound + c.failed),
      tagged: eb('tagged', '+', c.tagged),
      already_tagged: eb('already_tagged', '+', c.alreadyTagged),
      not_found: eb('not_found', '+', c.notFound),
      failed: eb('failed', '+', c.failed),
    }))
    .where('id', '=', id)
    .execute();
}

/** Ends the job. A failure counts the contacts not reached as failed, so the counts still add up to total. */
export async function finishBulkTagJob(db: Db, orgId: string, id: string, error: string | null): Promise<void> {
  await tenant(db.updateTable('contact_bulk_tag_jobs'), orgId)
    .set((eb) => ({
      status: error ? 'failed' : 'completed',
      error,
      completed_at: sql`now()`,
      ...(error ? { failed: sql`failed + (total - processed)`, processed: eb.ref('total') } : {}),
    }))
    .where('id', '=', id)
    .execute();
}

// ---- import jobs ----

export async function insertImportJob(
  db: Db,
  orgId: string,
  job: { fileName: string | null; columns: ImportColumn[]; defaultCountry: string | null; tagIds: string[]; actor: string | null; data: Buffer },
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
  await db.insertInto('contact_import_files').values({ job_id: row.id, organization_id: orgId, data: job.data, size: job.data.length }).execute();
  return row;
}

export function getImportJob(db: Db, orgId: string, id: string): Promise<ImportJobRow | undefined> {
  return tenant(db.selectFrom('contact_import_jobs'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Claims the job for a run: queued (or processing, when a crashed run is re-delivered) → processing. */
export function startImportJob(db: Db, orgId: string, id: string): Promise<ImportJobRow | undefined> {
  return tenant(db.updateTable('contact_import_jobs'), orgId)
    .set({ status: 'processing', started_at: sql`coalesce(started_at, now())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

export async function importFileOf(db: Db, orgId: string, jobId: string): Promise<Buffer | undefined> {
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
export async function addImportProgress(db: Db, orgId: string, id: string, p: ImportProgress): Promise<void> {
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

/** Ends the job and drops its stored upload. */
export async function finishImportJob(db: Db, orgId: string, id: string, end: { totalRows: number | null; error: string | null }): Promise<void> {
  await tenant(db.updateTable('contact_import_jobs'), orgId)
    .set({ status: end.error ? 'failed' : 'completed', error: end.error, total_rows: end.totalRows, completed_at: sql`now()` })
    .where('id', '=', id)
    .execute();
  await tenant(db.deleteFrom('contact_import_files'), orgId).where('job_id', '=', id).execute();
}
