// The message report: its time window, its rows (JSON) and its CSV (the same rows, `cost` split into cost and
// currency). Provider names and ids never reach a row: the query does not select them.
import type { components } from '../../../generated/api.d.ts';
import type { MessageReportDbRow } from '../../db/queries/message-report.ts';
import { toCsv, type CsvValue } from '../../lib/csv.ts';
import { toMoney } from '../messaging/pricing.ts';

type Schemas = components['schemas'];
export type MessageReportRow = Schemas['MessageReportRow'];

export const DEFAULT_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export type ReportWindow = { from: Date; to: Date; toInclusive: boolean };

/**
 * `start`/`end` (ISO date or date-time, UTC, inclusive) → bounds on createdAt. A date-only `end` includes that
 * whole day. Defaults: `end` now, `start` 30 days before `end`. `start` after `end` is refused.
 */
export function reportWindow(
  query: { start?: unknown; end?: unknown },
  now: Date,
): { ok: true; window: ReportWindow } | { ok: false; field: string; message: string } {
  let to = now;
  let toInclusive = true;
  if (query.end !== undefined) {
    const end = parseInstant(query.end);
    if (!end) return { ok: false, field: 'query.end', message: 'must be an ISO 8601 date or date-time' };
    toInclusive = !DATE_ONLY.test(String(query.end));
    to = toInclusive ? end : new Date(end.getTime() + DAY_MS);
  }
  let from = new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (query.start !== undefined) {
    const start = parseInstant(query.start);
    if (!start) return { ok: false, field: 'query.start', message: 'must be an ISO 8601 date or date-time' };
    from = start;
  }
  if (toInclusive ? from > to : from >= to) return { ok: false, field: 'query.start', message: 'must not be after end' };
  return { ok: true, window: { from, to, toInclusive } };
}

/** The validator has checked the format; this only turns it into an instant (a date is its UTC midnight). */
function parseInstant(s: unknown): Date | undefined {
  if (typeof s !== 'string') return undefined;
  const d = new Date(DATE_ONLY.test(s) ? `${s}T00:00:00Z` : s);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function toReportRow(r: MessageReportDbRow): MessageReportRow {
  return {
    messageId: r.id,
    kind: r.direction === 'inbound' ? 'mo' : 'mdr',
    direction: r.direction as MessageReportRow['direction'],
    createdAt: r.created_at.toISOString(),
    receiptAt: r.receipt_at?.toISOString() ?? null,
    contactId: r.contact_id,
    contactPhone: r.contact_phone,
    senderId: r.sender_id,
    programId: r.program_id,
    brand: r.brand,
    campaign: r.campaign,
    carrier: r.carrier,
    channel: r.requested_channel as MessageReportRow['channel'],
    actualChannel: r.channel as MessageReportRow['actualChannel'],
    fallback: r.is_fallback ? 'fallback' : 'primary',
    fallbackReason: r.fallback_reason as MessageReportRow['fallbackReason'],
    messageType: r.message_type as MessageReportRow['messageType'],
    status: r.status as MessageReportRow['status'],
    errorCode: r.error_code,
    segments: r.segments,
    cost: r.cost_units === null ? null : toMoney(r.cost_units),
    // Blasts are not built yet: no message belongs to one.
    blastId: null,
    conversationId: r.conversation_id,
  };
}

/**
 * CSV columns: the row's fields in order, `cost` split into `cost` (amount) and `currency`. Written by the shared
 * writer (src/lib/csv.ts), which neutralises formula-like strings (an error code `=HYPERLINK(…)` becomes
 * `'=HYPERLINK(…)`); `segments` is a number and the amount a plain decimal, both left as they are.
 */
export const MESSAGE_REPORT_COLUMNS = [
  'messageId', 'kind', 'direction', 'createdAt', 'receiptAt', 'contactId', 'contactPhone', 'senderId', 'programId',
  'brand', 'campaign', 'carrier', 'channel', 'actualChannel', 'fallback', 'fallbackReason', 'messageType', 'status',
  'errorCode', 'segments', 'cost', 'currency', 'blastId', 'conversationId',
] as const;

export function messageReportCsv(rows: readonly MessageReportRow[]): string {
  return toCsv(
    MESSAGE_REPORT_COLUMNS,
    rows.map((r): Record<string, CsvValue> => ({ ...r, cost: r.cost?.amount ?? null, currency: r.cost?.currency ?? null })),
  );
}
