// One conversation per contact and sender, created by whatever started it (an API send, an inbound
// message, a blast, a bot, an event or an acquisition enrollment) and reused afterwards.
import { sql, type Selectable } from 'kysely';
import type { Tx } from '../../db/database.ts';
import type { ConversationsTable } from '../../db/tables/messaging.ts';

export type ConversationRow = Selectable<ConversationsTable>;
export type ConversationSource = {
  type: 'blast' | 'bot' | 'inbound' | 'api' | 'event' | 'acquisition';
  blastId?: string;
  botId?: string;
  campaignId?: string;
};

/** The conversation of (contact, sender), created with `source` when there is none; locked for the caller's transaction. */
export async function upsertConversation(
  tx: Tx,
  key: { organizationId: string; contactId: string; senderId: string; source: ConversationSource },
): Promise<ConversationRow> {
  // One statement: insert, or touch the existing row; either way it comes back locked for this transaction.
  return tx
    .insertInto('conversations')
    .values({
      organization_id: key.organizationId,
      contact_id: key.contactId,
      sender_id: key.senderId,
      source_type: key.source.type,
      source_blast_id: key.source.blastId ?? null,
      source_bot_id: key.source.botId ?? null,
      source_campaign_id: key.source.campaignId ?? null,
      handled_by: key.source.type === 'bot' ? 'bot' : 'human',
      bot_id: key.source.botId ?? null,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'contact_id', 'sender_id']).doUpdateSet({ updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}
