// The message report (GET /v1/reports/messages): its time window, its defaults and its rows, limit + 1 read so
// that `hasMore` is known. Provider names and ids never reach a row: the query does not select them. The rows'
// JSON and CSV shapes are in mappers.ts.
import type { operations } from '../../../generated/api.d.ts';
import { messageReportRows, type MessageReportDbRow } from '../../db/queries/analytics/message-report.ts';
import { invalidField } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

export type { MessageReportDbRow };

/** The operation's query parameters, as validated against the document. */
export type MessageReportParams = NonNullable<operations['getMessageReport']['parameters']['query']>;

const DEFAULT_WINDOW_DAYS = 30;
const DEFAULT_LIMIT = 100;
const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

type ReportWindow = { from: Date; to: Date; toInclusive: boolean };

/**
 * `start`/`end` (ISO date or date-time, UTC, inclusive) → bounds on createdAt. A date-only `end` includes that
 * whole day. Defaults: `end` now, `start` 30 days before `end`. `start` after `end` is refused.
 */
function reportWindow(
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

/**
 * The organization's message records in the window, filtered and sorted: at most `limit` rows (default 100) and
 * whether more matched. 400 on `query.start` / `query.end` when the window is not one.
 */
export async function getMessageReport(
  tenant: Tenant,
  query: MessageReportParams,
  now = new Date(),
): Promise<{ rows: MessageReportDbRow[]; hasMore: boolean }> {
  const range = reportWindow(query, now);
  if (!range.ok) throw invalidField(range.field, range.message);
  const limit = query.limit ?? DEFAULT_LIMIT;
  const kind = query.kind ?? 'all';
  const rows = await messageReportRows(tenant.db, tenant.organizationId, {
    ...range.window,
    direction: kind === 'mo' ? 'inbound' : kind === 'mdr' ? 'outbound' : undefined,
    status: query.status,
    senderId: query.senderId,
    carrier: query.carrier,
    brand: query.brand,
    campaign: query.campaign,
    programId: query.programId,
    blastId: query.blastId,
    channel: query.channel,
    actualChannel: query.actualChannel,
    fallback: query.fallback,
    sort: query.sort ?? 'createdAt',
    dir: query.dir ?? 'desc',
    limit: limit + 1,
  });
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
