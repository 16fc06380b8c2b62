// Contacts section background jobs (imports, bulk tagging). Each acts for one organization, through a tenant
// bound to it (tenantFor). Both workers catch their own failures and record them on the job row; a crashed
// worker's job is re-delivered by pg-boss and resumes where it stood.
import { runBulkTagJob } from '../domain/contacts/bulk-tag-worker.ts';
import { BULK_TAG_QUEUE, type BulkTagJobData } from '../domain/contacts/bulk-tag.ts';
import { runImportJob } from '../domain/contacts/import-worker.ts';
import { IMPORT_QUEUE, type ImportJobData } from '../domain/contacts/import.ts';
import type { JobDefinition } from './job-definition.ts';

const importJob: JobDefinition<ImportJobData> = {
  queue: IMPORT_QUEUE,
  run: (data, app) => runImportJob(app, data),
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60 },
};

const bulkTagJob: JobDefinition<BulkTagJobData> = {
  queue: BULK_TAG_QUEUE,
  run: (data, app) => runBulkTagJob(app, data),
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60 },
};

export const contactJobs: JobDefinition[] = [importJob, bulkTagJob] as JobDefinition[];
