// A scheduled report's run (the scheduler job, src/jobs/analytics.ts): the report's period (weekly: the 7 days
// before the run day; monthly: the previous calendar month), one CSV per dataset written to the object store under
// `analytics-reports/<org>/<report>/<run day>/<dataset>.csv`, then lastRunAt and the next run recorded in the same
// transaction that locked the report. Keys are deterministic, so a retried run rewrites the same files.
// Not built: the email (no mail library in this server; lastSentAt stays null) and, in reports, the `messages`
// dataset (skipped; exports build it: exports.ts).
import { inTransaction } from '../../db/database.ts';
import { rollupByChannel, rollupBySender, senderNames } from '../../db/queries/analytics/rollups.ts';
import { findReport, updateReport } from '../../db/queries/analytics/reports.ts';
import { toCsv } from '../../lib/csv.ts';
import type { ObjectStore } from '../../lib/storage/index.ts';
import { toMoney } from '../conversations/pricing.ts';
import type { Tenant } from '../tenant.ts';
import { CHANNELS, getSessions, getUsage, periodOf, timeline, type Period } from './figures.ts';
import { getIntentCounts } from './intents.ts';
import { nextRunAfter } from './reports.ts';

const DAY_MS = 86_400_000;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
const METRIC_COLUMNS = ['sent', 'delivered', 'read', 'failed', 'received', 'fallback', 'cost', 'currency'] as const;
const metricCells = (s: { sent: number; delivered: number; read: number; failed: number; received: number; fallback: number; costUnits: number }) =>
  ({ sent: s.sent, delivered: s.delivered, read: s.read, failed: s.failed, received: s.received, fallback: s.fallback, cost: toMoney(s.costUnits).amount, currency: 'USD' });

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

/** The CSV of one dataset over the period, or null for a dataset not built yet. */
export async function datasetCsv(
  tenant: Tenant,
  dataset: string,
  period: Period,
  filters: { brandId?: string; campaignId?: string; senderId?: string } = {},
): Promise<string | null> {
  const f = { from: period.from, to: period.to, brandId: filters.brandId, campaignId: filters.campaignId, senderId: filters.senderId };
  switch (dataset) {
    case 'overview': {
      const points = await timeline(tenant, f, period, 'day');
      return toCsv(['date', ...METRIC_COLUMNS], points.map((p) => ({ date: isoDay(p.bucket), ...metricCells(p) })));
    }
    case 'protocols': {
      const rows = await rollupByChannel(tenant.db, tenant.organizationId, f);
      return toCsv(['channel', ...METRIC_COLUMNS], CHANNELS.map((channel) => {
        const r = rows.find((x) => x.channel === channel);
        return { channel, ...metricCells(r ?? { sent: 0, delivered: 0, read: 0, failed: 0, received: 0, fallback: 0, costUnits: 0 }) };
      }));
    }
    case 'sender-ids': {
      const rows = await rollupBySender(tenant.db, tenant.organizationId, f);
      const names = new Map((await senderNames(tenant.db, tenant.organizationId, rows.map((r) => r.senderId))).map((s) => [s.id, s.name]));
      return toCsv(['senderId', 'name', ...METRIC_COLUMNS], rows.sort((a, b) => b.sent - a.sent).map((r) => ({ senderId: r.senderId, name: names.get(r.senderId) ?? null, ...metricCells(r) })));
    }
    case 'usage': {
      const u = await getUsage(tenant, { startDate: period.startDate, endDate: period.endDate, brandId: filters.brandId, campaignId: filters.campaignId });
      return toCsv(['date', 'textSegments', 'richMessages', 'capabilityChecks', 'cost', 'currency'], u.timeline.map((p) => ({ ...p, cost: toMoney(p.costUnits).amount, currency: 'USD' })));
    }
    case 'sessions': {
      const s = await getSessions(tenant, { startDate: period.startDate, endDate: period.endDate });
      return toCsv(['date', 'sessions', 'uniqueContacts', 'inboundMessages', 'outboundMessages', 'averageDurationSeconds'], s.timeline.map((p) => ({
        date: p.key, sessions: p.figures.sessions, uniqueContacts: p.figures.uniqueContacts, inboundMessages: p.figures.inboundMessages, outboundMessages: p.figures.outboundMessages,
        averageDurationSeconds: p.figures.sessions === 0 ? 0 : Math.round((p.figures.durationSeconds / p.figures.sessions) * 10) / 10,
      })));
    }
    case 'intents': {
      const i = await getIntentCounts(tenant, { startDate: period.startDate, endDate: period.endDate });
      return toCsv(['value', 'intentId', 'label', 'taps', 'uniqueContacts'], i.intents);
    }
    default:
      return null;
  }
}

/**
 * Runs one due report: writes its files and moves nextRunAt past `now`. Nothing happens when the report is gone,
 * inactive or no longer due (another worker ran it). Returns the keys written.
 */
export async function runScheduledReport(tenant: Tenant, store: ObjectStore, reportId: string, now = new Date()): Promise<string[]> {
  return inTransaction(tenant.db, async (tx) => {
    const report = await findReport(tx, tenant.organizationId, reportId, true);
    if (!report || !report.active || !report.next_run_at || report.next_run_at > now) return [];
    const runAt = report.next_run_at;
    const period = reportPeriod(report.frequency, runAt);
    const prefix = `analytics-reports/${tenant.organizationId}/${report.id}/${isoDay(runAt)}`;
    const scoped: Tenant = { ...tenant, db: tx as unknown as Tenant['db'] };
    const keys: string[] = [];
    for (const dataset of report.datasets) {
      const csv = await datasetCsv(scoped, dataset, period);
      if (csv === null) continue;
      const key = `${prefix}/${dataset}.csv`;
      await store.put(key, Buffer.from(csv, 'utf8'), 'text/csv; charset=utf-8');
      keys.push(key);
    }
    const schedule = { frequency: report.frequency, dayOfWeek: report.day_of_week, dayOfMonth: report.day_of_month, hour: report.hour };
    await updateReport(tx, tenant.organizationId, report.id, {
      last_run_at: now,
      last_run_key: prefix,
      next_run_at: nextRunAfter(schedule, now > runAt ? now : runAt),
    });
    return keys;
  });
}
