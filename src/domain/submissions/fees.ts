// Pass-through fees (issue 32): the registry's and carriers' fees, charged at cost into the ledger that usage reads
// (src/db/queries/billing/charges.ts; GET /v1/analytics/usage lines campaign_fee, number_fee, vetting_fee).
// - A campaign's monthly fee from the day it is REGISTERED, and a purchased number's monthly cost from the day its
//   lease goes ACTIVE (that transition, or a toll-free number's verification approved: src/domain/submissions/
//   review.ts): the first month is charged in that transaction, each later one on its monthly anniversary by the billing.monthly-fees job (src/jobs/billing.ts)
//   while the campaign stays REGISTERED / the number is not RELEASED.
// - The one-time vetting fee when a brand registration asks for vetting (`requestVetting`), in that request's
//   transaction (due whatever the vetting's outcome, as the registry bills it).
import type { Db } from '../../db/database.ts';
import * as charges from '../../db/queries/billing/charges.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** The sandbox registry's monthly fee of a standard 10DLC campaign (USD, stored on the campaign as `monthlyFee`). */
export const CAMPAIGN_MONTHLY_FEE = '10.00';

/**
 * External vetting, one time per request: The Campaign Registry's published standard-vetting fee, 40.00 USD, in
 * 1/10,000 USD (src/domain/messaging/pricing.ts).
 */
const VETTING_FEE_UNITS = 400_000;

/** A campaign became billable (REGISTERED, its sender's purchased numbers ACTIVE): the month starting today. */
export function chargeCampaignMonth(db: TenantDb, organizationId: string, campaign: { id: string; senderId: string }, now: Date) {
  return charges.chargeCampaignMonths(db, organizationId, campaign, now);
}

/** A sender's purchased numbers became billable without a campaign (a toll-free verification approved). */
export function chargeNumberMonth(db: TenantDb, organizationId: string, senderId: string, now: Date) {
  return charges.chargeNumberMonths(db, organizationId, senderId, now);
}

/** Vetting was requested for this brand registration. */
export function chargeVettingFee(db: TenantDb, organizationId: string, brandId: string, now: Date): Promise<void> {
  return charges.chargeVetting(db, organizationId, brandId, VETTING_FEE_UNITS, now);
}

/**
 * The monthly run (every organization, system handle): charges the billing month `now` falls in of every REGISTERED
 * campaign and ACTIVE purchased number not charged for it yet; answers how many charges it wrote. Idempotent: a
 * retry, a second worker or a second run the same month writes nothing more.
 */
export function chargeMonthlyFees(db: Db, now = new Date()): Promise<number> {
  return charges.chargeCurrentMonths(db, now);
}
