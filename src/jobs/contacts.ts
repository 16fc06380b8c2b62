// Contacts section background jobs (imports, bulk tagging). Both workers catch their own failures and record
// them on the job row; a crashed worker's job is re-delivered by pg-boss and resumes where it stood.
import type { JobDefinition } from './job-definition.ts';
import { BULK_TAG_QUEUE, runBulkTagJob, type BulkTagJobData } from '../domain/contacts/bulk-tag.ts';
import { IMPORT_QUEUE, type ImportJobData } from '../domain/contacts/import-request.ts';
import { runContactImport } from '../domain/contacts/csv-import.ts';

const importJob: JobDefinition<ImportJobData> = {
  queue: IMPORT_QUEUE,
  run: (data, app) => runContactImport(app, data),
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60 },
};

const bulkTagJob: JobDefinition<BulkTagJobData> = {
  queue: BULK_TAG_QUEUE,
  run: (data, app) => runBulkTagJob(app, data),
  queueOptions: { retryLimit: 2, retryDelay: 5, expireInSeconds: 15 * 60 },
};

export const contactJobs: JobDefinition[] = [importJob, bulkTagJob] as JobDefinition[];
