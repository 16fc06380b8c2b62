// SQL for the Conversations section. Tenant-scoped through tenant(); unread = inbound messages since the
// last outbound one.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { ConversationsTable } from '../tables/messaging.ts';
import { tenant } from '../tenant.ts';
import { newestFirstPage } from '../paging.ts';

export type ConversationView = Selectable<ConversationsTable> & { contact_phone: string; unread_count: string; total_count?: string };

function withContactAndUnread(db: Db, orgId: string) {
  return tenant(db.selectFrom('conversations as c'), orgId, 'c.organization_id')
    .innerJoin('contacts as ct', 'ct.id', 'c.contact_id')
    .selectAll('c')
    .select('ct.phone as contact_phone')
    .select(
      sql<string>`(select count(*) from messages m where m.conversation_id = c.id and m.direction = 'inbound'
                   and m.created_at > coalesce(c.last_outbound_at, '-infinity'::timestamptz))`.as('unread_count'),
    );
}

export async function listConversations(
  db: Db,
  orgId: string,
  filter: { contactId?: string; senderId?: string; status?: string; handledBy?: string },
  page: { limit: number; offset: number },
): Promise<ConversationView[]> {
  let q = withContactAndUnread(db, orgId).select(sql<string>`count(*) over()`.as('total_count'));
  if (filter.contactId) q = q.where('c.contact_id', '=', filter.contactId);
  if (filter.senderId) q = q.where('c.sender_id', '=', filter.senderId);
  if (filter.status) q = q.where('c.status', '=', filter.status);
  if (filter.handledBy) q = q.where('c.handled_by', '=', filter.handledBy);
  return q.orderBy(sql`c.last_message_at desc nulls last`).orderBy('c.id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export function getConversation(db: Db, orgId: string, id: string): Promise<ConversationView | undefined> {
  return withContactAndUnread(db, orgId).where('c.id', '=', id).executeTakeFirst();
}

export function listConversationMessages(db: Db, orgId: string, conversationId: string, page: { limit: number; offset: number }) {
  return newestFirstPage(tenant(db.selectFrom('messages'), orgId).selectAll().where('conversation_id', '=', conversationId), page).execute();
}
