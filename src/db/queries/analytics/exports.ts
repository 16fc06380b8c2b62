// SQL for asynchronous analytics exports (analytics_exports, migration 0024).
import type { Selectable } from 'kysely';
import type { AnalyticsExportsTable } from '../../tables/analytics.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ExportRow = Selectable<AnalyticsExportsTable>;

export function insertExport(
  db: TenantDb,
  orgId: string,
  e: { type: string; startDate: string; endDate: string; filters: Record<string, string>; createdAt: Date; expiresAt: Date },
): Promise<ExportRow> {
  return db
    .insertInto('analytics_exports')
    .values({
      organization_id: orgId,
      type: e.type,
      start_date: e.startDate,
      end_date: e.endDate,
      filters: JSON.stringify(e.filters),
      created_at: e.createdAt,
      expires_at: e.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findExport(db: TenantDb, orgId: string, id: string): Promise<ExportRow | undefined> {
  return tenant(db.selectFrom('analytics_exports'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Ids among `ids` still pending. */
export async function pendingExportIds(db: TenantDb, orgId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await tenant(db.selectFrom('analytics_exports'), orgId)
    .select('id')
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .execute();
  return rows.map((r) => r.id);
}

export async function finishExport(
  db: TenantDb,
  orgId: string,
  id: string,
  change: { status: 'complete'; storageKey: string } | { status: 'failed'; code: string; message: string },
): Promise<void> {
  await tenant(db.updateTable('analytics_exports'), orgId)
    .set(
      change.status === 'complete'
        ? { status: 'complete', storage_key: change.storageKey, completed_at: new Date() }
        : { status: 'failed', error_code: change.code, error_message: change.message, completed_at: new Date() },
    )
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}
