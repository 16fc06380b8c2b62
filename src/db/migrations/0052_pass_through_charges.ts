// Pass-through fees billed into usage (issue 32): one ledger row per fee charged, read by GET /v1/analytics/usage.
// - kind: campaign_monthly (a REGISTERED campaign's monthly registry fee), number_monthly (an ACTIVE purchased
//   number's monthly fee), vetting (a brand's one-time external vetting fee).
// - reference_id: the campaign registration, number lease or brand registration charged for.
// - brand_id / campaign_id: the registrations the charge belongs to (text, as the rollups' attribution columns, so
//   the usage filters compare strings and an id that is not a uuid matches nothing instead of failing).
// - amount_units: 1/10,000 USD, as every price of src/domain/messaging/pricing.ts.
// - period_start / period_end: the UTC days the charge covers, end exclusive (a month: from one anniversary of the
//   day billing started to the next; a one-time fee: its day).
// - unique (kind, reference_id, period_start): a month is charged once, whoever writes it first (the transition's
//   transaction or the monthly job, retried or run by two workers at once: `on conflict do nothing`).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table pass_through_charges (
    id uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations(id) on delete cascade,
    kind text not null check (kind in ('campaign_monthly', 'number_monthly', 'vetting')),
    reference_id uuid not null,
    brand_id text,
    campaign_id text,
    amount_units int8 not null check (amount_units >= 0),
    currency text not null default 'USD' check (currency = 'USD'),
    period_start date not null,
    period_end date not null check (period_end > period_start),
    charged_at timestamptz not null default now(),
    unique (kind, reference_id, period_start)
  )`.execute(db);
  // Usage reads an organization's charges by the day their period starts.
  await sql`create index pass_through_charges_usage_idx on pass_through_charges (organization_id, period_start)`.execute(db);
}
