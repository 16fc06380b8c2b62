// Analytics section background jobs: the message-rollup compaction, the asynchronous export, and the scheduled-report
// runner. Every 5 minutes it looks for active reports whose nextRunAt has come (system handle, across
// organizations) and runs each for its organization (tenantFor): the report's CSV files go to the object store and
// its email to the recipients (src/domain/analytics/report-runs.ts).
import type { Tenant } from '../domain/tenant.ts';
import type { ExportJob } from '../domain/analytics/exports.ts';
import type { AppContext } from '../app-context.ts';
import type { JobDefinition } from './job-definition.ts';
import { QUEUES } from './queue-names.ts';

/** Reports run per tick at most; the rest wait for the next tick. */
const REPORTS_PER_TICK = 50;

/**
 * Runs the due reports; returns the keys of the files written. One report's failure (its email refused, the SMTP
 * server unreachable) does not stop the others; it leaves that report due and fails the job at the end, so pg-boss
 * retries it (and the next tick would find it due anyway).
 */
export async function runDueReports(app: AppContext, now = new Date()): Promise<string[]> {
  const [{ tenantFor }, { dueScheduledReports }, { recordFailedRun, runScheduledReport }] = await Promise.all([
    import('../domain/tenant.ts'),
    import('../domain/analytics/reports.ts'),
    import('../domain/analytics/report-runs.ts'),
  ]);
  const keys: string[] = [];
  const failed: unknown[] = [];
  for (const due of await dueScheduledReports(app.db, now, REPORTS_PER_TICK)) {
    let tenant: Tenant | undefined;
    try {
      tenant = await tenantFor(app, due.organization_id);
      const run = await runScheduledReport(tenant, app, due.id, now);
      if (!run) continue;
      keys.push(...run.keys);
      const where = run.delivery.via === 'smtp' ? { smtp: run.delivery.accepted } : { file: run.delivery.path };
      app.log.info(
        { reportId: due.id, organizationId: due.organization_id, ...where },
        run.delivery.via === 'smtp' ? 'scheduled report sent' : 'scheduled report written as .eml (no SMTP_URL)',
      );
    } catch (err) {
      const retry = tenant ? await recordFailedRun(tenant, due.id, now).catch(() => undefined) : undefined;
      app.log.warn(
        { err, reportId: due.id, organizationId: due.organization_id, failures: retry?.send_failures, retryAt: retry?.retry_at },
        'scheduled report not sent; it stays due and is retried after a backoff',
      );
      failed.push(err);
    }
  }
  if (failed.length > 0) throw new AggregateError(failed, `${failed.length} scheduled report(s) not sent`);
  return keys;
}

const scheduledReports: JobDefinition = {
  queue: QUEUES.analyticsScheduledReports,
  schedule: { cron: '*/5 * * * *' },
  queueOptions: { retryLimit: 2, retryDelay: 30, expireInSeconds: 10 * 60 },
  run: async (_data, app) => {
    await runDueReports(app);
  },
};

// Every minute: the message rollup's pending deltas (appended by the trigger on messages) are folded into it.
// Answers are exact whether or not it has run (queries add the pending deltas); it keeps that addition small.
const rollupCompact: JobDefinition = {
  queue: QUEUES.analyticsRollupCompact,
  schedule: { cron: '* * * * *' },
  queueOptions: { retryLimit: 1, retryDelay: 10, expireInSeconds: 5 * 60 },
  run: async (_data, app) => {
    const { compactMessageRollup } = await import('../domain/analytics/figures.ts');
    await compactMessageRollup(app.db);
  },
};

// An asynchronous export (POST /v1/analytics/export without `Accept: text/csv`): writes the CSV to the object store
// and marks the export complete, or failed (recorded; the download answers 500 EXPORT_FAILED). Not retried: a
// failure is the export's answer.
const exportJob: JobDefinition = {
  queue: QUEUES.analyticsExport,
  queueOptions: { retryLimit: 0, expireInSeconds: 30 * 60 },
  run: async (data, app) => {
    const job = data as ExportJob;
    const [{ tenantFor }, { runExport }] = await Promise.all([import('../domain/tenant.ts'), import('../domain/analytics/exports.ts')]);
    await runExport(await tenantFor(app, job.organizationId), app, job.exportId);
  },
};

export const analyticsJobs: JobDefinition[] = [scheduledReports, rollupCompact, exportJob];
