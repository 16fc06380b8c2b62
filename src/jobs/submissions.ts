// Submissions section background jobs: one registry review step per job (src/domain/submissions/review.ts).
// Each step queues the next one `SANDBOX_REGISTRY_STEP_MS` later; nothing waits in memory.
import { inTransaction } from '../db/database.ts';
import type { ReviewJob } from '../domain/submissions/registrations.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const review: JobDefinition<ReviewJob> = {
  queue: QUEUES.submissionReview,
  queueOptions: { retryLimit: 5, retryDelay: 5, retryBackoff: true },
  async run(data, app) {
    const [{ tenantFor }, { advanceReview }] = await Promise.all([
      import('../domain/tenant.ts'),
      import('../domain/submissions/review.ts'),
    ]);
    const tenant = await tenantFor(app, data.organizationId);
    await inTransaction(tenant.db, (tx) => advanceReview(tx, app, data));
  },
};

export const submissionJobs: JobDefinition[] = [review as JobDefinition];
