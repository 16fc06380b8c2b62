// SQL for the Submissions section: RCS launch requests, sender submissions, brand and campaign registrations.
// Tenant-scoped through tenant(); workers pass a tenant handle (tenantFor) too.
import { newestFirst } from '../../paging.ts';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type {
  BrandRegistrationsTable,
  CampaignRegistrationsTable,
  RcsAgentLaunchesTable,
  SenderSubmissionsTable,
} from '../../tables/submissions.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type LaunchRow = Selectable<RcsAgentLaunchesTable>;
export type SubmissionRow = Selectable<SenderSubmissionsTable>;
export type BrandRow = Selectable<BrandRegistrationsTable>;
export type CampaignRow = Selectable<CampaignRegistrationsTable>;

function getLaunch(db: TenantDb, organizationId: string, senderId: string): Promise<LaunchRow | undefined> {
  return tenant(db.selectFrom('rcs_agent_launches'), organizationId).selectAll().where('sender_id', '=', senderId).executeTakeFirst();
}

/** Records the first launch request of a sender; a repeated one keeps the first time. */
export async function recordLaunch(db: TenantDb, organizationId: string, senderId: string, at: Date): Promise<LaunchRow> {
  await db
    .insertInto('rcs_agent_launches')
    .values({ sender_id: senderId, organization_id: organizationId, requested_at: at })
    .onConflict((oc) => oc.column('sender_id').doNothing())
    .execute();
  return (await getLaunch(db, organizationId, senderId))!;
}

export function latestSubmission(db: TenantDb, organizationId: string, senderId: string): Promise<SubmissionRow | undefined> {
  return newestFirst(tenant(db.selectFrom('sender_submissions'), organizationId).selectAll().where('sender_id', '=', senderId))
    .limit(1)
    .executeTakeFirst();
}

export function insertSubmission(
  db: TenantDb,
  organizationId: string,
  row: Omit<Insertable<SenderSubmissionsTable>, 'organization_id'>,
): Promise<SubmissionRow> {
  return db
    .insertInto('sender_submissions')
    .values({ ...row, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function latestBrand(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<BrandRow | undefined> {
  const q = newestFirst(tenant(db.selectFrom('brand_registrations'), organizationId).selectAll().where('sender_id', '=', senderId)).limit(
    1,
  );
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function insertBrand(
  db: TenantDb,
  organizationId: string,
  row: Omit<Insertable<BrandRegistrationsTable>, 'organization_id'>,
): Promise<BrandRow> {
  return db
    .insertInto('brand_registrations')
    .values({ ...row, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function latestCampaign(db: TenantDb, organizationId: string, senderId: string): Promise<CampaignRow | undefined> {
  return newestFirst(tenant(db.selectFrom('campaign_registrations'), organizationId).selectAll().where('sender_id', '=', senderId))
    .limit(1)
    .executeTakeFirst();
}

export function insertCampaign(
  db: TenantDb,
  organizationId: string,
  row: Omit<Insertable<CampaignRegistrationsTable>, 'organization_id'>,
): Promise<CampaignRow> {
  return db
    .insertInto('campaign_registrations')
    .values({ ...row, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function getBrand(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<BrandRow | undefined> {
  const q = tenant(db.selectFrom('brand_registrations'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function getCampaign(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CampaignRow | undefined> {
  const q = tenant(db.selectFrom('campaign_registrations'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function getSubmission(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SubmissionRow | undefined> {
  const q = tenant(db.selectFrom('sender_submissions'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function updateBrand(
  db: TenantDb,
  organizationId: string,
  id: string,
  patch: Updateable<BrandRegistrationsTable>,
): Promise<BrandRow> {
  return tenant(db.updateTable('brand_registrations'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateCampaign(
  db: TenantDb,
  organizationId: string,
  id: string,
  patch: Updateable<CampaignRegistrationsTable>,
): Promise<CampaignRow> {
  return tenant(db.updateTable('campaign_registrations'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateSubmission(
  db: TenantDb,
  organizationId: string,
  id: string,
  patch: Updateable<SenderSubmissionsTable>,
): Promise<SubmissionRow> {
  return tenant(db.updateTable('sender_submissions'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
