// SQL for conversations: one per (contact, sender) of an organization. Tenant-scoped through tenant(); a
// conversation's unread count is its inbound messages since the last outbound one.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, type Page } from '../../paging.ts';
import type { Channel, ConversationHandledBy, ConversationSourceType, ConversationStatus } from '../../tables/enums.ts';
import type { ConversationsTable } from '../../tables/messaging.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { runShared } from '../../statement-scope.ts';

export type ConversationRow = Selectable<ConversationsTable>;
/** A conversation as the API shows it: with the contact's phone and the unread count. */
export type ConversationView = ConversationRow & { contact_phone: string; unread_count: string };

export type ConversationFilter = { contactId?: string; senderId?: string; status?: ConversationStatus; handledBy?: ConversationHandledBy };

function withContactAndUnread(db: TenantDb, orgId: string) {
  return tenant(db.selectFrom('conversations as c'), orgId, 'c.organization_id')
    .innerJoin('contacts as ct', 'ct.id', 'c.contact_id')
    .selectAll('c')
    .select('ct.phone as contact_phone')
    .select(
      sql<string>`(select count(*) from messages m where m.conversation_id = c.id and m.direction = 'inbound'
                   and m.created_at > coalesce(c.last_outbound_at, '-infinity'::timestamptz))`.as('unread_count'),
    );
}

/** A page of the organization's conversations, most recent message first (the documented order), with the total. */
export function listConversations(
  db: TenantDb,
  orgId: string,
  filter: ConversationFilter,
  page: { limit: number; offset: number },
): Promise<Page<ConversationView>> {
  let q = withContactAndUnread(db, orgId);
  if (filter.contactId) q = q.where('c.contact_id', '=', filter.contactId);
  if (filter.senderId) q = q.where('c.sender_id', '=', filter.senderId);
  if (filter.status) q = q.where('c.status', '=', filter.status);
  if (filter.handledBy) q = q.where('c.handled_by', '=', filter.handledBy);
  return listPage(q.orderBy(sql`c.last_message_at desc nulls last`).orderBy('c.id', 'desc'), page);
}

export function getConversation(db: TenantDb, orgId: string, id: string): Promise<ConversationView | undefined> {
  return withContactAndUnread(db, orgId).where('c.id', '=', id).executeTakeFirst();
}

export type ConversationKey = {
  contactId: string;
  senderId: string;
  sourceType: ConversationSourceType;
  sourceBlastId: string | null;
  sourceBotId: string | null;
  sourceCampaignId: string | null;
  handledBy: ConversationHandledBy;
  botId: string | null;
};

/**
 * The id a new conversation of (organization, contact, sender) gets: derived from the three, so every writer that
 * creates it — concurrently too — names the same row, and the send path's set statement can insert a message and
 * the conversation it opens in one statement without joining the two inserts (src/db/queries/messages/accept.ts).
 * Conversations created before keep their random id (found by the unique key: conversationIdsDerived).
 */
export function newConversationId(
  orgId: RawBuilder<unknown> | string,
  contactId: RawBuilder<unknown> | string,
  senderId: RawBuilder<unknown> | string,
): RawBuilder<string> {
  return sql<string>`md5(${orgId}::text || ':' || ${contactId}::text || ':' || ${senderId}::text)::uuid`;
}

let derivedIds: Promise<boolean> | undefined;

// System handle: reads the catalog (pg_constraint): touches no tenant table.
/**
 * Whether every conversation's id is newConversationId of its key: migration 0035's check, validated when no
 * conversation from before the derivation exists. Asked once per process (the answer only changes by a migration).
 */
export function conversationIdsDerived(db: Db): Promise<boolean> {
  // Shared by the requests that ask meanwhile (runShared: not cancelled by the first one's client).
  derivedIds ??= runShared(() =>
    sql<{ validated: boolean }>`select coalesce((select convalidated from pg_constraint
      where conrelid = 'conversations'::regclass and conname = 'conversations_id_from_key'), false) as validated`.execute(db),
  ).then(
    (r) => r.rows[0]!.validated,
    (error: unknown) => {
      derivedIds = undefined; // asked again next time
      throw error;
    },
  );
  return derivedIds;
}

/** The conversation of (contact, sender), inserted when there is none; either way locked for the caller's transaction. */
export function upsertConversation(db: TenantDb, orgId: string, key: ConversationKey): Promise<ConversationRow> {
  return db
    .insertInto('conversations')
    .values({
      id: newConversationId(orgId, key.contactId, key.senderId),
      organization_id: orgId,
      contact_id: key.contactId,
      sender_id: key.senderId,
      source_type: key.sourceType,
      source_blast_id: key.sourceBlastId,
      source_bot_id: key.sourceBotId,
      source_campaign_id: key.sourceCampaignId,
      handled_by: key.handledBy,
      bot_id: key.botId,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'contact_id', 'sender_id']).doUpdateSet({ updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** After an inbound message: open, its channel holds the session, a new 24-hour window starts when none is active. */
export async function recordInbound(
  db: TenantDb,
  orgId: string,
  id: string,
  m: { messageId: string; at: Date; channel: Channel; preview: string; sessionHours: number },
): Promise<void> {
  await tenant(db.updateTable('conversations'), orgId)
    .set({
      status: 'open',
      session_channel: m.channel,
      session_started_at: sql`case when last_inbound_at is null or last_inbound_at < ${m.at}::timestamptz - make_interval(hours => ${m.sessionHours}) then ${m.at}::timestamptz else session_started_at end`,
      last_inbound_at: m.at,
      last_message_at: m.at,
      last_message_preview: m.preview,
      first_message_id: sql`coalesce(first_message_id, ${m.messageId})`,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .execute();
}

/** Hands the conversation to a human; undefined when a human already handles it (nothing changed). */
export function handOffToHuman(db: TenantDb, orgId: string, id: string): Promise<ConversationRow | undefined> {
  return tenant(db.updateTable('conversations'), orgId)
    .set({ handled_by: 'human', updated_at: sql`now()` })
    .where('id', '=', id)
    .where('handled_by', '<>', 'human')
    .returningAll()
    .executeTakeFirst();
}
