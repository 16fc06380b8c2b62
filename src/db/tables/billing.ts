// Pass-through charges ledger (migrations 0052, 0067): one row per carrier, registry or vetting fee charged at cost.
import type { ColumnType, Generated } from 'kysely';
import type { TimestampDefault } from './columns.ts';

export type ChargeKind = 'campaign_monthly' | 'number_monthly' | 'vetting' | 'brand_registration' | 'campaign_vetting';

interface PassThroughChargesTable {
  id: Generated<string>;
  organization_id: string;
  kind: ChargeKind;
  /** The campaign registration, number lease or brand registration charged for. */
  reference_id: string;
  brand_id: string | null;
  campaign_id: string | null;
  /** int8: 1/10,000 USD, read as a string by pg. */
  amount_units: ColumnType<string, number | string, never>;
  currency: Generated<string>;
  /** date: the first UTC day the charge covers. */
  period_start: ColumnType<Date, string, never>;
  /** date: the UTC day after the last one it covers. */
  period_end: ColumnType<Date, string, never>;
  charged_at: TimestampDefault;
}

export interface BillingTables {
  pass_through_charges: PassThroughChargesTable;
}
