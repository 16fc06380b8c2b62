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

/**
 * The sender a message goes from: the one named (in any status: the caller checks it), or without a name the
 * organization's default, its oldest ACTIVE, send-ready sender. A query, so the send's one read embeds it
 * (loadSendFacts) and every other choice of a default runs the same one.
 */
export function senderChoice(db: Db, orgId: string, senderId: string | undefined) {
  const q = tenant(db.selectFrom('sender_ids'), orgId).selectAll();
  if (senderId) return q.where('id', '=', senderId);
  return q.where('status', '=', 'ACTIVE').where('send_ready', '=', true).orderBy('created_at').orderBy('id').limit(1);
}

/** The organization's oldest ACTIVE, send-ready sender (its default). */
export function oldestActiveSender(db: Db, orgId: string): Promise<SenderRow | undefined> {
  return senderChoice(db, orgId, undefined).executeTakeFirst();
}

/** System handle: the sender that owns a phone number, whatever its organization (inbound routing). A sender
 * with a number always has its provider (a number purchase or import sets it). */
export async function senderByPhoneNumber(db: Db, phoneNumber: string): Promise<(SenderRow & { provider: string }) | undefined> {
  const row = await db
    .selectFrom('sender_ids')
    .selectAll()
    .where('phone_number', '=', phoneNumber)
    .where('provider', 'is not', null)
    .executeTakeFirst();
  return row as (SenderRow & { provider: string }) | undefined;
}

/** System handle: senders by id, whatever their organization (the dispatcher's batch). */
export function sendersByIds(db: Db, ids: string[]): Promise<SenderRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('sender_ids').selectAll().where('id', 'in', ids).execute();
}
