// Pass-through fees (issue 32): the registry's and carriers' fees, charged at cost into the ledger that usage reads
// (src/db/queries/billing/charges.ts; GET /v1/analytics/usage lines campaign_fee, number_fee, vetting_fee,
// brand_fee, campaign_vetting_fee).
// - A campaign's monthly fee from the day it is REGISTERED, and a purchased number's monthly cost from the day its
//   lease goes ACTIVE (that transition, or a toll-free number's verification approved: src/domain/submissions/
//   review.ts): the first month is charged in that transaction, each later one on its monthly anniversary by the billing.monthly-fees job (src/jobs/billing.ts)
//   while the campaign stays REGISTERED / the number is not RELEASED.
// - One-time fees, each in its request's transaction and due whatever the outcome, as the registry bills them: a
//   brand registration's fee, its external vetting fee when it asks for vetting (`requestVetting`), and a campaign
//   registration's vetting fee (every campaign submitted, a resubmission included).
import type { Db } from '../../db/database.ts';
import * as charges from '../../db/queries/billing/charges.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** The sandbox registry's monthly fee of a standard 10DLC campaign (USD, stored on the campaign as `monthlyFee`). */
export const CAMPAIGN_MONTHLY_FEE = '10.00';

/**
 * The Campaign Registry's one-time fees, in 1/10,000 USD (src/domain/messaging/pricing.ts): a brand's external
 * (standard) vetting 40.00 USD, a brand registration 4.00 USD, a campaign's vetting 15.00 USD.
 */
const VETTING_FEE_UNITS = 400_000;
const BRAND_REGISTRATION_FEE_UNITS = 40_000;
const CAMPAIGN_VETTING_FEE_UNITS = 150_000;

/** A campaign became billable (REGISTERED, its sender's purchased numbers ACTIVE): the month starting today. */
export function chargeCampaignMonth(db: TenantDb, organizationId: string, campaign: { id: string; senderId: string }, now: Date) {
  return charges.chargeCampaignMonths(db, organizationId, campaign, now);
}

/** A sender's purchased numbers became billable without a campaign (a toll-free verification approved). */
export function chargeNumberMonth(db: TenantDb, organizationId: string, senderId: string, now: Date) {
  return charges.chargeNumberMonths(db, organizationId, senderId, now);
}

/** A brand registration was sent to the registry; `vetting`: with external vetting ordered. */
export async function chargeBrandRegistration(db: TenantDb, organizationId: string, brandId: string, vetting: boolean, now: Date) {
  const brand = { referenceId: brandId, brandId, campaignId: null };
  await charges.chargeOnce(db, organizationId, { kind: 'brand_registration', amountUnits: BRAND_REGISTRATION_FEE_UNITS, ...brand }, now);
  if (vetting) await charges.chargeOnce(db, organizationId, { kind: 'vetting', amountUnits: VETTING_FEE_UNITS, ...brand }, now);
}

/** A campaign registration was sent to the registry, which vets it. */
export function chargeCampaignVetting(db: TenantDb, organizationId: string, campaign: { id: string; brandId: string }, now: Date) {
  return charges.chargeOnce(
    db,
    organizationId,
    {
      kind: 'campaign_vetting',
      referenceId: campaign.id,
      brandId: campaign.brandId,
      campaignId: campaign.id,
      amountUnits: CAMPAIGN_VETTING_FEE_UNITS,
    },
    now,
  );
}

/**
 * The monthly run (every organization, system handle): charges the billing month `now` falls in of every REGISTERED
 * campaign and ACTIVE purchased number not charged for it yet; answers how many charges it wrote. Idempotent: a
 * retry, a second worker or a second run the same month writes nothing more.
 */
export function chargeMonthlyFees(db: Db, now = new Date()): Promise<number> {
  return charges.chargeCurrentMonths(db, now);
}
