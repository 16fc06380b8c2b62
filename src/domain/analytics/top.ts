// The leaders of the 30 days ending today (GET /v1/analytics/top): at most 5 blasts and sender IDs by messages sent,
// bots by sessions, intent values by taps; ties by id or value ascending.
import { topBlasts, topBots } from '../../db/queries/analytics/blasts.ts';
import { tapCounts } from '../../db/queries/analytics/taps.ts';
import type { Tenant } from '../tenant.ts';
import { listSenderFigures, periodOf } from './figures.ts';

const TOP_LIMIT = 5;

export async function getTop(tenant: Tenant, now = new Date()) {
  const period = periodOf({}, now);
  const { db, organizationId: orgId } = tenant;
  const [blasts, bots, intents, senders] = await Promise.all([
    topBlasts(db, orgId, period.from, period.to, TOP_LIMIT),
    topBots(db, orgId, period.from, period.to, TOP_LIMIT),
    tapCounts(db, orgId, { from: period.from, to: period.to }, { limit: TOP_LIMIT }),
    listSenderFigures(tenant, { startDate: period.startDate, endDate: period.endDate }),
  ]);
  return { period, blasts, bots, intents, senders: senders.slice(0, TOP_LIMIT) };
}

export type Top = Awaited<ReturnType<typeof getTop>>;
