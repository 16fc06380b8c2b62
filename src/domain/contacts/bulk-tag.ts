// Bulk tagging and untagging. Tagging up to SYNC_BULK_TAG_MAX distinct contacts is one set-based statement,
// answered synchronously. More: a job row plus a pg-boss job, enqueued in the same transaction; the worker
// (bulk-tag-worker.ts) runs the same statement over chunks of ids. Untagging is always synchronous.
import { fromKysely } from 'pg-boss';
import { inTransaction } from '../../db/database.ts';
import * as jobs from '../../db/queries/contacts/bulk-tag-jobs.ts';
import { tagContactsSet, untagContactsSet, type BulkTagCounts } from '../../db/queries/contacts/tags.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { found } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { MAX_TAGS_PER_CONTACT, requireTags } from './tags.ts';

const BULK_TAG_QUEUE = QUEUES.contactBulkTag;
/** Largest request answered synchronously (documented on POST /v1/contacts/bulk/tag). */
const SYNC_BULK_TAG_MAX = 1000;

export type BulkTagJobData = { organizationId: string; jobId: string };
export type BulkTagOutcome = { kind: 'done'; counts: BulkTagCounts } | { kind: 'queued'; job: jobs.BulkTagJobRow };

type BulkTagRequest = { tagIds: string[]; contactIds: string[] };

export async function tagContacts(tenant: Tenant, services: Services, body: BulkTagRequest): Promise<BulkTagOutcome> {
  const orgId = tenant.organizationId;
  const contactIds = distinctIds(body.contactIds);
  if (contactIds.length <= SYNC_BULK_TAG_MAX) {
    const counts = await inTransaction(tenant.db, async (tx) => {
      const tagIds = await requireTags(tx, orgId, body.tagIds, 'body.tagIds');
      return tagContactsSet(tx, orgId, contactIds, tagIds, MAX_TAGS_PER_CONTACT);
    });
    return { kind: 'done', counts };
  }
  const queue = services.queue;
  if (!queue) throw new Error('bulk tagging of more than 1,000 contacts needs the job queue');
  const job = await inTransaction(tenant.db, async (tx) => {
    const tagIds = await requireTags(tx, orgId, body.tagIds, 'body.tagIds');
    const row = await jobs.insertBulkTagJob(tx, orgId, tagIds, contactIds);
    await queue.send(BULK_TAG_QUEUE, { organizationId: orgId, jobId: row.id } satisfies BulkTagJobData, { db: fromKysely(tx) });
    return row;
  });
  return { kind: 'queued', job };
}

/** Removes the tags from the contacts; answers the number of distinct contacts that lost one. */
export function untagContacts(tenant: Tenant, body: BulkTagRequest): Promise<number> {
  const orgId = tenant.organizationId;
  const contactIds = distinctIds(body.contactIds);
  return inTransaction(tenant.db, async (tx) => {
    const tagIds = await requireTags(tx, orgId, body.tagIds, 'body.tagIds');
    return untagContactsSet(tx, orgId, contactIds, tagIds);
  });
}

export async function getBulkTagJob(tenant: Tenant, jobId: string): Promise<jobs.BulkTagJobSummary> {
  return found(await jobs.getBulkTagJob(tenant.db, tenant.organizationId, jobId), 'Bulk tag job');
}

function distinctIds(ids: string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}
