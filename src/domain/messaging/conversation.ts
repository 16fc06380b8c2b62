// The conversation a message belongs to, as the send pipeline keeps it: one per contact and sender, opened by
// whatever starts it (an API send, an inbound message, a blast, a bot, an event or an acquisition enrollment) and
// reused afterwards. The Conversations section (src/domain/conversations) reads and hands them over; it depends on
// the pipeline, never the other way round.
import { schemaBound } from '../../contract/schema-bounds.ts';
import * as q from '../../db/queries/conversations/conversations.ts';
import type { TenantDb } from '../../db/tenant.ts';
import { clampText } from '../../lib/characters.ts';
import type { Rendering } from './render.ts';

/** Conversation.lastMessagePreview maxLength (100): a longer stored preview would fail every read of the conversation. */
const MAX_PREVIEW_CHARACTERS = schemaBound('Conversation', ['lastMessagePreview'], 'maxLength');
/** The preview of media without a caption (Conversation.lastMessagePreview). */
export const MEDIA_PREVIEW = '[media]';
/** A conversation's `lastMessagePreview` of a message's text: its first characters, as many as the document allows. */
export const previewOf = (text: string): string => clampText(text, MAX_PREVIEW_CHARACTERS);
/** The preview of an outbound message as rendered on the channel that carries it (the send's, and a fallback's at dispatch). */
export const previewOfRendering = (r: Pick<Rendering, 'body' | 'title'>, content: { type: string }): string =>
  previewOf(r.body ?? r.title ?? (content.type === 'media' ? MEDIA_PREVIEW : content.type));

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
