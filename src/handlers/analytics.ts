// Analytics section (openapi/paths/analytics.yaml): getMessageReport (the other analytics operations are not built
// yet: src/handlers/not-implemented.ts). One service call (src/domain/analytics/), then the rows as JSON or CSV.
import { messageReportCsv, toReportRow } from '../domain/analytics/mappers.ts';
import { getMessageReport } from '../domain/analytics/message-report.ts';
import { defineHandlers } from '../http/handler-types.ts';

export const analyticsHandlers = defineHandlers({
  async getMessageReport({ query }, { tenant }) {
    const { rows, hasMore } = await getMessageReport(tenant, query);
    const data = rows.map(toReportRow);
    if (query.format === 'csv') {
      return {
        status: 200,
        body: messageReportCsv(data),
        contentType: 'text/csv; charset=utf-8',
        headers: { 'Content-Disposition': 'attachment; filename="message-report.csv"' },
      };
    }
    return { status: 200, body: { data, hasMore } };
  },
});
