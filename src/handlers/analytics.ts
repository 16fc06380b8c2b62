// Analytics section (the analytics paths of openapi.yaml): the message report, the figures, exports and scheduled
// reports. One service call (src/domain/analytics/) each, then the mapper.
import type { Readable } from 'node:stream';
import {
  getOverview,
  getProtocols,
  getSenderFigures,
  getSessions,
  getTrends,
  getUsage,
  listSenderFigures,
} from '../domain/analytics/figures.ts';
import { getBlastFigures } from '../domain/analytics/blast.ts';
import { getBotFunnel, getBotSummary } from '../domain/analytics/bots.ts';
import { getIntentCounts } from '../domain/analytics/intents.ts';
import { downloadExport, exportNow, startExport } from '../domain/analytics/exports.ts';
import { getTop } from '../domain/analytics/top.ts';
import {
  messageReportCsv,
  toBlastFigures,
  toBotFunnel,
  toBotSummary,
  toExport,
  toIntents,
  toOverview,
  toProtocols,
  toReportRow,
  toReport,
  toSenderDetail,
  toSenderSummary,
  toSessions,
  toTop,
  toTrends,
  toUsage,
} from '../domain/analytics/mappers.ts';
import { getMessageReport } from '../domain/analytics/message-report.ts';
import { createReport, deleteReport, listReports, updateReport } from '../domain/analytics/reports.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

/** A CSV stream where the document types the body as a string: src/app.ts pipes a Readable body to the client. */
const streamed = (csv: Readable) => csv as unknown as string;

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

  async listAnalyticsReports({ query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await listReports(tenant)).map(toReport), query) };
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
    return { status: 200, body: wholeOrPaged((await listSenderFigures(tenant, query ?? {})).map(toSenderSummary), query) };
  },

  async getAnalyticsBot({ path }, { tenant }) {
    return { status: 200, body: { data: toBotSummary(await getBotSummary(tenant, path.id)) } };
  },

  async getAnalyticsBotFunnel({ path, query }, { tenant }) {
    return { status: 200, body: { data: toBotFunnel(await getBotFunnel(tenant, path.id, query ?? {})) } };
  },

  async getAnalyticsIntents({ query }, { tenant }) {
    return { status: 200, body: { data: toIntents(await getIntentCounts(tenant, query ?? {})) } };
  },

  async getAnalyticsTop(_input, { tenant }) {
    return { status: 200, body: { data: toTop(await getTop(tenant)) } };
  },

  async getAnalyticsBlast({ path, query }, { tenant }) {
    return { status: 200, body: { data: toBlastFigures(await getBlastFigures(tenant, path.id, query ?? {})) } };
  },

  async exportAnalytics({ body, headers }, { tenant, services }) {
    const accept = String((headers as Record<string, unknown>)['accept'] ?? '');
    if (/\btext\/csv\b/i.test(accept)) {
      const { body: csv, fileName } = await exportNow(tenant, body);
      return {
        status: 200,
        body: streamed(csv),
        contentType: 'text/csv; charset=utf-8',
        headers: { 'Content-Disposition': `attachment; filename="${fileName}"` },
      };
    }
    return { status: 200, body: { data: toExport(await startExport(tenant, services, body)) } };
  },

  async downloadAnalyticsExport({ path }, { tenant, services }) {
    const { body: csv, fileName } = await downloadExport(tenant, services, path.id);
    return {
      status: 200,
      body: streamed(csv),
      contentType: 'text/csv; charset=utf-8',
      headers: { 'Content-Disposition': `attachment; filename="${fileName}"` },
    };
  },

  async getAnalyticsSenderId({ path, query }, { tenant }) {
    return { status: 200, body: { data: toSenderDetail(await getSenderFigures(tenant, path.id, query ?? {})) } };
  },
});
