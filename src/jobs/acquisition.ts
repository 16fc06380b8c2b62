// Acquisition background jobs: the hourly purge of public sign-ups whose 24 hours to be confirmed have passed
// (they are already ignored once expired; this only removes them). Crosses organizations (system handle).
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const pendingPurge: JobDefinition = {
  queue: QUEUES.acquisitionPendingPurge,
  schedule: { cron: '17 * * * *' },
  run: async (_data, app) => {
    const { purgeExpiredSignUps } = await import('../domain/acquisition/pending.ts');
    await purgeExpiredSignUps(app.db);
  },
};

export const acquisitionJobs: JobDefinition[] = [pendingPurge];
