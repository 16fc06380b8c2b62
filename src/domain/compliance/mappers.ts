// Compliance section: stored rows → the document's shapes (also the consent history of Contacts).
import type { components } from '../../../generated/api.d.ts';
import type { ConsentEventRow } from '../../db/queries/compliance/consent.ts';
import type { ComplianceOverrideRow } from '../../db/queries/compliance/consent-overrides.ts';
import type { ContactRow } from '../../db/queries/compliance/contact-tcpa.ts';
import type { ContentRuleRow } from '../../db/queries/compliance/content-rules.ts';
import type { DncEntryRow } from '../../db/queries/compliance/dnc.ts';
import { toCsv, type CsvValue } from '../../lib/csv.ts';
import type { DncBatchItem } from './dnc.ts';
import type { ListedKeywordRule } from './keyword-rules.ts';
import type { Report, ReportType } from './reports.ts';
import type { TcpaSettings } from './tcpa.ts';

type Schemas = components['schemas'];
type ConsentAuditLog = Schemas['ConsentAuditLog'];
export type ReportRow = Schemas['ComplianceConsentReportRow'] | Schemas['ComplianceOptOutReportRow'] | Schemas['ComplianceDncReportRow'];

/** A consent audit entry of the contact's history (entries written before the contact existed are shown as its own). */
export function toConsentAuditLog(row: ConsentEventRow, contactId = row.contact_id!): ConsentAuditLog {
  return {
    id: row.id,
    contactId: row.contact_id ?? contactId,
    phone: row.phone,
    action: row.action as ConsentAuditLog['action'],
    source: row.source as ConsentAuditLog['source'],
    consentType: row.consent_type as ConsentAuditLog['consentType'],
    keyword: row.keyword,
    channel: row.channel as ConsentAuditLog['channel'],
    messageId: row.message_id,
    actor: row.actor,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
  };
}

export function toDncEntry(r: DncEntryRow): Schemas['DncEntry'] {
  return {
    id: r.id,
    phone: r.phone,
    reason: r.reason,
    source: r.source as Schemas['DncEntry']['source'],
    actor: r.actor,
    createdAt: r.created_at.toISOString(),
  };
}

/** The batch's items in request order, and how many of each status. */
export function toDncBatchResult(items: DncBatchItem[]): Schemas['DncBatchResponse']['data'] {
  const count = (s: DncBatchItem['status']) => items.filter((r) => r.status === s).length;
  return {
    results: items.map((it) => ({ phone: it.phone, status: it.status, id: it.id })),
    added: count('added'),
    alreadyListed: count('already_listed'),
    invalid: count('invalid'),
    duplicateInRequest: count('duplicate_in_request'),
  };
}

export function toComplianceOverride(o: ComplianceOverrideRow): Schemas['ComplianceOverride'] {
  return {
    id: o.id,
    contactId: o.contact_id,
    type: o.type as Schemas['ComplianceOverride']['type'],
    reason: o.reason,
    actor: o.actor,
    createdAt: o.created_at.toISOString(),
    expiresAt: o.expires_at.toISOString(),
    auditLogId: o.audit_log_id,
  };
}

export function toContactTcpa({ row, tcpa }: { row: ContactRow; tcpa: TcpaSettings }): Schemas['ComplianceTcpaSettings'] {
  return {
    contactId: row.id,
    timeZone: tcpa.timeZone,
    timeZoneSource: tcpa.timeZoneSource,
    quietHoursStart: tcpa.quietHoursStart,
    quietHoursEnd: tcpa.quietHoursEnd,
    consentType: tcpa.consentType,
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toContentRule(r: ContentRuleRow): Schemas['ContentRule'] {
  return {
    id: r.id,
    name: r.name,
    pattern: r.pattern,
    patternType: r.pattern_type as Schemas['ContentRule']['patternType'],
    action: r.action as Schemas['ContentRule']['action'],
    caseSensitive: r.case_sensitive,
    messageTypes: r.message_types as Schemas['ContentRule']['messageTypes'],
    enabled: r.enabled,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export function toKeywordRule(r: ListedKeywordRule): Schemas['KeywordRule'] {
  return { ...r, createdAt: r.createdAt?.toISOString() ?? null, updatedAt: r.updatedAt?.toISOString() ?? null };
}

// ---------------------------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------------------------

/** Column order of each report: the JSON row fields, in order (the CSV header). */
const REPORT_COLUMNS: Record<ReportType, readonly string[]> = {
  consent: [
    'id',
    'contactId',
    'phone',
    'action',
    'source',
    'consentType',
    'keyword',
    'channel',
    'messageId',
    'actor',
    'reason',
    'createdAt',
    'expiresAt',
  ],
  'opt-outs': ['id', 'contactId', 'phone', 'keyword', 'channel', 'messageId', 'createdAt'],
  dnc: ['id', 'phone', 'reason', 'source', 'actor', 'createdAt'],
};

const toOptOutRow = (r: ConsentEventRow): Schemas['ComplianceOptOutReportRow'] => ({
  id: r.id,
  contactId: r.contact_id!,
  phone: r.phone,
  keyword: r.keyword,
  channel: r.channel as Schemas['ComplianceOptOutReportRow']['channel'],
  messageId: r.message_id,
  createdAt: r.created_at.toISOString(),
});

const toDncReportRow = (r: DncEntryRow): Schemas['ComplianceDncReportRow'] => ({
  id: r.id,
  phone: r.phone,
  reason: r.reason,
  source: r.source as Schemas['ComplianceDncReportRow']['source'],
  actor: r.actor,
  createdAt: r.created_at.toISOString(),
});

export function toReportRows(report: Report): ReportRow[] {
  if (report.type === 'dnc') return report.rows.map(toDncReportRow);
  if (report.type === 'opt-outs') return report.rows.map(toOptOutRow);
  return report.rows.map((r) => toConsentAuditLog(r));
}

/** The rows as CSV: a header row, then the same columns in the same order as the JSON rows. */
export function reportCsv(type: ReportType, rows: ReportRow[]): string {
  return toCsv(REPORT_COLUMNS[type], rows as unknown as Array<Record<string, CsvValue>>);
}

export function reportFilename(report: Pick<Report, 'type' | 'range'>, format: 'json' | 'csv'): string {
  return `${report.type}-report-${report.range.startDate}-to-${report.range.endDate}.${format}`;
}
