// The conversation a message belongs to, as the send pipeline keeps it: one per contact and sender, opened by
// whatever starts it (an API send, an inbound message, a blast, a bot, an event or an acquisition enrollment) and
// reused afterwards. The Conversations section (src/domain/conversations) reads and hands them over; it depends on
// the pipeline, never the other way round.
import * as q from '../../db/queries/conversations/conversations.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** An inbound message opens (or extends) a session of this many hours. */
export const SESSION_HOURS = 24;

export type ConversationSource = {
  type: 'blast' | 'bot' | 'inbound' | 'api' | 'event' | 'acquisition';
  blastId?: string;
  botId?: string;
  campaignId?: string;
};

/**
 * Who handles a conversation its source opens: a conversation a bot starts (or a bot blast) is the bot's until it is
 * handed to a human.
 */
export const handledByOf = (source: ConversationSource): 'bot' | 'human' => (source.type === 'bot' || source.botId ? 'bot' : 'human');

/** The conversation of (contact, sender), created with `source` when there is none; locked for the caller's transaction. */
export function openConversation(
  db: TenantDb,
  organizationId: string,
  contactId: string,
  senderId: string,
  source: ConversationSource,
): Promise<q.ConversationRow> {
  return q.upsertConversation(db, organizationId, {
    contactId,
    senderId,
    sourceType: source.type,
    sourceBlastId: source.blastId ?? null,
    sourceBotId: source.botId ?? null,
    sourceCampaignId: source.campaignId ?? null,
    handledBy: handledByOf(source),
    botId: source.botId ?? null,
  });
}
