// Recorded business events (POST /v1/events): one row per processed event, with what its triggers did.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { EventsTable } from '../../tables/events.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type EventRow = Selectable<EventsTable>;

export function insertEvent(
  db: TenantDb,
  orgId: string,
  e: {
    name: string;
    contactId: string;
    contactCreated: boolean;
    properties: Record<string, unknown>;
    messageType: string;
    occurredAt: Date;
  },
): Promise<EventRow> {
  return db
    .insertInto('events')
    .values({
      organization_id: orgId,
      name: e.name,
      contact_id: e.contactId,
      contact_created: e.contactCreated,
      properties: JSON.stringify(e.properties),
      message_type: e.messageType,
      occurred_at: e.occurredAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setEventOutcomes(db: TenantDb, orgId: string, id: string, outcomes: unknown[]): Promise<void> {
  await tenant(db.updateTable('events'), orgId)
    .set({ outcomes: JSON.stringify(outcomes) })
    .where('id', '=', id)
    .execute();
}

/** Status of each message (queued or held at acceptance), by id. */
export async function messageStatuses(db: TenantDb, orgId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tenant(db.selectFrom('messages'), orgId).select(['id', 'status']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.status]));
}

// System handle: a savepoint: touches no tenant table.
/** One batch item's savepoint inside the batch's transaction: a failed item leaves nothing behind. */
export const savepoint = (db: Db, name: string) => sql`savepoint ${sql.id(name)}`.execute(db);
// System handle: a savepoint: touches no tenant table.
export const rollbackToSavepoint = (db: Db, name: string) => sql`rollback to savepoint ${sql.id(name)}`.execute(db);
// System handle: a savepoint: touches no tenant table.
export const releaseSavepoint = (db: Db, name: string) => sql`release savepoint ${sql.id(name)}`.execute(db);
