// Analytics exports (POST /v1/analytics/export, GET /v1/analytics/export/{id}/download). Synchronous (`Accept:
// text/csv`): the CSV streams back while it is generated. Asynchronous: a row `pending` is stored and the job
// analytics.export (src/jobs/analytics.ts) streams the CSV into the object store and marks it `complete` (or
// `failed`, recorded); the download streams it back. Either way memory stays flat: `messages` is read in keyset
// batches (datasets.ts). The `downloadUrl` is a signed link valid until the export expires (one hour).
// At most MAX_CONCURRENT_EXPORTS run at once per organization in this API process, in either mode: counted in
// memory (the document scopes the limit per process); an asynchronous export holds its slot until its row is no
// longer pending. Every cell goes through src/lib/csv.ts (formula neutralisation).
import { Readable } from 'node:stream';
import { fromKysely } from 'pg-boss';
import { findExport, finishExport, insertExport, pendingExportIds, type ExportRow } from '../../db/queries/analytics/exports.ts';
import { signUrl } from '../../lib/signed-urls.ts';
import { storeFor } from '../../lib/storage/index.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { queueOf } from '../messaging/context.ts';
import { emitEvent } from '../webhooks/events.ts';
import { ApiError, invalidField } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { periodOf, type Period } from './figures.ts';
import { datasetCsv, type Dataset, type DatasetFilters } from './datasets.ts';

const MAX_CONCURRENT_EXPORTS = 3;
/** Longest export range (days, inclusive). */
const MAX_EXPORT_DAYS = 366;
/** How long an asynchronous export's link is valid. */
const EXPORT_TTL_MS = 60 * 60 * 1000;
const EXPORT_RETRY_AFTER_SECONDS = 5;

export type ExportType = Dataset;
type ExportFilters = DatasetFilters;
export type ExportRequest = { type: ExportType; startDate?: string; endDate?: string; filters?: ExportFilters };
export type ExportJob = { organizationId: string; exportId: string };

// ---- the per-process limit
/** Slots held by synchronous exports while they stream, and by asynchronous ones until their row is stored. */
const held = new Map<string, number>();
/** Asynchronous exports this process started that were still pending when last looked at. */
const asyncPending = new Map<string, Set<string>>();

/** Forgets the organization's asynchronous exports that are no longer pending (only those asked about). */
async function forgetFinished(tenant: Tenant): Promise<void> {
  const mine = asyncPending.get(tenant.organizationId);
  if (!mine || mine.size === 0) return;
  const asked = [...mine]; // an id added while the query runs was not asked about: it stays
  const still = new Set(await pendingExportIds(tenant.db, tenant.organizationId, asked));
  for (const id of asked) if (!still.has(id)) mine.delete(id);
}

/**
 * Takes one of the organization's MAX_CONCURRENT_EXPORTS slots, or answers 429 TOO_MANY_EXPORTS; the caller gives it
 * back with the function answered. The count and the taking are one synchronous step, after the only await: with
 * an await between them (the pending exports' query, the insert of an asynchronous export's row) every request
 * that arrived meanwhile passed the check before any counted, and 20 parallel requests were all accepted.
 */
async function takeSlot(tenant: Tenant): Promise<() => void> {
  await forgetFinished(tenant);
  const org = tenant.organizationId;
  const running = (held.get(org) ?? 0) + (asyncPending.get(org)?.size ?? 0);
  if (running >= MAX_CONCURRENT_EXPORTS) {
    throw new ApiError(
      429,
      'TOO_MANY_EXPORTS',
      `At most ${MAX_CONCURRENT_EXPORTS} exports run at once per organization; retry when one has finished.`,
      { headers: { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) } },
    );
  }
  held.set(org, (held.get(org) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const n = (held.get(org) ?? 1) - 1;
    if (n <= 0) held.delete(org);
    else held.set(org, n);
  };
}

/** Test hook: forgets the in-memory counts. */
export function resetExportSlots(): void {
  held.clear();
  asyncPending.clear();
}

/** The export's range; its dates are fields of the request body. */
function exportPeriod(req: { startDate?: string; endDate?: string }): Period {
  const period = periodOf(req, new Date(), 'body');
  if (period.days > MAX_EXPORT_DAYS)
    throw invalidField('body.startDate', `an export covers at most ${MAX_EXPORT_DAYS} days (this one has ${period.days})`);
  return period;
}

// ---- generation
const exportFailed = (message: string) => new ApiError(500, 'EXPORT_FAILED', message);
const asExportFailed = (err: unknown) =>
  err instanceof ApiError ? err : exportFailed(`The export could not be generated: ${(err as Error).message}`);

const fileName = (type: string, p: { startDate: string; endDate: string }) => `analytics-${type}-${p.startDate}-${p.endDate}.csv`;

async function* after<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  if (!first.done) yield first.value;
  yield* rest;
}

/**
 * Synchronous mode: the CSV as a stream, generated while the client reads it (flat memory). The first chunk (the
 * header and the first batch of rows) is read before answering, so a failure there still answers 500
 * EXPORT_FAILED; a failure after it can no longer change the status, and the connection is cut (src/app.ts), so
 * the client sees a truncated transfer rather than a complete-looking file. The slot is held until the stream
 * closes (finished, failed or the client went away).
 */
export async function exportNow(tenant: Tenant, req: ExportRequest): Promise<{ body: Readable; fileName: string }> {
  const period = exportPeriod(req);
  const release = await takeSlot(tenant);
  const { chunks } = datasetCsv(tenant, req.type, period, req.filters ?? {});
  let first: IteratorResult<string>;
  try {
    first = await chunks.next();
  } catch (err) {
    release();
    throw asExportFailed(err);
  }
  const body = Readable.from(after(first, chunks), { objectMode: false });
  body.once('close', release);
  return { body, fileName: fileName(req.type, period) };
}

/** Asynchronous mode: stores the pending export and queues its job (same transaction when the caller has one). */
export async function startExport(
  tenant: Tenant,
  services: Services,
  req: ExportRequest,
  now = new Date(),
): Promise<{ row: ExportRow; downloadUrl: string }> {
  const period = exportPeriod(req);
  const release = await takeSlot(tenant);
  let row: ExportRow;
  try {
    row = await insertExport(tenant.db, tenant.organizationId, {
      type: req.type,
      startDate: period.startDate,
      endDate: period.endDate,
      filters: { ...(req.filters ?? {}) },
      createdAt: now,
      expiresAt: new Date(now.getTime() + EXPORT_TTL_MS),
    });
    let set = asyncPending.get(tenant.organizationId);
    if (!set) asyncPending.set(tenant.organizationId, (set = new Set()));
    set.add(row.id); // the row holds the slot from here, until it is no longer pending
  } finally {
    release();
  }
  await queueOf(services).send(QUEUES.analyticsExport, { organizationId: tenant.organizationId, exportId: row.id } satisfies ExportJob, {
    db: fromKysely(tenant.db),
  });
  return { row, downloadUrl: downloadUrlOf(services, tenant.organizationId, row.id, row.expires_at) };
}

/** The job: generates the CSV, writes it to the object store, marks the export complete (or failed). */
export async function runExport(tenant: Tenant, services: Pick<Services, 'config' | 'queue'>, exportId: string): Promise<void> {
  const row = await findExport(tenant.db, tenant.organizationId, exportId);
  if (!row || row.status !== 'pending') return;
  let outcome: { status: 'complete'; rowCount: number } | { status: 'failed'; message: string };
  try {
    const period = periodOf({ startDate: row.start_date, endDate: row.end_date });
    const csv = datasetCsv(tenant, row.type, period, row.filters);
    const key = `analytics-exports/${tenant.organizationId}/${row.id}.csv`;
    await storeFor(services.config).putStream(key, csv.chunks, 'text/csv; charset=utf-8');
    await finishExport(tenant.db, tenant.organizationId, row.id, { status: 'complete', storageKey: key });
    outcome = { status: 'complete', rowCount: csv.rows() };
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
      downloadUrl: complete ? downloadUrlOf(services, tenant.organizationId, row.id, row.expires_at) : null,
      expiresAt: complete ? row.expires_at.toISOString() : null,
      rowCount: outcome.status === 'complete' ? outcome.rowCount : null,
      error: outcome.status === 'failed' ? `EXPORT_FAILED: ${outcome.message}` : null,
      completedAt: new Date().toISOString(),
    },
  });
}

/**
 * The signed link of an export's download, valid until the export expires: it works without an API key (a browser,
 * a spreadsheet) for this organization and this export only (src/lib/signed-urls.ts).
 */
export const downloadUrlOf = (services: Pick<Services, 'config'>, organizationId: string, id: string, expiresAt: Date) =>
  signUrl(services.config.assetBaseUrl, `/v1/analytics/export/${id}/download`, organizationId, expiresAt);

/** The download: 404 unknown, 404 EXPORT_EXPIRED after expiry, 409 EXPORT_PENDING, 500 EXPORT_FAILED, or the CSV. */
export async function downloadExport(
  tenant: Tenant,
  services: Pick<Services, 'config'>,
  exportId: string,
  now = new Date(),
): Promise<{ body: Readable; fileName: string }> {
  const row = await findExport(tenant.db, tenant.organizationId, exportId);
  if (!row) throw new ApiError(404, 'NOT_FOUND', 'Export not found.');
  if (row.expires_at <= now) throw new ApiError(404, 'EXPORT_EXPIRED', 'The export link has expired; start a new export.');
  if (row.status === 'pending') {
    throw new ApiError(409, 'EXPORT_PENDING', 'The export is still being generated.', {
      headers: { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) },
    });
  }
  if (row.status === 'failed' || !row.storage_key) throw exportFailed(`The export failed: ${row.error_message ?? 'unknown error'}`);
  const stream = await storeFor(services.config).get(row.storage_key);
  if (!stream) throw exportFailed('The export file is missing from the object store.');
  return { body: stream, fileName: fileName(row.type, { startDate: row.start_date, endDate: row.end_date }) };
}
