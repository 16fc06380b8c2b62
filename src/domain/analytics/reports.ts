// Scheduled reports (/v1/analytics/reports): at most 5 per organization (active or not), weekly on dayOfWeek or
// monthly on dayOfMonth at `hour` UTC, nextRunAt recomputed on every change (null while inactive). A run (the
// scheduler job, src/jobs/analytics.ts; report-runs.ts) writes the report's CSVs to the object store and emails
// them to the recipients, then records lastSentAt.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import {
  countReports,
  deleteReport as deleteReportRow,
  findReport,
  insertReport,
  listReports as listReportRows,
  lockOrganizationReports,
  updateReport as updateReportRow,
  type ReportRow,
} from '../../db/queries/analytics/reports.ts';
import { ApiError, found, invalidField, notFound } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

export type { ReportRow };
type Schemas = components['schemas'];
export type ReportCreate = Schemas['AnalyticsReportCreateRequest'];
export type ReportUpdate = Schemas['AnalyticsReportUpdateRequest'];

const MAX_REPORTS = 5;
const DEFAULT_HOUR = 8;

type Schedule = { frequency: string; dayOfWeek: number | null; dayOfMonth: number | null; hour: number };

/** The first run strictly after `now`: the next dayOfWeek / dayOfMonth at `hour`:00 UTC. */
export function nextRunAfter(s: Schedule, now: Date): Date {
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), s.hour));
  if (s.frequency === 'weekly') {
    at.setUTCDate(at.getUTCDate() + (((s.dayOfWeek ?? 0) - at.getUTCDay() + 7) % 7));
    if (at <= now) at.setUTCDate(at.getUTCDate() + 7);
    return at;
  }
  at.setUTCDate(s.dayOfMonth ?? 1);
  if (at <= now) at.setUTCMonth(at.getUTCMonth() + 1);
  return at;
}

/** The frequency's day must be given and the other frequency's day absent (400 VALIDATION_ERROR). */
function checkDays(s: { frequency: string; dayOfWeek?: number | null; dayOfMonth?: number | null }): void {
  if (s.frequency === 'weekly') {
    if (s.dayOfWeek === undefined || s.dayOfWeek === null) throw invalidField('body.dayOfWeek', 'is required for a weekly report');
    if (s.dayOfMonth !== undefined && s.dayOfMonth !== null) throw invalidField('body.dayOfMonth', 'is not accepted for a weekly report');
  } else {
    if (s.dayOfMonth === undefined || s.dayOfMonth === null) throw invalidField('body.dayOfMonth', 'is required for a monthly report');
    if (s.dayOfWeek !== undefined && s.dayOfWeek !== null) throw invalidField('body.dayOfWeek', 'is not accepted for a monthly report');
  }
}

export function listReports(tenant: Tenant): Promise<ReportRow[]> {
  return listReportRows(tenant.db, tenant.organizationId);
}

export async function createReport(tenant: Tenant, body: ReportCreate, now = new Date()): Promise<ReportRow> {
  const b = body as ReportCreate & { dayOfWeek?: number; dayOfMonth?: number };
  checkDays(b);
  const schedule: Schedule = {
    frequency: b.frequency,
    dayOfWeek: b.dayOfWeek ?? null,
    dayOfMonth: b.dayOfMonth ?? null,
    hour: b.hour ?? DEFAULT_HOUR,
  };
  const active = b.active ?? true;
  return inTransaction(tenant.db, async (tx) => {
    await lockOrganizationReports(tx, tenant.organizationId);
    if ((await countReports(tx, tenant.organizationId)) >= MAX_REPORTS) {
      throw new ApiError(422, 'UNPROCESSABLE', `An organization has at most ${MAX_REPORTS} scheduled reports; delete one first.`);
    }
    return insertReport(tx, tenant.organizationId, {
      name: b.name,
      frequency: schedule.frequency,
      day_of_week: schedule.dayOfWeek,
      day_of_month: schedule.dayOfMonth,
      hour: schedule.hour,
      recipients: JSON.stringify(b.recipients),
      datasets: JSON.stringify(b.datasets ?? ['overview']),
      active,
      next_run_at: active ? nextRunAfter(schedule, now) : null,
      // An edit (a corrected recipient, say) is tried at the next tick, not after the refused sends' backoff.
      send_failures: 0,
      retry_at: null,
    });
  });
}

export async function updateReport(tenant: Tenant, id: string, body: ReportUpdate, now = new Date()): Promise<ReportRow> {
  return inTransaction(tenant.db, async (tx) => {
    const current = found(await findReport(tx, tenant.organizationId, id, true), 'Scheduled report');
    const frequency = body.frequency ?? current.frequency;
    const switching = frequency !== current.frequency;
    // Switching frequency clears the old day; the new one must come in the same body.
    const dayOfWeek = body.dayOfWeek !== undefined ? body.dayOfWeek : switching ? null : current.day_of_week;
    const dayOfMonth = body.dayOfMonth !== undefined ? body.dayOfMonth : switching ? null : current.day_of_month;
    checkDays({ frequency, dayOfWeek, dayOfMonth });
    const schedule: Schedule = { frequency, dayOfWeek, dayOfMonth, hour: body.hour ?? current.hour };
    const active = body.active ?? current.active;
    const row = await updateReportRow(tx, tenant.organizationId, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      frequency,
      day_of_week: dayOfWeek,
      day_of_month: dayOfMonth,
      hour: schedule.hour,
      ...(body.recipients !== undefined ? { recipients: JSON.stringify(body.recipients) } : {}),
      ...(body.datasets !== undefined ? { datasets: JSON.stringify(body.datasets) } : {}),
      active,
      next_run_at: active ? nextRunAfter(schedule, now) : null,
      // An edit (a corrected recipient, say) is tried at the next tick, not after the refused sends' backoff.
      send_failures: 0,
      retry_at: null,
    });
    return found(row, 'Scheduled report');
  });
}

export async function deleteReport(tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteReportRow(tenant.db, tenant.organizationId, id))) throw notFound('Scheduled report');
}

/** Due reports across organizations (the scheduler job; `db` is the system handle). */
export { dueReports as dueScheduledReports } from '../../db/queries/analytics/reports.ts';
