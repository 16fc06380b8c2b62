// SQL for scheduled reports (analytics_reports, migration 0022): tenant-scoped CRUD, the per-organization lock that
// makes the "at most 5" rule race-free, and the due-report scan of the scheduler job (system handle, all orgs).
import { sql, type Insertable, type Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import type { AnalyticsReportsTable } from '../../tables/analytics.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type NewReport = Omit<Insertable<AnalyticsReportsTable>, 'organization_id'>;
export type ReportChanges = Updateable<AnalyticsReportsTable>;

/** Serializes report creation of one organization until the transaction ends. */
export async function lockOrganizationReports(db: TenantDb, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('analytics_reports'), hashtext(${orgId}))`.execute(db);
}

export async function countReports(db: TenantDb, orgId: string): Promise<number> {
  const r = await tenant(db.selectFrom('analytics_reports'), orgId)
    .select(sql<string>`count(*)::int8`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export function insertReport(db: TenantDb, orgId: string, report: NewReport) {
  return db
    .insertInto('analytics_reports')
    .values({ ...report, organization_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listReports(db: TenantDb, orgId: string) {
  return tenant(db.selectFrom('analytics_reports'), orgId).selectAll().orderBy('created_at').orderBy('id').execute();
}

export function findReport(db: TenantDb, orgId: string, id: string, forUpdate = false) {
  const q = tenant(db.selectFrom('analytics_reports'), orgId).selectAll().where('id', '=', id);
  return (forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function updateReport(db: TenantDb, orgId: string, id: string, changes: ReportChanges) {
  return tenant(db.updateTable('analytics_reports'), orgId)
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteReport(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  const r = await tenant(db.deleteFrom('analytics_reports'), orgId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

// System handle: the scheduler finds the due reports of every organization.
/** Active reports whose next run is due, across organizations (the scheduler job's system handle). */
export function dueReports(db: Db, now: Date, limit: number) {
  return db
    .selectFrom('analytics_reports')
    .select(['id', 'organization_id'])
    .where('active', '=', true)
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('retry_at', 'is', null), eb('retry_at', '<=', now)]))
    .orderBy('next_run_at')
    .limit(limit)
    .execute();
}

/** A refused send: one more failure, and the next try not before `now` + base × 2^(failures − 1), at most `capMs`. */
export async function recordReportFailure(db: TenantDb, orgId: string, id: string, now: Date, backoff: { baseMs: number; capMs: number }) {
  return tenant(db.updateTable('analytics_reports'), orgId)
    .set({
      send_failures: sql<number>`send_failures + 1`,
      retry_at: sql<Date>`${now}::timestamptz + least(${backoff.capMs}::float8, ${backoff.baseMs}::float8 * power(2, send_failures)) * interval '1 millisecond'`,
    })
    .where('id', '=', id)
    .returning(['send_failures', 'retry_at'])
    .executeTakeFirst();
}

export type ReportRow = Awaited<ReturnType<typeof listReports>>[number];
