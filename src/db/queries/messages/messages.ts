// SQL for messages (both directions) as the API reads and writes them. Tenant-scoped through tenant(); inserts
// carry organization_id. The workers' queries across organizations are in dispatch.ts and receipts.ts.
import { sql, type Insertable, type Selectable } from 'kysely';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { MessagesTable } from '../../tables/messaging.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type MessageRow = Selectable<MessagesTable>;
export type NewMessage = Omit<Insertable<MessagesTable>, 'organization_id'>;

/** Stores an inbound message once per (provider, provider message id): undefined when it is already stored. */
export function insertInboundMessage(
  db: TenantDb,
  orgId: string,
  message: NewMessage & { provider: string; provider_message_id: string },
): Promise<MessageRow | undefined> {
  return db
    .insertInto('messages')
    .values({ ...message, organization_id: orgId, inbound_key: `${message.provider} ${message.provider_message_id}` })
    .onConflict((oc) => oc.column('inbound_key').where('inbound_key', 'is not', null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function getMessage(db: TenantDb, orgId: string, id: string): Promise<MessageRow | undefined> {
  return tenant(db.selectFrom('messages'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** A page of a conversation's messages (both directions), newest first, with the total. */
export function listConversationMessages(
  db: TenantDb,
  orgId: string,
  conversationId: string,
  page: { limit: number; offset: number },
): Promise<Page<MessageRow>> {
  return listPage(newestFirst(tenant(db.selectFrom('messages'), orgId).selectAll().where('conversation_id', '=', conversationId)), page);
}

/**
 * Revokes the message if it is still in `fromStatus` (undefined when it changed meanwhile); a revoked message is not
 * billed. `dropFallback` clears the planned fallback.
 */
export function revokeMessage(
  db: TenantDb,
  orgId: string,
  id: string,
  fromStatus: MessagesTable['status'],
  opts: { dropFallback: boolean },
): Promise<MessageRow | undefined> {
  return tenant(db.updateTable('messages'), orgId)
    .set({
      status: 'revoked',
      revoked_at: sql`now()`,
      cost_units: null,
      dispatch_at: null,
      updated_at: sql`now()`,
      ...(opts.dropFallback ? { fallback_used: false, fallback_reason: null } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', fromStatus)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Fails the outbound messages to `phones` that no carrier has taken yet (queued or held), for a refusal that came
 * after they were accepted: unbilled, and a fallback planned for one never sent dropped (dropsFallbackOnEnd).
 * Keyword replies (a STOP confirmation) are exempt, as they are from the gate; with `overridable`, so is a contact
 * under an active compliance override (the gate lets an override lift an opt-out, not a DNC entry).
 */
export async function failUnsentTo(
  db: TenantDb,
  orgId: string,
  phones: readonly string[],
  refusal: { code: string; message: string; overridable: boolean },
): Promise<MessageRow[]> {
  if (phones.length === 0) return [];
  const overridden = refusal.overridable
    ? sql`and not exists (select 1 from compliance_overrides o where o.organization_id = ${orgId}::uuid and o.contact_id = c.id and o.expires_at > now())`
    : sql``;
  const result = await sql<MessageRow>`
    update messages m set status = 'failed', error_code = ${refusal.code}, error_message = ${refusal.message}, failed_at = now(),
      dispatch_at = null, updated_at = now(),
      cost_units = case when m.sent_at is null then null else m.cost_units end,
      fallback_used = case when m.sent_at is null then false else m.fallback_used end,
      fallback_reason = case when m.sent_at is null then null else m.fallback_reason end
    where m.organization_id = ${orgId}::uuid and m.direction = 'outbound' and m.status in ('queued', 'held') and m.origin <> 'keyword_reply'
      and m.conversation_id in (
        select cv.id from contacts c join conversations cv on cv.organization_id = c.organization_id and cv.contact_id = c.id
        where c.organization_id = ${orgId}::uuid and c.phone = any(${phones as string[]}::text[]) ${overridden})
    returning m.*`.execute(db);
  return result.rows;
}
