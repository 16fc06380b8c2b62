// SQL for landing pages and their submissions. Rules (validation, the state machine, slugs) are the domain's
// (src/domain/landing-pages/); here: rows, through tenant(). The public route finds a page by organization and
// slug through the same tenant-bound queries (it acts for the page's organization).
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { LandingPageState, LandingPageSubmissionsTable, LandingPagesTable } from '../../tables/landing-pages.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type LandingPageRow = Selectable<LandingPagesTable>;
export type LandingPageWithCount = LandingPageRow & { submission_count: number };
export type LandingPageSubmissionRow = Selectable<LandingPageSubmissionsTable>;
export type NewLandingPage = Omit<Insertable<LandingPagesTable>, 'organization_id'>;
export type LandingPagePatch = Omit<Updateable<LandingPagesTable>, 'id' | 'organization_id' | 'created_at'>;

const countOf = sql<number>`(select count(*)::int from landing_page_submissions s where s.landing_page_id = landing_pages.id and s.organization_id = landing_pages.organization_id)`;

export function getPage(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<LandingPageRow | undefined> {
  const qb = tenant(db.selectFrom('landing_pages'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? qb.forUpdate() : qb).executeTakeFirst();
}

export async function submissionCount(db: TenantDb, orgId: string, pageId: string): Promise<number> {
  const row = await tenant(db.selectFrom('landing_page_submissions'), orgId)
    .select(sql<number>`count(*)::int`.as('n'))
    .where('landing_page_id', '=', pageId)
    .executeTakeFirstOrThrow();
  return row.n;
}

export function listPages(
  db: TenantDb,
  orgId: string,
  status: LandingPageState | undefined,
  page: { limit: number; offset: number },
): Promise<Page<LandingPageWithCount>> {
  let qb = tenant(db.selectFrom('landing_pages'), orgId).selectAll().select(countOf.as('submission_count'));
  if (status) qb = qb.where('status', '=', status);
  return listPage(newestFirst(qb), page);
}

/** A page of the organization by slug, any state (the public route checks the state). */
export function pageBySlug(db: TenantDb, orgId: string, slug: string): Promise<LandingPageRow | undefined> {
  return tenant(db.selectFrom('landing_pages'), orgId).selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Slugs of the organization equal to `base` or `base-<n>` (for picking a free one). */
export async function slugsLike(db: TenantDb, orgId: string, base: string): Promise<Set<string>> {
  const rows = await tenant(db.selectFrom('landing_pages'), orgId)
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base.replaceAll('_', '\\_')}-%`)]))
    .execute();
  return new Set(rows.map((r) => r.slug));
}

/** Serializes slug choices of one organization for the rest of the transaction. */
export async function lockSlugs(db: TenantDb, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`landing_pages:${orgId}`}, 0))`.execute(db);
}

export function insertPage(db: TenantDb, orgId: string, page: NewLandingPage): Promise<LandingPageRow> {
  return db
    .insertInto('landing_pages')
    .values({ ...page, organization_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updatePage(db: TenantDb, orgId: string, id: string, patch: LandingPagePatch): Promise<LandingPageRow | undefined> {
  return tenant(db.updateTable('landing_pages'), orgId)
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the page (its submissions go with it, by the foreign key). */
export async function deletePage(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  await tenant(db.deleteFrom('landing_page_submissions'), orgId).where('landing_page_id', '=', id).execute();
  const row = await tenant(db.deleteFrom('landing_pages'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

export function insertSubmission(
  db: TenantDb,
  orgId: string,
  row: Omit<Insertable<LandingPageSubmissionsTable>, 'organization_id'>,
): Promise<LandingPageSubmissionRow> {
  return db
    .insertInto('landing_page_submissions')
    .values({ ...row, organization_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listSubmissions(
  db: TenantDb,
  orgId: string,
  pageId: string,
  page: { limit: number; offset: number },
): Promise<Page<LandingPageSubmissionRow>> {
  return listPage(
    newestFirst(tenant(db.selectFrom('landing_page_submissions'), orgId).selectAll().where('landing_page_id', '=', pageId)),
    page,
  );
}
