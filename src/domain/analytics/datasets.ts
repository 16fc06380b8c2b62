// The CSV datasets shared by exports (exports.ts) and scheduled reports (report-runs.ts), as streams of chunks
// through the one CSV writer (src/lib/csv.ts, formula neutralisation). `messages` is read in keyset batches of
// BATCH_ROWS (oldest first), so a million-row export holds one batch at a time; the other datasets are figures of
// the rollups (one row per day, channel, sender or intent value) and are computed whole.
import type { Channel } from '../../db/tables/enums.ts';
import { messageReportRows } from '../../db/queries/analytics/message-report.ts';
import { rollupByChannel, rollupBySender, senderNames } from '../../db/queries/analytics/rollups.ts';
import { csvChunks, type CsvValue } from '../../lib/csv.ts';
import { toMoney } from '../messaging/pricing.ts';
import type { Tenant } from '../tenant.ts';
import { CHANNELS, getSessions, getUsage, isoDay, timeline, type Period } from './figures.ts';
import { getIntentCounts } from './intents.ts';
import { MESSAGE_REPORT_COLUMNS_FOR_EXPORT, toReportCsvRow } from './mappers.ts';

export type Dataset = 'messages' | 'overview' | 'usage' | 'sessions' | 'sender-ids' | 'protocols' | 'intents';
export type DatasetFilters = { brandId?: string; campaignId?: string; senderId?: string; channel?: Channel };
type Table = { columns: readonly string[]; rows: Array<Record<string, CsvValue>> };

/** Rows per read of the `messages` dataset. */
export const BATCH_ROWS = 5_000;

const METRIC_COLUMNS = ['sent', 'delivered', 'read', 'failed', 'received', 'fallback', 'cost', 'currency'] as const;
const metricCells = (s: {
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  received: number;
  fallback: number;
  costUnits: number;
}) => ({
  sent: s.sent,
  delivered: s.delivered,
  read: s.read,
  failed: s.failed,
  received: s.received,
  fallback: s.fallback,
  cost: toMoney(s.costUnits).amount,
  currency: 'USD',
});

/** The rows of a figures dataset over the period, or null for a name that is no dataset. */
async function figuresTable(tenant: Tenant, dataset: string, period: Period, filters: DatasetFilters): Promise<Table | null> {
  const f = { from: period.from, to: period.to, brandId: filters.brandId, campaignId: filters.campaignId, senderId: filters.senderId };
  switch (dataset) {
    case 'overview': {
      const points = await timeline(tenant, f, period, 'day');
      return { columns: ['date', ...METRIC_COLUMNS], rows: points.map((p) => ({ date: isoDay(p.bucket), ...metricCells(p) })) };
    }
    case 'protocols': {
      const rows = await rollupByChannel(tenant.db, tenant.organizationId, f);
      return {
        columns: ['channel', ...METRIC_COLUMNS],
        rows: CHANNELS.map((channel) => {
          const r = rows.find((x) => x.channel === channel);
          return { channel, ...metricCells(r ?? { sent: 0, delivered: 0, read: 0, failed: 0, received: 0, fallback: 0, costUnits: 0 }) };
        }),
      };
    }
    case 'sender-ids': {
      const rows = await rollupBySender(tenant.db, tenant.organizationId, f);
      const names = new Map(
        (
          await senderNames(
            tenant.db,
            tenant.organizationId,
            rows.map((r) => r.senderId),
          )
        ).map((s) => [s.id, s.name]),
      );
      return {
        columns: ['senderId', 'name', ...METRIC_COLUMNS],
        rows: rows
          .sort((a, b) => b.sent - a.sent)
          .map((r) => ({ senderId: r.senderId, name: names.get(r.senderId) ?? null, ...metricCells(r) })),
      };
    }
    case 'usage': {
      const u = await getUsage(tenant, {
        startDate: period.startDate,
        endDate: period.endDate,
        brandId: filters.brandId,
        campaignId: filters.campaignId,
      });
      return {
        columns: ['date', 'textSegments', 'richMessages', 'capabilityChecks', 'cost', 'currency'],
        rows: u.timeline.map((p) => ({ ...p, cost: toMoney(p.costUnits).amount, currency: 'USD' })),
      };
    }
    case 'sessions': {
      const s = await getSessions(tenant, { startDate: period.startDate, endDate: period.endDate });
      return {
        columns: ['date', 'sessions', 'uniqueContacts', 'inboundMessages', 'outboundMessages', 'averageDurationSeconds'],
        rows: s.timeline.map((p) => ({
          date: p.key,
          sessions: p.figures.sessions,
          uniqueContacts: p.figures.uniqueContacts,
          inboundMessages: p.figures.inboundMessages,
          outboundMessages: p.figures.outboundMessages,
          averageDurationSeconds: p.figures.sessions === 0 ? 0 : Math.round((p.figures.durationSeconds / p.figures.sessions) * 10) / 10,
        })),
      };
    }
    case 'intents': {
      const i = await getIntentCounts(tenant, { startDate: period.startDate, endDate: period.endDate });
      return { columns: ['value', 'intentId', 'label', 'taps', 'uniqueContacts'], rows: i.intents };
    }
    default:
      return null;
  }
}

/** The messages of the period (with the filters), oldest first, one keyset batch at a time. */
async function* messageBatches(tenant: Tenant, period: Period, filters: DatasetFilters): AsyncGenerator<Array<Record<string, CsvValue>>> {
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const rows = await messageReportRows(tenant.db, tenant.organizationId, {
      from: period.from,
      to: period.to,
      toInclusive: false,
      senderId: filters.senderId,
      channel: filters.channel,
      brand: filters.brandId,
      campaign: filters.campaignId,
      sort: 'createdAt',
      dir: 'asc',
      limit: BATCH_ROWS,
      after,
    });
    if (rows.length > 0) yield rows.map(toReportCsvRow);
    if (rows.length < BATCH_ROWS) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.cursor_at, id: last.id };
  }
}

class UnknownDatasetError extends Error {}

/**
 * A dataset's CSV as chunks (header first), and how many data rows have gone out so far. The chunks throw
 * UnknownDatasetError for a name that is no dataset (a stored export of an older version).
 */
export function datasetCsv(
  tenant: Tenant,
  dataset: string,
  period: Period,
  filters: DatasetFilters = {},
): { chunks: AsyncGenerator<string>; rows: () => number } {
  let rows = 0;
  async function* batches(): AsyncGenerator<Array<Record<string, CsvValue>>> {
    for await (const batch of messageBatches(tenant, period, filters)) {
      rows += batch.length;
      yield batch;
    }
  }
  async function* chunks(): AsyncGenerator<string> {
    if (dataset === 'messages') {
      yield* csvChunks(MESSAGE_REPORT_COLUMNS_FOR_EXPORT, batches());
      return;
    }
    const table = await figuresTable(tenant, dataset, period, filters);
    if (!table) throw new UnknownDatasetError(`The ${dataset} dataset cannot be exported.`);
    rows = table.rows.length;
    yield* csvChunks(table.columns, [table.rows]);
  }
  return { chunks: chunks(), rows: () => rows };
}
