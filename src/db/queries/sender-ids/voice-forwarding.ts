// SQL for a sender's inbound-call forwarding (sender_voice_forwardings, migration 0012). Tenant-scoped through tenant().
import type { Selectable } from 'kysely';
import type { SenderVoiceForwardingsTable } from '../../tables/sender-ids.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type VoiceForwardingRow = Selectable<SenderVoiceForwardingsTable>;

export function getVoiceForwarding(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<VoiceForwardingRow | undefined> {
  const q = tenant(db.selectFrom('sender_voice_forwardings'), organizationId).selectAll().where('sender_id', '=', senderId);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** Enables forwarding to `destination` (first time or again), confirmed by the provider at `syncedAt`. */
export function enableVoiceForwarding(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  destination: string,
  syncedAt: Date,
): Promise<VoiceForwardingRow> {
  return db
    .insertInto('sender_voice_forwardings')
    .values({ organization_id: organizationId, sender_id: senderId, enabled: true, destination, synced_at: syncedAt, updated_at: syncedAt })
    .onConflict((oc) => oc.column('sender_id').doUpdateSet({ enabled: true, destination, synced_at: syncedAt, updated_at: syncedAt }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Turns forwarding off, keeping the destination. */
export function disableVoiceForwarding(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  syncedAt: Date,
): Promise<VoiceForwardingRow | undefined> {
  return tenant(db.updateTable('sender_voice_forwardings'), organizationId)
    .set({ enabled: false, synced_at: syncedAt, updated_at: syncedAt })
    .where('sender_id', '=', senderId)
    .returningAll()
    .executeTakeFirst();
}
