// Bulk tagging. Up to 1,000 distinct contacts: one set-based statement, answered synchronously. More: a job
// row plus a pg-boss job, enqueued in the same transaction; the worker runs the same statement over chunks
// of ids, committing each chunk together with the job's progress (a re-delivered job resumes after it).
import { QUEUES } from '../../jobs/queue-names.ts';
import { fromKysely } from 'pg-boss';
import type { AppContext } from '../../app-context.ts';
import { inTransaction } from '../../db/database.ts';
import * as jobs from '../../db/queries/contact-jobs.ts';
import { existingTagIds, tagContactsSet, type BulkTagCounts } from '../../db/queries/tags.ts';
import { requireTags } from './contacts.ts';

export const BULK_TAG_QUEUE = QUEUES.contactBulkTag;
/** Largest request answered synchronously (documented on POST /v1/contacts/bulk/tag). */
export const SYNC_BULK_TAG_MAX = 1000;
const CHUNK = 5000;

export type BulkTagJobData = { organizationId: string; jobId: string };

export type BulkTagOutcome = { kind: 'done'; counts: BulkTagCounts } | { kind: 'queued'; job: jobs.BulkTagJobRow };

export async function tagContacts(app: AppContext, orgId: string, body: { tagIds: string[]; contactIds: string[] }): Promise<BulkTagOutcome> {
  const contactIds = distinctIds(body.contactIds);
  if (contactIds.length <= SYNC_BULK_TAG_MAX) {
    const counts = await inTransaction(app.db, async (tx) => {
      const tagIds = await requireTags(tx, orgId, body.tagIds, 'body.tagIds');
      return tagContactsSet(tx, orgId, contactIds, tagIds);
    });
    return { kind: 'done', counts };
  }
  const queue = app.queue;
  if (!queue) throw new Error('bulk tagging of more than 1,000 contacts needs the job queue');
  const job = await inTransaction(app.db, async (tx) => {
    const tagIds = await requireTags(tx, orgId, body.tagIds, 'body.tagIds');
    const row = await jobs.insertBulkTagJob(tx, orgId, tagIds, contactIds);
    await queue.send(BULK_TAG_QUEUE, { organizationId: orgId, jobId: row.id } satisfies BulkTagJobData, { db: fromKysely(tx) });
    return row;
  });
  return { kind: 'queued', job };
}

/** The worker: chunks from where the job stands; a tag deleted meanwhile is no longer added. */
export async function runBulkTagJob(app: AppContext, data: BulkTagJobData): Promise<void> {
  const { organizationId: orgId, jobId } = data;
  const job = await jobs.startBulkTagJob(app.db, orgId, jobId);
  if (!job) return; // already ended (or swept)
  try {
    for (let at = job.processed; at < job.contact_ids.length; at += CHUNK) {
      const chunk = job.contact_ids.slice(at, at + CHUNK);
      await inTransaction(app.db, async (tx) => {
        const tagIds = [...(await existingTagIds(tx, orgId, job.tag_ids))];
        if (tagIds.length === 0) throw new Error('every tag of the job has been deleted');
        await jobs.addBulkTagProgress(tx, orgId, jobId, await tagContactsSet(tx, orgId, chunk, tagIds));
      });
    }
    await jobs.finishBulkTagJob(app.db, orgId, jobId, null);
  } catch (error) {
    app.log.error({ err: error, jobId }, 'bulk tag job failed');
    await jobs.finishBulkTagJob(app.db, orgId, jobId, `Bulk tagging stopped: ${(error as Error).message}`);
  }
}

function distinctIds(ids: string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}
