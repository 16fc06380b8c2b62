// Tap counts per intent value (GET /v1/analytics/intents): every value tapped in the range, most tapped first (ties
// by value), with its dictionary intent (null when the value is not in the dictionary).
import { tapCounts } from '../../db/queries/analytics/taps.ts';
import type { Tenant } from '../tenant.ts';
import { periodOf, type RangeQuery } from './figures.ts';

export async function getIntentCounts(tenant: Tenant, query: RangeQuery) {
  const period = periodOf(query);
  const intents = await tapCounts(tenant.db, tenant.organizationId, { from: period.from, to: period.to });
  return { period, totalTaps: intents.reduce((n, i) => n + i.taps, 0), intents };
}
