// Public sign-ups waiting for the handset's YES (migration 0040), scoped to the organization, except the purge of
// expired rows, which crosses organizations (system handle).
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { AcquisitionPendingEnrollmentsTable } from '../../tables/events.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type PendingRow = Selectable<AcquisitionPendingEnrollmentsTable>;

/**
 * Stores the sign-up unless one of this phone in this campaign still waits (then undefined: nothing is sent
 * again). An expired one is replaced.
 */
export function insertPending(db: TenantDb, row: Insertable<AcquisitionPendingEnrollmentsTable>): Promise<PendingRow | undefined> {
  return db
    .insertInto('acquisition_pending_enrollments')
    .values(row)
    .onConflict((oc) =>
      oc
        .constraint('acquisition_pending_enrollments_campaign_phone_key')
        .doUpdateSet((eb) => ({
          id: sql`gen_random_uuid()`,
          contact_id: eb.ref('excluded.contact_id'),
          sender_id: eb.ref('excluded.sender_id'),
          contact_created: eb.ref('excluded.contact_created'),
          name: eb.ref('excluded.name'),
          attributes: eb.ref('excluded.attributes'),
          tag_ids: eb.ref('excluded.tag_ids'),
          consent_text: eb.ref('excluded.consent_text'),
          ip: eb.ref('excluded.ip'),
          user_agent: eb.ref('excluded.user_agent'),
          confirmation_message_id: null,
          created_at: sql`now()`,
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('acquisition_pending_enrollments.expires_at', '<=', sql<Date>`now()`),
    )
    .returningAll()
    .executeTakeFirst();
}

export async function setConfirmationMessage(db: TenantDb, orgId: string, id: string, messageId: string): Promise<void> {
  await tenant(db.updateTable('acquisition_pending_enrollments'), orgId)
    .set({ confirmation_message_id: messageId })
    .where('id', '=', id)
    .execute();
}

/** The live sign-ups of `phone` whose confirmation request went from `senderId`, oldest first, locked. */
export function livePendingForReply(db: TenantDb, orgId: string, phone: string, senderId: string, now: Date): Promise<PendingRow[]> {
  return tenant(db.selectFrom('acquisition_pending_enrollments'), orgId)
    .selectAll()
    .where('phone', '=', phone)
    .where('sender_id', '=', senderId)
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .forUpdate()
    .execute();
}

export async function deletePending(db: TenantDb, orgId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tenant(db.deleteFrom('acquisition_pending_enrollments'), orgId).where('id', 'in', ids).execute();
}

/** Sign-ups of the campaign still waiting (not expired at `now`). */
export async function countLivePending(db: TenantDb, orgId: string, campaignId: string, now: Date): Promise<number> {
  const row = await tenant(db.selectFrom('acquisition_pending_enrollments'), orgId)
    .where('campaign_id', '=', campaignId)
    .where('expires_at', '>', now)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// System handle: the purge job deletes the expired pending enrollments of every organization.
/** Removes every organization's expired sign-ups (they are bounded by the campaigns' hourly limits); answers how many. */
export async function purgeExpiredPending(db: Db): Promise<number> {
  const res = await db
    .deleteFrom('acquisition_pending_enrollments')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
