// Assets section background jobs: processing an uploaded or derived asset (variants by sharp).
import { PROCESS_QUEUE, type ProcessJobData } from '../domain/assets/assets.ts';
import { runProcessJob } from '../domain/assets/processing.ts';
import type { JobDefinition } from './job-definition.ts';

const processAsset: JobDefinition<ProcessJobData> = {
  queue: PROCESS_QUEUE,
  run: (data, app) => runProcessJob(app, data),
  queueOptions: { retryLimit: 3, retryDelay: 10, retryBackoff: true, expireInSeconds: 5 * 60 },
  concurrency: 2,
};

export const assetJobs: JobDefinition[] = [processAsset] as JobDefinition[];
