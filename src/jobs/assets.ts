// Assets section background jobs: processing an uploaded or derived asset (variants by sharp).
import type { ProcessJobData } from '../domain/assets/assets.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const processAsset: JobDefinition<ProcessJobData> = {
  queue: QUEUES.assetProcess,
  run: async (data, app) => (await import('../domain/assets/processing.ts')).runProcessJob(app, data),
  queueOptions: { retryLimit: 3, retryDelay: 10, retryBackoff: true, expireInSeconds: 5 * 60 },
  concurrency: 2,
};

export const assetJobs: JobDefinition[] = [processAsset] as JobDefinition[];
