// SQL for the webhook history's retention: events, their deliveries and the attempts log, removed a fixed number of
// days after they happened (src/domain/webhooks/retention.ts). Crosses organizations (the purge job's system
// handle), one organization at a time so each delete goes through the organization's own index.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';

/** Rows per delete statement: bounds each statement's locks and its cascade's work. */
const CHUNK = 5_000;

/** Every organization's id: each one's history is purged on its own (an organization without any costs two probes). */
export async function organizationIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
}

/**
 * Deletes the organization's events raised before `before`, CHUNK at a time; their deliveries and those
 * deliveries' attempts go with them (ON DELETE CASCADE). Returns how many events were deleted.
 */
export async function deleteEventsBefore(db: Db, orgId: string, before: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await sql`
      delete from webhook_events where id in (
        select id from webhook_events where organization_id = ${orgId} and created_at < ${before} limit ${CHUNK})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < CHUNK) return deleted;
  }
}

/** Deletes the organization's test attempts (no delivery behind them) made before `before`; returns how many. */
export async function deleteTestAttemptsBefore(db: Db, orgId: string, before: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await sql`
      delete from webhook_delivery_attempts where id in (
        select id from webhook_delivery_attempts
        where organization_id = ${orgId} and delivery_id is null and attempted_at < ${before} limit ${CHUNK})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < CHUNK) return deleted;
  }
}
