// SQL for the pass-through charges ledger (migration 0052): the monthly fees of what is billable (a REGISTERED
// campaign with a monthly fee, an ACTIVE number lease with a monthly cost), the one-time fees (vetting, brand
// registration, campaign vetting), and the charges per usage bucket. Writes never double-charge: the ledger is
// unique on (kind, reference_id, period_start) and every insert is `on conflict do nothing`.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../database.ts';
import type { ChargeKind } from '../../tables/billing.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

/** The UTC day of `now`, as SQL. */
const dayOf = (now: Date) => sql`((${now}::timestamptz at time zone 'UTC')::date)`;

/**
 * What is billable monthly, as (kind, organization_id, reference_id, brand_id, campaign_id, amount_units, anchor):
 * `anchor` is the UTC day billing started, whose monthly anniversaries start each billed month.
 * - a campaign while REGISTERED (not SUSPENDED, EXPIRED, REJECTED) and its sender ID not DEACTIVATED (its number
 *   released: nothing can send under it any more): its `monthly_fee` from `registered_at`;
 * - a purchased number while its lease is ACTIVE (not RELEASED): its `monthly_cost` from `billing_started_at`,
 *   belonging to its sender's latest campaign (and that campaign's brand). Imported numbers have no monthly cost
 *   (the organization pays its own provider account).
 * `campaigns`/`numbers` narrow each kind (false leaves it out).
 */
function billable(campaigns: RawBuilder<boolean>, numbers: RawBuilder<boolean>) {
  return sql`
    select 'campaign_monthly'::text as kind, c.organization_id, c.id as reference_id, c.brand_registration_id::text as brand_id,
      c.id::text as campaign_id, round(c.monthly_fee * 10000)::int8 as amount_units, (c.registered_at at time zone 'UTC')::date as anchor
    from campaign_registrations c
    where c.status = 'REGISTERED' and c.monthly_fee is not null and c.registered_at is not null and ${campaigns}
      and not exists (select 1 from sender_ids s where s.organization_id = c.organization_id and s.id = c.sender_id and s.status = 'DEACTIVATED')
    union all
    select 'number_monthly', n.organization_id, n.id, latest.brand_id, latest.campaign_id, round(n.monthly_cost * 10000)::int8,
      (n.billing_started_at at time zone 'UTC')::date
    from sender_numbers n
    left join lateral (
      select c.brand_registration_id::text as brand_id, c.id::text as campaign_id from campaign_registrations c
      where c.organization_id = n.organization_id and c.sender_id = n.sender_id
      order by c.submitted_at desc, c.id desc limit 1
    ) latest on true
    where n.status = 'ACTIVE' and n.monthly_cost is not null and n.billing_started_at is not null and ${numbers}`;
}

/**
 * Charges the billing month `now` falls in of each billable item chosen (the month from the latest anniversary of
 * its anchor on or before today, to the next one; anniversaries computed from the anchor, so a 31st bills on the
 * last day of shorter months and returns to the 31st). A month already charged is left alone. Answers the number
 * of charges written.
 */
async function chargeCurrentMonthsWhere(db: Db, campaigns: RawBuilder<boolean>, numbers: RawBuilder<boolean>, now: Date): Promise<number> {
  const today = dayOf(now);
  const r = await sql`
    with items as (${billable(campaigns, numbers)}),
    months as (
      select i.*, (select case when (i.anchor + make_interval(months => k0))::date > ${today} then k0 - 1 else k0 end
                   from (select ((extract(year from ${today}) - extract(year from i.anchor)) * 12
                                 + extract(month from ${today}) - extract(month from i.anchor))::int as k0) d) as k
      from items i
    )
    insert into pass_through_charges (organization_id, kind, reference_id, brand_id, campaign_id, amount_units, period_start, period_end, charged_at)
    select organization_id, kind, reference_id, brand_id, campaign_id, amount_units,
      (anchor + make_interval(months => k))::date, (anchor + make_interval(months => k + 1))::date, ${now}
    from months where k >= 0
    on conflict (kind, reference_id, period_start) do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

// System handle: the monthly billing job charges every organization's billable campaigns and numbers in one statement.
/** Charges every organization's current billing month of each REGISTERED campaign and ACTIVE number (idempotent). */
export function chargeCurrentMonths(db: Db, now: Date): Promise<number> {
  return chargeCurrentMonthsWhere(db, sql<boolean>`true`, sql<boolean>`true`, now);
}

/** Charges the current month of one campaign (when REGISTERED) and of its sender's ACTIVE numbers: the day they become billable. */
export function chargeCampaignMonths(db: TenantDb, organizationId: string, campaign: { id: string; senderId: string }, now: Date) {
  return chargeCurrentMonthsWhere(
    db,
    sql<boolean>`c.organization_id = ${organizationId} and c.id = ${campaign.id}`,
    sql<boolean>`n.organization_id = ${organizationId} and n.sender_id = ${campaign.senderId}`,
    now,
  );
}

/** Charges the current month of a sender's ACTIVE numbers (a toll-free number's verification approved). */
export function chargeNumberMonths(db: TenantDb, organizationId: string, senderId: string, now: Date) {
  return chargeCurrentMonthsWhere(
    db,
    sql<boolean>`false`,
    sql<boolean>`n.organization_id = ${organizationId} and n.sender_id = ${senderId}`,
    now,
  );
}

/** A one-time fee of a registration (`reference_id`), charged on `now`'s UTC day: once, however often it is written. */
export type OneTimeCharge = {
  kind: Extract<ChargeKind, 'vetting' | 'brand_registration' | 'campaign_vetting'>;
  referenceId: string;
  brandId: string;
  campaignId: string | null;
  amountUnits: number;
};

export async function chargeOnce(db: TenantDb, organizationId: string, charge: OneTimeCharge, now: Date): Promise<void> {
  await sql`
    insert into pass_through_charges (organization_id, kind, reference_id, brand_id, campaign_id, amount_units, period_start, period_end, charged_at)
    values (${organizationId}, ${charge.kind}, ${charge.referenceId}, ${charge.brandId}, ${charge.campaignId}, ${charge.amountUnits}, ${dayOf(now)}, ${dayOf(now)} + 1, ${now})
    on conflict (kind, reference_id, period_start) do nothing`.execute(db);
}

type ChargeSums = { bucket: Date; kind: ChargeKind; charges: number; units: number };

/**
 * The organization's charges whose period starts in [from, to) (UTC midnights), per UTC day or month of that start
 * and kind; `brandId`/`campaignId` keep the charges belonging to that registration.
 */
export async function chargesByBucket(
  db: TenantDb,
  organizationId: string,
  f: { from: Date; to: Date; brandId?: string | undefined; campaignId?: string | undefined },
  granularity: 'day' | 'month',
): Promise<ChargeSums[]> {
  const bucket = sql<Date>`(date_trunc(${sql.lit(granularity)}, period_start::timestamp) at time zone 'UTC')`;
  let q = tenant(db.selectFrom('pass_through_charges'), organizationId)
    .select([bucket.as('bucket'), 'kind', sql<string>`count(*)::int8`.as('charges'), sql<string>`sum(amount_units)::int8`.as('units')])
    .where(sql<boolean>`period_start >= ${dayOf(f.from)} and period_start < ${dayOf(f.to)}`);
  if (f.brandId !== undefined) q = q.where('brand_id', '=', f.brandId);
  if (f.campaignId !== undefined) q = q.where('campaign_id', '=', f.campaignId);
  const rows = await q.groupBy([bucket, 'kind']).execute();
  return rows.map((r) => ({ bucket: r.bucket, kind: r.kind, charges: Number(r.charges), units: Number(r.units) }));
}
