// Analytics section: getMessageReport (the other analytics operations are not built yet).
import { messageReportRows } from '../db/queries/message-report.ts';
import { messageReportCsv, reportWindow, toReportRow } from '../domain/analytics/message-report.ts';
import { invalidField } from '../domain/errors.ts';
import { defineHandlers, requirePrincipal } from '../http/handler-types.ts';

const DEFAULT_LIMIT = 100;

export const analyticsHandlers = defineHandlers({
  async getMessageReport({ query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const range = reportWindow(query, new Date());
    if (!range.ok) throw invalidField(range.field, range.message);
    const limit = query.limit ?? DEFAULT_LIMIT;
    const kind = query.kind ?? 'all';
    const rows = await messageReportRows(scope.app.db, organizationId, {
      ...range.window,
      direction: kind === 'mo' ? 'inbound' : kind === 'mdr' ? 'outbound' : undefined,
      status: query.status,
      senderId: query.senderId,
      carrier: query.carrier,
      brand: query.brand,
      campaign: query.campaign,
      programId: query.programId,
      channel: query.channel,
      actualChannel: query.actualChannel,
      fallback: query.fallback,
      sort: query.sort ?? 'createdAt',
      dir: query.dir ?? 'desc',
      limit: limit + 1,
    });
    const data = rows.slice(0, limit).map(toReportRow);
    if (query.format === 'csv') {
      return {
        status: 200,
        body: messageReportCsv(data),
        contentType: 'text/csv; charset=utf-8',
        headers: { 'Content-Disposition': 'attachment; filename="message-report.csv"' },
      };
    }
    return { status: 200, body: { data, hasMore: rows.length > limit } };
  },
});
