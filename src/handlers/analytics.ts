// Analytics section (openapi/paths/analytics.yaml): getMessageReport and the per-channel and per-sender figures
// (the other analytics operations are not built yet: src/handlers/not-implemented.ts). One service call
// (src/domain/analytics/) each, then the mapper.
import { getOverview, getProtocols, getSenderFigures, getSessions, getTrends, getUsage, listSenderFigures } from '../domain/analytics/figures.ts';
import { messageReportCsv, toOverview, toProtocols, toReportRow, toReport, toSenderDetail, toSenderSummary, toSessions, toTrends, toUsage } from '../domain/analytics/mappers.ts';
import { getMessageReport } from '../domain/analytics/message-report.ts';
import { createReport, deleteReport, listReports, updateReport } from '../domain/analytics/reports.ts';
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

  async getAnalyticsProtocols({ query }, { tenant }) {
    return { status: 200, body: { data: toProtocols(await getProtocols(tenant, query ?? {})) } };
  },

  async getAnalyticsUsage({ query }, { tenant }) {
    return { status: 200, body: { data: toUsage(await getUsage(tenant, query ?? {})) } };
  },

  async getAnalyticsTrends({ query }, { tenant }) {
    return { status: 200, body: { data: toTrends(await getTrends(tenant, query ?? {})) } };
  },

  async listAnalyticsReports(_input, { tenant }) {
    return { status: 200, body: { data: (await listReports(tenant)).map(toReport) } };
  },

  async createAnalyticsReport({ body }, { tenant }) {
    return { status: 201, body: { data: toReport(await createReport(tenant, body)) } };
  },

  async updateAnalyticsReport({ path, body }, { tenant }) {
    return { status: 200, body: { data: toReport(await updateReport(tenant, path.id, body)) } };
  },

  async deleteAnalyticsReport({ path }, { tenant }) {
    await deleteReport(tenant, path.id);
    // No content: the response validator checks a body-less answer as `null` (nothing is written for 204).
    return { status: 204, body: null as never };
  },

  async getAnalyticsSessions({ query }, { tenant }) {
    return { status: 200, body: { data: toSessions(await getSessions(tenant, query ?? {})) } };
  },

  async getAnalyticsOverview({ query }, { tenant }) {
    return { status: 200, body: { data: toOverview(await getOverview(tenant, query ?? {})) } };
  },

  async listAnalyticsSenderIds({ query }, { tenant }) {
    return { status: 200, body: { data: (await listSenderFigures(tenant, query ?? {})).map(toSenderSummary) } };
  },

  async getAnalyticsSenderId({ path, query }, { tenant }) {
    return { status: 200, body: { data: toSenderDetail(await getSenderFigures(tenant, path.id, query ?? {})) } };
  },
});
