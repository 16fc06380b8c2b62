// A scheduled report's run (the scheduler job, src/jobs/analytics.ts), in the transaction that locked the report:
// 1. the report's period (weekly: the 7 days before the run day; monthly: the previous calendar month);
// 2. one CSV per dataset streamed to the object store under `analytics-reports/<org>/<report>/<run day>/<dataset>.csv`
//    (deterministic keys: a retried run rewrites the same files);
// 3. one email to the recipients (src/lib/mail.ts: SMTP_URL, or an .eml file under DATA_DIR/outbox): the period's
//    overview figures in the body and the CSVs attached while they total at most ATTACHMENT_LIMIT_BYTES; a larger
//    CSV is linked instead, by a signed download link valid LINK_TTL_MS (an export row pointing at the stored file,
//    so GET /v1/analytics/export/{id}/download serves it);
// 4. lastRunAt, lastSentAt and the next run recorded.
// A failed send throws before the commit: nothing is recorded, the report stays due, and the job's retry (or the
// next tick) runs it again for the same period. Delivery is at least once: a commit failing after the SMTP server
// accepted the message would send it again.
import { Readable } from 'node:stream';
import { inTransaction } from '../../db/database.ts';
import { finishExport, insertExport } from '../../db/queries/analytics/exports.ts';
import { rollupTotals } from '../../db/queries/analytics/rollups.ts';
import { findReport, recordReportFailure, updateReport } from '../../db/queries/analytics/reports.ts';
import { sendMail, type MailAttachment, type MailDelivery } from '../../lib/mail.ts';
import { MAX_SIGNED_URL_TTL_MS } from '../../lib/signed-urls.ts';
import { storeFor } from '../../lib/storage/index.ts';
import { toMoney } from '../messaging/pricing.ts';
import type { Services, Tenant } from '../tenant.ts';
import { datasetCsv } from './datasets.ts';
import { downloadUrlOf } from './exports.ts';
import { isoDay, periodOf, type Period } from './figures.ts';
import { nextRunAfter } from './reports.ts';

const DAY_MS = 86_400_000;
/** Attachments of one email at most (many mail servers refuse messages above 10–25 MB once encoded). */
export const ATTACHMENT_LIMIT_BYTES = 5 * 1024 * 1024;
/** After a refused send the report waits 5 minutes, then twice as long after each further refusal, at most 6 hours. */
const REPORT_RETRY_BACKOFF = { baseMs: 5 * 60_000, capMs: 6 * 3600_000 };

/** Records a run that failed (its transaction rolled back: nothing sent, nothing recorded) and when to try again. */
export function recordFailedRun(tenant: Tenant, reportId: string, now = new Date()) {
  return recordReportFailure(tenant.db, tenant.organizationId, reportId, now, REPORT_RETRY_BACKOFF);
}
/** How long a link to a CSV too large to attach works: a week (the longest a signed link may live). */
const LINK_TTL_MS = MAX_SIGNED_URL_TTL_MS;

/** The period a run on `runAt` covers. */
export function reportPeriod(frequency: string, runAt: Date): Period {
  const day = new Date(`${isoDay(runAt)}T00:00:00Z`);
  if (frequency === 'weekly') {
    return periodOf({ startDate: isoDay(new Date(day.getTime() - 7 * DAY_MS)), endDate: isoDay(new Date(day.getTime() - DAY_MS)) });
  }
  const first = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() - 1, 1));
  const last = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 0));
  return periodOf({ startDate: isoDay(first), endDate: isoDay(last) });
}

export type ReportRun = { keys: string[]; delivery: MailDelivery; recipients: string[] };

type StoredCsv = { dataset: string; key: string; bytes: number; rows: number };

function emailText(
  name: string,
  period: Period,
  totals: Awaited<ReturnType<typeof rollupTotals>>,
  files: StoredCsv[],
  links: Map<string, string>,
): string {
  const lines = [
    `${name}: ${period.startDate} to ${period.endDate} (UTC)`,
    '',
    `Messages sent: ${totals.sent}`,
    `Delivered: ${totals.delivered}`,
    `Read: ${totals.read}`,
    `Failed: ${totals.failed}`,
    `Received: ${totals.received}`,
    `Fallbacks to SMS/MMS: ${totals.fallback}`,
    `Cost: ${toMoney(totals.costUnits).amount} USD`,
    '',
  ];
  for (const f of files) {
    const link = links.get(f.dataset);
    lines.push(
      link
        ? `${f.dataset}.csv (${f.rows} rows, too large to attach; link valid ${LINK_TTL_MS / DAY_MS} days): ${link}`
        : `${f.dataset}.csv (${f.rows} rows): attached`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Runs one due report: writes its files, sends its email and moves nextRunAt past `now`. Null when the report is
 * gone, inactive or no longer due (another worker ran it). A send failure throws and records nothing.
 */
export async function runScheduledReport(
  tenant: Tenant,
  services: Pick<Services, 'config'>,
  reportId: string,
  now = new Date(),
): Promise<ReportRun | null> {
  const store = storeFor(services.config);
  return inTransaction(tenant.db, async (tx) => {
    const report = await findReport(tx, tenant.organizationId, reportId, true);
    if (!report || !report.active || !report.next_run_at || report.next_run_at > now) return null;
    const runAt = report.next_run_at;
    const period = reportPeriod(report.frequency, runAt);
    const prefix = `analytics-reports/${tenant.organizationId}/${report.id}/${isoDay(runAt)}`;
    const scoped: Tenant = { ...tenant, db: tx as unknown as Tenant['db'] };

    const files: StoredCsv[] = [];
    for (const dataset of report.datasets) {
      const csv = datasetCsv(scoped, dataset, period);
      const key = `${prefix}/${dataset}.csv`;
      const bytes = await store.putStream(key, csv.chunks, 'text/csv; charset=utf-8');
      files.push({ dataset, key, bytes, rows: csv.rows() });
    }

    // Attach in the report's order while the budget lasts; link the rest.
    const attachments: MailAttachment[] = [];
    const links = new Map<string, string>();
    let budget = ATTACHMENT_LIMIT_BYTES;
    for (const f of files) {
      if (f.bytes <= budget) {
        budget -= f.bytes;
        const content = await store.get(f.key);
        if (!content) throw new Error(`report file ${f.key} is missing from the object store`);
        attachments.push({ filename: `${f.dataset}.csv`, content, contentType: 'text/csv; charset=utf-8' });
      } else {
        const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
        const row = await insertExport(tx, tenant.organizationId, {
          type: f.dataset,
          startDate: period.startDate,
          endDate: period.endDate,
          filters: {},
          createdAt: now,
          expiresAt,
        });
        await finishExport(tx, tenant.organizationId, row.id, { status: 'complete', storageKey: f.key });
        links.set(f.dataset, downloadUrlOf(services, tenant.organizationId, row.id, expiresAt));
      }
    }

    const totals = await rollupTotals(tx, tenant.organizationId, { from: period.from, to: period.to });
    let delivery: MailDelivery;
    try {
      delivery = await sendMail(
        services.config.mail,
        {
          to: report.recipients,
          subject: `${report.name}: ${period.startDate} to ${period.endDate}`,
          text: emailText(report.name, period, totals, files, links),
          attachments,
        },
        `${isoDay(runAt)}-${report.id}`,
      );
    } finally {
      // A send that failed before reading them leaves the files open.
      for (const a of attachments) if (a.content instanceof Readable) a.content.destroy();
    }

    const schedule = { frequency: report.frequency, dayOfWeek: report.day_of_week, dayOfMonth: report.day_of_month, hour: report.hour };
    await updateReport(tx, tenant.organizationId, report.id, {
      last_run_at: now,
      last_run_key: prefix,
      last_sent_at: new Date(),
      next_run_at: nextRunAfter(schedule, now > runAt ? now : runAt),
      send_failures: 0,
      retry_at: null,
    });
    return { keys: files.map((f) => f.key), delivery, recipients: report.recipients };
  });
}
