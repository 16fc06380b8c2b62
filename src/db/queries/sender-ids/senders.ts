// The sender aggregate: every read and write of sender_ids (and its RCS agent details), for every section that
// needs a sender (sender IDs, messaging, bots, templates, acquisition, programs, submissions). Tenant-scoped
// through tenant(), except the two carrier-side lookups at the end, which cross organizations by construction.
// The columns grow with the Sender IDs section's migrations (src/db/migrations/0011_* onwards).
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import type { SenderIdsTable } from '../../tables/core.ts';
import type { RcsAgentProfilesTable } from '../../tables/channels.ts';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { SenderIdProvider, SenderIdStatus, SenderIdType } from '../../tables/enums.ts';

export type SenderRow = Selectable<SenderIdsTable>;
export type NewSender = Omit<Insertable<SenderIdsTable>, 'organization_id'>;

export function insertSender(db: TenantDb, organizationId: string, sender: NewSender): Promise<SenderRow> {
  return db
    .insertInto('sender_ids')
    .values({ ...sender, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function getSender(
  db: TenantDb,
  organizationId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SenderRow | undefined> {
  const q = tenant(db.selectFrom('sender_ids'), organizationId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/**
 * The sender a message goes from: the one named (in any status: the caller checks it), or without a name the
 * organization's default, its oldest ACTIVE, send-ready sender. A query, so the send's one read embeds it
 * (loadSendFacts) and every other choice of a default runs the same one.
 */
export function senderChoice(db: TenantDb, organizationId: string, senderId: string | undefined) {
  const q = tenant(db.selectFrom('sender_ids'), organizationId).selectAll();
  if (senderId) return q.where('id', '=', senderId);
  return q.where('status', '=', 'ACTIVE').where('send_ready', '=', true).orderBy('created_at').orderBy('id').limit(1);
}

/** The organization's oldest ACTIVE, send-ready sender (its default). */
export function oldestActiveSender(db: TenantDb, organizationId: string): Promise<SenderRow | undefined> {
  return senderChoice(db, organizationId, undefined).executeTakeFirst();
}

/** System handle: the sender that owns a phone number, whatever its organization (inbound routing). A sender
 * with a number always has its provider (a number purchase or import sets it). Numbers and RCS agent ids are each
 * unique across organizations (sender_ids_phone_key, sender_ids_rcs_agent_key: migration 0047). */
export async function senderByPhoneNumber(db: Db, phoneNumber: string): Promise<(SenderRow & { provider: string }) | undefined> {
  const row = await db
    .selectFrom('sender_ids')
    .selectAll()
    // An RCS agent is written to at its agent id (RBM's agentId), a chat-app business sender at its business number:
    // each at its address.
    .where((eb) =>
      eb.or([
        eb('phone_number', '=', phoneNumber),
        eb.and([eb('type', 'in', ['RCS_AGENT', 'CHATAPP_BUSINESS']), eb('address', '=', phoneNumber)]),
      ]),
    )
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

export type SenderFilters = { type?: SenderIdType; status?: SenderIdStatus; provider?: SenderIdProvider };

/** A page of the organization's senders, newest first, every filter optional (AND). */
export function listSenders(
  db: TenantDb,
  organizationId: string,
  filters: SenderFilters,
  page: { limit: number; offset: number },
): Promise<Page<SenderRow>> {
  let qb = tenant(db.selectFrom('sender_ids'), organizationId).selectAll();
  if (filters.type) qb = qb.where('type', '=', filters.type);
  if (filters.status) qb = qb.where('status', '=', filters.status);
  if (filters.provider) qb = qb.where('provider', '=', filters.provider);
  return listPage(newestFirst(qb), page);
}

export type SenderPatch = Omit<Updateable<SenderIdsTable>, 'id' | 'organization_id' | 'created_at'>;

/** Writes `patch` (and `updated_at`) to one sender of the organization; undefined when there is none. */
export function updateSender(db: TenantDb, organizationId: string, id: string, patch: SenderPatch): Promise<SenderRow | undefined> {
  return tenant(db.updateTable('sender_ids'), organizationId)
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

// --- RCS agent details (rcs_agent_profiles, migration 0016): written by createSenderId/updateSenderId `rcsAgent`
// and by the deprecated createRcsSender; read into `SenderId.rcsAgent`, the channel view and submissions. ---
export type RcsAgentProfileRow = Selectable<RcsAgentProfilesTable>;
export type RcsAgentProfileFields = {
  display_name: string;
  description: string | null;
  brand_color: string | null;
  logo_url: string | null;
};

export function getRcsAgentProfile(db: TenantDb, organizationId: string, senderId: string): Promise<RcsAgentProfileRow | undefined> {
  return tenant(db.selectFrom('rcs_agent_profiles'), organizationId).selectAll().where('sender_id', '=', senderId).executeTakeFirst();
}

export function listRcsAgentProfiles(db: TenantDb, organizationId: string, senderIds: readonly string[]): Promise<RcsAgentProfileRow[]> {
  if (senderIds.length === 0) return Promise.resolve([]);
  return tenant(db.selectFrom('rcs_agent_profiles'), organizationId)
    .selectAll()
    .where('sender_id', 'in', [...senderIds])
    .execute();
}

/** Inserts or replaces the agent details of one sender. */
export function upsertRcsAgentProfile(
  db: TenantDb,
  organizationId: string,
  senderId: string,
  fields: RcsAgentProfileFields,
): Promise<RcsAgentProfileRow> {
  const now = new Date();
  return db
    .insertInto('rcs_agent_profiles')
    .values({ sender_id: senderId, organization_id: organizationId, ...fields, updated_at: now })
    .onConflict((oc) =>
      oc
        .column('sender_id')
        .doUpdateSet({ ...fields, updated_at: now })
        .where('rcs_agent_profiles.organization_id', '=', organizationId),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}
