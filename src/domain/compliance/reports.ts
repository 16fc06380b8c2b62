// Compliance reports: `consent` (every consent audit entry), `opt-outs` (OPT_OUT entries) and `dnc` (DNC
// entries still listed), for an inclusive range of UTC dates, as JSON rows or CSV with the same columns.
import { toConsentAuditLog } from './consent-audit-log.ts';
import type { Db } from '../../db/database.ts';
import type { ConsentEventRow } from '../../db/queries/consent.ts';
import { consentEventsBetween, dncEntriesBetween } from '../../db/queries/compliance-reports.ts';
import type { DncEntryRow } from '../../db/queries/compliance-dnc.ts';
import type { components } from '../../../generated/api.d.ts';
import { toCsv, type CsvValue } from '../../lib/csv.ts';

type Schemas = components['schemas'];
export type ConsentAuditLog = Schemas['ConsentAuditLog'];
export type ReportRow = Schemas['ComplianceConsentReportRow'] | Schemas['ComplianceOptOutReportRow'] | Schemas['ComplianceDncReportRow'];

export const REPORT_TYPES = ['consent', 'opt-outs', 'dnc'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];
export const isReportType = (t: string): t is ReportType => (REPORT_TYPES as readonly string[]).includes(t);

export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export type ReportRange = { startDate: string; endDate: string; from: Date; to: Date };

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
  if (days > MAX_RANGE_DAYS) return { ok: false, field: 'query.startDate', message: `the range covers ${days} days; at most ${MAX_RANGE_DAYS}` };
  return { ok: true, range: { startDate: isoDate(start), endDate: isoDate(end), from: start, to: new Date(end.getTime() + DAY_MS) } };
}


const toOptOutRow = (r: ConsentEventRow): Schemas['ComplianceOptOutReportRow'] => ({
  id: r.id,
  contactId: r.contact_id!,
  phone: r.phone,
  keyword: r.keyword,
  channel: r.channel as Schemas['ComplianceOptOutReportRow']['channel'],
  messageId: r.message_id,
  createdAt: r.created_at.toISOString(),
});

const toDncRow = (r: DncEntryRow): Schemas['ComplianceDncReportRow'] => ({
  id: r.id,
  phone: r.phone,
  reason: r.reason,
  source: r.source as Schemas['ComplianceDncReportRow']['source'],
  actor: r.actor,
  createdAt: r.created_at.toISOString(),
});

/** Column order of each report: the JSON row fields, in order (the CSV header). */
export const REPORT_COLUMNS: Record<ReportType, readonly string[]> = {
  consent: ['id', 'contactId', 'phone', 'action', 'source', 'consentType', 'keyword', 'channel', 'messageId', 'actor', 'reason', 'createdAt', 'expiresAt'],
  'opt-outs': ['id', 'contactId', 'phone', 'keyword', 'channel', 'messageId', 'createdAt'],
  dnc: ['id', 'phone', 'reason', 'source', 'actor', 'createdAt'],
};

export async function reportRows(db: Db, orgId: string, type: ReportType, range: ReportRange): Promise<ReportRow[]> {
  if (type === 'dnc') return (await dncEntriesBetween(db, orgId, range.from, range.to)).map(toDncRow);
  if (type === 'opt-outs') return (await consentEventsBetween(db, orgId, range.from, range.to, 'OPT_OUT')).map(toOptOutRow);
  return (await consentEventsBetween(db, orgId, range.from, range.to)).map((r) => toConsentAuditLog(r));
}

export function reportCsv(type: ReportType, rows: ReportRow[]): string {
  return toCsv(REPORT_COLUMNS[type], rows as unknown as Array<Record<string, CsvValue>>);
}

export function reportFilename(type: ReportType, range: ReportRange, format: 'json' | 'csv'): string {
  return `${type}-report-${range.startDate}-to-${range.endDate}.${format}`;
}
