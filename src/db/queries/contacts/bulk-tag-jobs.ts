// SQL for bulk tag jobs (POST /v1/contacts/bulk/tag above the synchronous maximum). Job records are kept 7 days
// after they end; older ones are swept when the organization starts a new job.
import { sql, type Selectable } from 'kysely';
import type { ContactBulkTagJobsTable } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { BulkTagCounts } from './tags.ts';

export type BulkTagJobRow = Selectable<ContactBulkTagJobsTable>;
/** The job as shown to clients (without its id list). */
export type BulkTagJobSummary = Omit<BulkTagJobRow, 'organization_id' | 'contact_ids' | 'started_at'>;

const RETENTION = sql<Date>`now() - interval '7 days'`;

export async function insertBulkTagJob(db: TenantDb, orgId: string, tagIds: string[], contactIds: string[]): Promise<BulkTagJobRow> {
  await tenant(db.deleteFrom('contact_bulk_tag_jobs'), orgId).where('completed_at', '<', RETENTION).execute();
  return db
    .insertInto('contact_bulk_tag_jobs')
    .values({
      organization_id: orgId,
      tag_ids: tagIds,
      contact_ids: contactIds,
      total: contactIds.length,
      error: null,
      started_at: null,
      completed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The job as shown to clients (without its id list). */
export function getBulkTagJob(db: TenantDb, orgId: string, id: string): Promise<BulkTagJobSummary | undefined> {
  return tenant(db.selectFrom('contact_bulk_tag_jobs'), orgId)
    .select([
      'id',
      'status',
      'tag_ids',
      'total',
      'processed',
      'tagged',
      'already_tagged',
      'not_found',
      'failed',
      'error',
      'created_at',
      'completed_at',
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Claims the job for a run: queued (or running, when a crashed run is re-delivered) → running. */
export function startBulkTagJob(db: TenantDb, orgId: string, id: string): Promise<BulkTagJobRow | undefined> {
  return tenant(db.updateTable('contact_bulk_tag_jobs'), orgId)
    .set({ status: 'running', started_at: sql`coalesce(started_at, now())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

export async function addBulkTagProgress(db: TenantDb, orgId: string, id: string, c: BulkTagCounts): Promise<void> {
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
export async function finishBulkTagJob(db: TenantDb, orgId: string, id: string, error: string | null): Promise<void> {
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
