// The bulk tag worker: chunks from where the job stands, each chunk committed together with the job's progress
// (a re-delivered job resumes after it); a tag deleted meanwhile is no longer added.
import type { AppContext } from '../../app-context.ts';
import { inTransaction } from '../../db/database.ts';
import * as jobs from '../../db/queries/contacts/bulk-tag-jobs.ts';
import { existingTagIds, tagContactsSet } from '../../db/queries/contacts/tags.ts';
import { tenantFor } from '../tenant.ts';
import type { BulkTagJobData } from './bulk-tag.ts';
import { MAX_TAGS_PER_CONTACT } from './tags.ts';

const CHUNK = 5000;

/** Runs (or resumes) a bulk tag job, for its organization (a tenant bound to it); a failure is recorded on the job. */
export async function runBulkTagJob(app: Pick<AppContext, 'db' | 'log'>, data: BulkTagJobData): Promise<void> {
  const { db, organizationId: orgId } = await tenantFor(app, data.organizationId);
  const { jobId } = data;
  const job = await jobs.startBulkTagJob(db, orgId, jobId);
  if (!job) return; // already ended (or swept)
  try {
    for (let at = job.processed; at < job.contact_ids.length; at += CHUNK) {
      const chunk = job.contact_ids.slice(at, at + CHUNK);
      await inTransaction(db, async (tx) => {
        const tagIds = [...(await existingTagIds(tx, orgId, job.tag_ids))];
        if (tagIds.length === 0) throw new Error('every tag of the job has been deleted');
        await jobs.addBulkTagProgress(tx, orgId, jobId, await tagContactsSet(tx, orgId, chunk, tagIds, MAX_TAGS_PER_CONTACT));
      });
    }
    await jobs.finishBulkTagJob(db, orgId, jobId, null);
  } catch (error) {
    app.log.error({ err: error, jobId }, 'bulk tag job failed');
    await jobs.finishBulkTagJob(db, orgId, jobId, `Bulk tagging stopped: ${(error as Error).message}`);
  }
}
