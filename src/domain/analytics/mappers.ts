// Analytics section: stored rows → the document's shapes. The message report's rows as JSON (toReportRow) and as
// CSV (the same rows, `cost` split into cost and currency).
import type { components } from '../../../generated/api.d.ts';
import type { MessageReportDbRow } from '../../db/queries/analytics/message-report.ts';
import { toCsv, type CsvValue } from '../../lib/csv.ts';
import { toMoney } from '../conversations/pricing.ts';

type Schemas = components['schemas'];
export type MessageReportRow = Schemas['MessageReportRow'];

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
