// SQL for messages (both directions) as the API reads and writes them. Tenant-scoped through tenant(); inserts
// carry organization_id. The workers' queries across organizations are in dispatch.ts and receipts.ts.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, newestFirst, type Page } from '../../paging.ts';
import type { MessagesTable } from '../../tables/messaging.ts';
import { tenant } from '../../tenant.ts';

export type MessageRow = Selectable<MessagesTable>;
export type NewMessage = Omit<Insertable<MessagesTable>, 'organization_id'>;

export function insertMessage(db: Db, orgId: string, message: NewMessage): Promise<MessageRow> {
  return db
    .insertInto('messages')
    .values({ ...message, organization_id: orgId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Stores an inbound message once per (provider, provider message id): undefined when it is already stored. */
export function insertInboundMessage(db: Db, orgId: string, message: NewMessage & { provider: string; provider_message_id: string }): Promise<MessageRow | undefined> {
  return db
    .insertInto('messages')
    .values({ ...message, organization_id: orgId })
    .onConflict((oc) => oc.columns(['provider', 'provider_message_id']).where('provider_message_id', 'is not', null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function getMessage(db: Db, orgId: string, id: string): Promise<MessageRow | undefined> {
  return tenant(db.selectFrom('messages'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** A page of a conversation's messages (both directions), newest first, with the total. */
export function listConversationMessages(db: Db, orgId: string, conversationId: string, page: { limit: number; offset: number }): Promise<Page<MessageRow>> {
  return listPage(newestFirst(tenant(db.selectFrom('messages'), orgId).selectAll().where('conversation_id', '=', conversationId)), page);
}

/**
 * Revokes the message if it is still in `fromStatus` (undefined when it changed meanwhile); a revoked message is not
 * billed. `dropFallback` clears the planned fallback.
 */
export function revokeMessage(db: Db, orgId: string, id: string, fromStatus: string, opts: { dropFallback: boolean }): Promise<MessageRow | undefined> {
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
