// How long the webhook history is kept (documented on GET /v1/webhook-endpoints/{id}/deliveries): an event, its
// deliveries and every attempt at them are removed WEBHOOK_RETENTION_DAYS after the event was raised, and a test
// attempt that long after it was made — as Stripe keeps events 30 days. Without it the three tables grew by a row
// each per event for ever. The last retry of an event is due at most ~30 h after it was raised (the documented
// schedule with its jitter), so no delivery still in progress is removed.
import type { Db } from '../../db/database.ts';
import * as q from '../../db/queries/webhooks/retention.ts';

export const WEBHOOK_RETENTION_DAYS = 30;

/** The daily purge (src/jobs/webhooks.ts): every organization's history older than the retention. */
export async function purgeExpiredWebhookHistory(db: Db): Promise<{ events: number; testAttempts: number }> {
  let events = 0;
  let testAttempts = 0;
  for (const orgId of await q.organizationIds(db)) {
    events += await q.deleteEventsOlderThan(db, orgId, WEBHOOK_RETENTION_DAYS);
    testAttempts += await q.deleteTestAttemptsOlderThan(db, orgId, WEBHOOK_RETENTION_DAYS);
  }
  return { events, testAttempts };
}
