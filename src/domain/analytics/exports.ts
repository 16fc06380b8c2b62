// Analytics exports (POST /v1/analytics/export, GET /v1/analytics/export/{id}/download). Synchronous (`Accept:
// text/csv`): the CSV is generated in the request. Asynchronous: a row `pending` is stored and the job
// analytics.export (src/jobs/analytics.ts) writes the CSV to the object store and marks it `complete` (or `failed`).
// At most MAX_CONCURRENT_EXPORTS run at once per organization in this API process, in either mode: counted in
// memory (the document scopes the limit per process); an asynchronous export holds its slot until its row is no
// longer pending. Every cell goes through src/lib/csv.ts (formula neutralisation).
import { fromKysely } from 'pg-boss';
import { messageReportRows } from '../../db/queries/analytics/message-report.ts';
import { findExport, finishExport, insertExport, pendingExportIds, type ExportRow } from '../../db/queries/analytics/exports.ts';
import { toCsv } from '../../lib/csv.ts';
import { readAll, storeFor } from '../../lib/storage/index.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { queueOf } from '../conversations/context.ts';
import { emitEvent } from '../webhooks/events.ts';
import { ApiError, invalidField } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { periodOf, type Period } from './figures.ts';
import { MESSAGE_REPORT_COLUMNS_FOR_EXPORT, toReportCsvRow } from './mappers.ts';
import { datasetCsv } from './report-runs.ts';

export const MAX_CONCURRENT_EXPORTS = 3;
/** Longest export range (days, inclusive). */
export const MAX_EXPORT_DAYS = 366;
/** How long an asynchronous export's link is valid. */
export const EXPORT_TTL_MS = 60 * 60 * 1000;
export const EXPORT_RETRY_AFTER_SECONDS = 5;
const DAY_MS = 86_400_000;

export type ExportType = 'messages' | 'overview' | 'usage' | 'sessions' | 'sender-ids' | 'protocols' | 'intents';
export type ExportFilters = { brandId?: string; campaignId?: string; senderId?: string; channel?: string };
export type ExportRequest = { type: ExportType; startDate?: string; endDate?: string; filters?: ExportFilters };
export type ExportJob = { organizationId: string; exportId: string };

// ---- the per-process limit
const syncRunning = new Map<string, number>();
const asyncPending = new Map<string, Set<string>>();

async function running(tenant: Tenant): Promise<number> {
  const mine = asyncPending.get(tenant.organizationId);
  if (mine && mine.size > 0) {
    const still = new Set(await pendingExportIds(tenant.db, tenant.organizationId, [...mine]));
    for (const id of mine) if (!still.has(id)) mine.delete(id);
  }
  return (syncRunning.get(tenant.organizationId) ?? 0) + (mine?.size ?? 0);
}

async function checkLimit(tenant: Tenant): Promise<void> {
  if ((await running(tenant)) >= MAX_CONCURRENT_EXPORTS) {
    throw new ApiError(429, 'TOO_MANY_EXPORTS', `At most ${MAX_CONCURRENT_EXPORTS} exports run at once per organization; retry when one has finished.`, { headers: { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) } });
  }
}

/** Test hook: forgets the in-memory counts. */
export function resetExportSlots(): void {
  syncRunning.clear();
  asyncPending.clear();
}

function exportPeriod(req: { startDate?: string; endDate?: string }): Period {
  const period = periodOf(req);
  if (period.days > MAX_EXPORT_DAYS) throw invalidField('body.startDate', `an export covers at most ${MAX_EXPORT_DAYS} days (this one has ${period.days})`);
  return period;
}

// ---- generation
const exportFailed = (message: string) => new ApiError(500, 'EXPORT_FAILED', message);

/** The CSV of one dataset over the period with the filters that apply to it. */
export async function generateCsv(tenant: Tenant, type: ExportType, period: Period, filters: ExportFilters): Promise<string> {
  if (type === 'messages') {
    // One UTC day at a time (bounded reads), oldest first.
    const header = toCsv(MESSAGE_REPORT_COLUMNS_FOR_EXPORT, []);
    const chunks: string[] = [header];
    for (let day = period.from.getTime(); day < period.to.getTime(); day += DAY_MS) {
      const rows = await messageReportRows(tenant.db, tenant.organizationId, {
        from: new Date(day), to: new Date(day + DAY_MS), toInclusive: false,
        senderId: filters.senderId, channel: filters.channel, brand: filters.brandId, campaign: filters.campaignId,
        sort: 'createdAt', dir: 'asc', limit: 10_000_000,
      });
      if (rows.length > 0) chunks.push(toCsv(MESSAGE_REPORT_COLUMNS_FOR_EXPORT, rows.map(toReportCsvRow)).slice(header.length));
    }
    return chunks.join('');
  }
  const csv = await datasetCsv(tenant, type, period, filters);
  if (csv === null) throw exportFailed(`The ${type} dataset cannot be exported.`);
  return csv;
}

export const fileName = (type: string, p: { startDate: string; endDate: string }) => `analytics-${type}-${p.startDate}-${p.endDate}.csv`;

/** Synchronous mode: the finished CSV. */
export async function exportNow(tenant: Tenant, req: ExportRequest): Promise<{ csv: string; fileName: string }> {
  const period = exportPeriod(req);
  await checkLimit(tenant);
  syncRunning.set(tenant.organizationId, (syncRunning.get(tenant.organizationId) ?? 0) + 1);
  try {
    return { csv: await generateCsv(tenant, req.type, period, req.filters ?? {}), fileName: fileName(req.type, period) };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw exportFailed(`The export could not be generated: ${(err as Error).message}`);
  } finally {
    const n = (syncRunning.get(tenant.organizationId) ?? 1) - 1;
    if (n <= 0) syncRunning.delete(tenant.organizationId);
    else syncRunning.set(tenant.organizationId, n);
  }
}

/** Asynchronous mode: stores the pending export and queues its job (same transaction when the caller has one). */
export async function startExport(tenant: Tenant, services: Services, req: ExportRequest, now = new Date()): Promise<{ row: ExportRow; downloadUrl: string }> {
  const period = exportPeriod(req);
  await checkLimit(tenant);
  const row = await insertExport(tenant.db, tenant.organizationId, {
    type: req.type, startDate: period.startDate, endDate: period.endDate, filters: { ...(req.filters ?? {}) }, createdAt: now, expiresAt: new Date(now.getTime() + EXPORT_TTL_MS),
  });
  let set = asyncPending.get(tenant.organizationId);
  if (!set) asyncPending.set(tenant.organizationId, (set = new Set()));
  set.add(row.id);
  await queueOf(services).send(QUEUES.analyticsExport, { organizationId: tenant.organizationId, exportId: row.id } satisfies ExportJob, { db: fromKysely(tenant.db) });
  return { row, downloadUrl: downloadUrlOf(services, row.id) };
}

/** The job: generates the CSV, writes it to the object store, marks the export complete (or failed). */
export async function runExport(tenant: Tenant, services: Pick<Services, 'config' | 'queue'>, exportId: string): Promise<void> {
  const row = await findExport(tenant.db, tenant.organizationId, exportId);
  if (!row || row.status !== 'pending') return;
  let outcome: { status: 'complete'; rowCount: number } | { status: 'failed'; message: string };
  try {
    const period = periodOf({ startDate: row.start_date, endDate: row.end_date });
    const csv = await generateCsv(tenant, row.type as ExportType, period, row.filters);
    const key = `analytics-exports/${tenant.organizationId}/${row.id}.csv`;
    await storeFor(services.config).put(key, Buffer.from(csv, 'utf8'), 'text/csv; charset=utf-8');
    await finishExport(tenant.db, tenant.organizationId, row.id, { status: 'complete', storageKey: key });
    outcome = { status: 'complete', rowCount: csvRecords(csv) - 1 };
  } catch (err) {
    const message = (err as Error).message.slice(0, 500);
    await finishExport(tenant.db, tenant.organizationId, row.id, { status: 'failed', code: 'EXPORT_FAILED', message });
    outcome = { status: 'failed', message };
  }
  const complete = outcome.status === 'complete';
  await emitEvent(tenant.db, queueOf(services), {
    organizationId: tenant.organizationId,
    type: 'analytics_export.completed',
    data: {
      exportId: row.id,
      senderIdId: null,
      contactPhone: null,
      status: outcome.status,
      downloadUrl: complete ? downloadUrlOf(services, row.id) : null,
      expiresAt: complete ? row.expires_at.toISOString() : null,
      rowCount: outcome.status === 'complete' ? outcome.rowCount : null,
      error: outcome.status === 'failed' ? `EXPORT_FAILED: ${outcome.message}` : null,
      completedAt: new Date().toISOString(),
    },
  });
}

/** Records of a CSV (line ends outside quoted fields). */
function csvRecords(csv: string): number {
  let n = 0;
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\n' && !quoted) n++;
  }
  return n;
}

const downloadUrlOf = (services: Pick<Services, 'config'>, id: string) => `${services.config.assetBaseUrl.replace(/\/+$/, '')}/v1/analytics/export/${id}/download`;

/** The download: 404 unknown, 404 EXPORT_EXPIRED after expiry, 409 EXPORT_PENDING, 500 EXPORT_FAILED, or the CSV. */
export async function downloadExport(tenant: Tenant, services: Pick<Services, 'config'>, exportId: string, now = new Date()): Promise<{ csv: string; fileName: string }> {
  const row = await findExport(tenant.db, tenant.organizationId, exportId);
  if (!row) throw new ApiError(404, 'NOT_FOUND', 'Export not found.');
  if (row.expires_at <= now) throw new ApiError(404, 'EXPORT_EXPIRED', 'The export link has expired; start a new export.');
  if (row.status === 'pending') {
    throw new ApiError(409, 'EXPORT_PENDING', 'The export is still being generated.', { headers: { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) } });
  }
  if (row.status === 'failed' || !row.storage_key) throw exportFailed(`The export failed: ${row.error_message ?? 'unknown error'}`);
  const stream = await storeFor(services.config).get(row.storage_key);
  if (!stream) throw exportFailed('The export file is missing from the object store.');
  const csv = (await readAll(stream)).toString('utf8');
  return { csv, fileName: fileName(row.type, { startDate: row.start_date, endDate: row.end_date }) };
}
