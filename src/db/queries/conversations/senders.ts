// SQL for the sender IDs messages go from. Tenant-scoped through tenant(), except the two lookups of the
// carrier side, which cross organizations by construction: routing an inbound message by the number it was
// sent to, and the dispatcher's batch of senders.
import type { Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { SenderIdsTable } from '../../tables/core.ts';
import { tenant } from '../../tenant.ts';

export type SenderRow = Selectable<SenderIdsTable>;

export function getSender(db: Db, orgId: string, id: string): Promise<SenderRow | undefined> {
  return tenant(db.selectFrom('sender_ids'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** The organization's oldest ACTIVE, send-ready sender (its default). */
export function oldestActiveSender(db: Db, orgId: string): Promise<SenderRow | undefined> {
  return tenant(db.selectFrom('sender_ids'), orgId)
    .selectAll()
    .where('status', '=', 'ACTIVE')
    .where('send_ready', '=', true)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** System handle: the sender that owns a phone number, whatever its organization (inbound routing). A sender
 * with a number always has its provider (a number purchase or import sets it). */
export async function senderByPhoneNumber(db: Db, phoneNumber: string): Promise<(SenderRow & { provider: string }) | undefined> {
  const row = await db
    .selectFrom('sender_ids')
    .selectAll()
    // An RCS agent is written to at its agent id (RBM's agentId), which is its address.
    .where((eb) => eb.or([eb('phone_number', '=', phoneNumber), eb.and([eb('type', '=', 'RCS_AGENT'), eb('address', '=', phoneNumber)])]))
    .where('provider', 'is not', null)
    .orderBy('phone_number')
    .executeTakeFirst();
  return row as (SenderRow & { provider: string }) | undefined;
}

/** System handle: senders by id, whatever their organization (the dispatcher's batch). */
export function sendersByIds(db: Db, ids: string[]): Promise<SenderRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('sender_ids').selectAll().where('id', 'in', ids).execute();
}
