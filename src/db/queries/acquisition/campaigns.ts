// Acquisition campaigns and their enrollments (migration 0020), always scoped to the organization.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import type { AcquisitionCampaignsTable, AcquisitionEnrollmentsTable } from '../../tables/events.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { AcquisitionCampaignStatus, AcquisitionCampaignType } from '../../tables/enums.ts';

export type CampaignRow = Selectable<AcquisitionCampaignsTable>;
export type EnrollmentRow = Selectable<AcquisitionEnrollmentsTable>;
export type CampaignStats = { enrolledCount: number; newContactCount: number; lastEnrolledAt: Date | null };

export const KEYWORD_UNIQUE = 'acquisition_campaigns_keyword_key';

export function listCampaigns(
  db: TenantDb,
  orgId: string,
  f: { status?: AcquisitionCampaignStatus; type?: AcquisitionCampaignType },
): Promise<CampaignRow[]> {
  let q = tenant(db.selectFrom('acquisition_campaigns'), orgId).selectAll();
  if (f.status) q = q.where('status', '=', f.status);
  if (f.type) q = q.where('type', '=', f.type);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export function getCampaign(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<CampaignRow | undefined> {
  const q = tenant(db.selectFrom('acquisition_campaigns'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export function insertCampaign(db: TenantDb, row: Insertable<AcquisitionCampaignsTable>): Promise<CampaignRow> {
  return db.insertInto('acquisition_campaigns').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateCampaign(
  db: TenantDb,
  orgId: string,
  id: string,
  set: Updateable<AcquisitionCampaignsTable>,
): Promise<CampaignRow | undefined> {
  return tenant(db.updateTable('acquisition_campaigns'), orgId)
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteCampaign(db: TenantDb, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('acquisition_campaigns'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

export async function campaignStats(db: TenantDb, orgId: string, campaignId: string): Promise<CampaignStats> {
  const row = await tenant(db.selectFrom('acquisition_enrollments'), orgId)
    .where('campaign_id', '=', campaignId)
    .select((eb) => [
      eb.fn.count<string>('contact_id').distinct().as('enrolled'),
      sql<string>`count(distinct contact_id) filter (where contact_created)`.as('created'),
      eb.fn.max('created_at').as('last'),
    ])
    .executeTakeFirstOrThrow();
  return { enrolledCount: Number(row.enrolled), newContactCount: Number(row.created), lastEnrolledAt: (row.last as Date | null) ?? null };
}

export function findEnrollment(db: TenantDb, orgId: string, campaignId: string, phone: string): Promise<EnrollmentRow | undefined> {
  return tenant(db.selectFrom('acquisition_enrollments'), orgId)
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where('phone', '=', phone)
    .executeTakeFirst();
}

/** Inserts unless this phone is already enrolled in the campaign (then undefined). */
export function insertEnrollment(db: TenantDb, row: Insertable<AcquisitionEnrollmentsTable>): Promise<EnrollmentRow | undefined> {
  return db
    .insertInto('acquisition_enrollments')
    .values(row)
    .onConflict((oc) => oc.constraint('acquisition_enrollments_campaign_phone_key').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function setWelcomeMessage(db: TenantDb, orgId: string, id: string, messageId: string): Promise<void> {
  await tenant(db.updateTable('acquisition_enrollments'), orgId).set({ welcome_message_id: messageId }).where('id', '=', id).execute();
}

// System handle: an advisory lock: touches no tenant table.
/** Serializes enrollments of one phone in one campaign (transaction-scoped advisory lock). */
export async function lockEnrollment(db: Db, campaignId: string, phone: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`acq:${campaignId}:${phone}`}, 0))`.execute(db);
}

/** Contact columns an enrollment fills: the name when it has none, merged attributes, marketing consent. */
export function updateEnrolledContact(
  db: TenantDb,
  orgId: string,
  contactId: string,
  c: { name: string | null; attributes: Record<string, unknown>; consentType: string },
): Promise<unknown> {
  return tenant(db.updateTable('contacts'), orgId)
    .set({
      name: sql`coalesce(name, ${c.name})`,
      attributes: sql`attributes || ${JSON.stringify(c.attributes)}::jsonb`,
      consent_type: c.consentType,
      updated_at: sql`now()`,
    })
    .where('id', '=', contactId)
    .execute();
}

/** ACTIVE KEYWORD campaigns with this keyword on one of these addresses (the sender's number or short code). */
export function keywordCampaigns(db: TenantDb, orgId: string, keyword: string, addresses: string[]): Promise<CampaignRow[]> {
  if (addresses.length === 0) return Promise.resolve([]);
  return tenant(db.selectFrom('acquisition_campaigns'), orgId)
    .selectAll()
    .where('type', '=', 'KEYWORD')
    .where('status', '=', 'ACTIVE')
    .where('keyword', '=', keyword)
    .where('shortcode', 'in', addresses)
    .orderBy('created_at')
    .execute();
}
