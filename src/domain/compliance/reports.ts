// Compliance reports: `consent` (every consent audit entry), `opt-outs` (OPT_OUT entries) and `dnc` (DNC
// entries still listed), for an inclusive range of UTC dates. The rows as JSON or CSV, the columns and the file
// name are the document's shapes (mappers.ts).
import type { ConsentEventRow } from '../../db/queries/compliance/consent.ts';
import type { DncEntryRow } from '../../db/queries/compliance/dnc.ts';
import { consentEventsBetween, dncEntriesBetween } from '../../db/queries/compliance/reports.ts';
import { invalidField, notFound } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

const REPORT_TYPES = ['consent', 'opt-outs', 'dnc'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];
const isReportType = (t: string): t is ReportType => (REPORT_TYPES as readonly string[]).includes(t);

const DEFAULT_RANGE_DAYS = 30;
const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export type ReportRange = { startDate: string; endDate: string; from: Date; to: Date };

/** A report's stored rows, oldest first, with its range. */
export type Report = { range: ReportRange } & (
  { type: 'consent'; rows: ConsentEventRow[] } | { type: 'opt-outs'; rows: ConsentEventRow[] } | { type: 'dnc'; rows: DncEntryRow[] }
);

const isoDate = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The range from the query: `endDate` defaults to today (UTC), `startDate` to 30 days before `endDate`; both
 * inclusive, at most 366 days. `from`/`to` bound `createdAt` as [from, to).
 */
export function reportRange(
  query: { startDate?: string; endDate?: string },
  now: Date,
): { ok: true; range: ReportRange } | { ok: false; field: string; message: string } {
  const end = query.endDate ? new Date(`${query.endDate}T00:00:00Z`) : new Date(`${isoDate(now)}T00:00:00Z`);
  const start = query.startDate ? new Date(`${query.startDate}T00:00:00Z`) : new Date(end.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (start > end) return { ok: false, field: 'query.startDate', message: 'must not be after endDate' };
  const days = Math.round((end.getTime() - start.getTime()) / DAY_MS) + 1;
  if (days > MAX_RANGE_DAYS)
    return { ok: false, field: 'query.startDate', message: `the range covers ${days} days; at most ${MAX_RANGE_DAYS}` };
  return { ok: true, range: { startDate: isoDate(start), endDate: isoDate(end), from: start, to: new Date(end.getTime() + DAY_MS) } };
}

/** 404 for an unknown report type, 400 for a range that is reversed or too long. */
export async function exportComplianceReport(
  tenant: Tenant,
  type: string,
  query: { startDate?: string; endDate?: string },
  now = new Date(),
): Promise<Report> {
  if (!isReportType(type)) throw notFound(`Report type "${type}"`);
  const checked = reportRange(query, now);
  if (!checked.ok) throw invalidField(checked.field, checked.message);
  const { range } = checked;
  const { db, organizationId: orgId } = tenant;
  if (type === 'dnc') return { type, range, rows: await dncEntriesBetween(db, orgId, range.from, range.to) };
  if (type === 'opt-outs') return { type, range, rows: await consentEventsBetween(db, orgId, range.from, range.to, 'OPT_OUT') };
  return { type, range, rows: await consentEventsBetween(db, orgId, range.from, range.to) };
}
