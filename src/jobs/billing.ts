// Billing background job: the monthly pass-through fees (src/domain/submissions/fees.ts). Every hour it charges
// the current billing month of every REGISTERED campaign and ACTIVE purchased number across organizations, so a
// month is charged on its anniversary (or within the hour after the workers come back); the ledger's unique key
// makes a rerun, a retry or two workers write each month once.
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

const monthlyFees: JobDefinition = {
  queue: QUEUES.billingMonthlyFees,
  schedule: { cron: '5 * * * *' },
  queueOptions: { retryLimit: 3, retryDelay: 60, expireInSeconds: 10 * 60 },
  run: async (_data, app) => {
    const { chargeMonthlyFees } = await import('../domain/submissions/fees.ts');
    const charged = await chargeMonthlyFees(app.db);
    if (charged > 0) app.log.info({ charged }, 'monthly pass-through fees charged');
  },
};

export const billingJobs: JobDefinition[] = [monthlyFees];
