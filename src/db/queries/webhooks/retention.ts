// SQL for the webhook history's retention: events, their deliveries and the attempts log, removed a fixed number of
// days after they happened (src/domain/webhooks/retention.ts). Crosses organizations (the purge job's system
// handle), one organization at a time so each delete goes through the organization's own index.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../database.ts';

/** Rows per delete statement: bounds each statement's locks and its cascade's work. */
const CHUNK = 5_000;

// System handle: the retention job walks every organization.
/** Every organization's id: each one's history is purged on its own (an organization without any costs two probes). */
export async function organizationIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
}

/** Deletes the rows of `table` whose ids `doomed` selects (at most CHUNK), again until fewer remain; returns how many. */
async function deleteInChunks(db: Db, table: string, doomed: RawBuilder<unknown>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await sql`delete from ${sql.table(table)} where id in (${doomed} limit ${CHUNK})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < CHUNK) return deleted;
  }
}

// System handle: the retention job walks every organization.
/**
 * Deletes the organization's events raised more than `days` ago; their deliveries and those deliveries' attempts go
 * with them (ON DELETE CASCADE). Returns how many events were deleted.
 */
export function deleteEventsOlderThan(db: Db, orgId: string, days: number): Promise<number> {
  return deleteInChunks(
    db,
    'webhook_events',
    sql`
    select id from webhook_events where organization_id = ${orgId} and created_at < now() - make_interval(days => ${days})`,
  );
}

// System handle: the retention job walks every organization.
/** Deletes the organization's test attempts (no delivery behind them) made more than `days` ago; returns how many. */
export function deleteTestAttemptsOlderThan(db: Db, orgId: string, days: number): Promise<number> {
  return deleteInChunks(
    db,
    'webhook_delivery_attempts',
    sql`
    select id from webhook_delivery_attempts
    where organization_id = ${orgId} and delivery_id is null and attempted_at < now() - make_interval(days => ${days})`,
  );
}
