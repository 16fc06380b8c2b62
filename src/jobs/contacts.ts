// Contacts section background jobs (imports, bulk tagging, the saved-segment purge). Imports and bulk tagging
// act for one organization, through a tenant bound to it (tenantFor); both catch their own failures and record
// them on the job row, and a crashed worker's job is re-delivered by pg-boss and resumes where it stood. The
// purge crosses organizations (system handle).
import type { BulkTagJobData } from '../domain/contacts/bulk-tag.ts';
import type { ImportJobData } from '../domain/contacts/import.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const importJob: JobDefinition<ImportJobData> = {
  queue: QUEUES.contactImport,
  run: async (data, app) => (await import('../domain/contacts/import-worker.ts')).runImportJob(app, data),
  // A killed worker's import is run again (resuming where it stood) once its heartbeat is 30 s stale, not after the
  // 15-minute expiry. 30 s, not dispatch's 10: a live import refreshes it between its COPY batches, which hold the
  // event loop for a moment each, and a live import must never be handed to a second worker.
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60, heartbeatSeconds: 30 },
};

const bulkTagJob: JobDefinition<BulkTagJobData> = {
  queue: QUEUES.contactBulkTag,
  run: async (data, app) => (await import('../domain/contacts/bulk-tag-worker.ts')).runBulkTagJob(app, data),
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60 },
};

const segmentPurge: JobDefinition = {
  queue: QUEUES.segmentPurge,
  // Daily: a saved segment is kept SEGMENT_TTL_DAYS (90) after its last use and gone within the day after.
  schedule: { cron: '41 3 * * *' },
  run: async (_data, app) => {
    const { purgeExpiredSegments } = await import('../domain/contacts/segments.ts');
    await purgeExpiredSegments(app.db);
  },
};

export const contactJobs: JobDefinition[] = [importJob, bulkTagJob, segmentPurge] as JobDefinition[];
