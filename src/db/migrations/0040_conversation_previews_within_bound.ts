// A conversation's lastMessagePreview is at most 100 characters (the document's Conversation.lastMessagePreview);
// the send and inbound paths stored up to 200, and a stored preview longer than the document allows made every
// read of its conversation (GET /v1/conversations, GET /v1/conversations/{id}, the MCP tools) fail response
// validation. They store at most the document's bound now (src/domain/messaging/send.ts, previewOf); the rows
// written before are cut to their first 100 characters here (left() and char_length() count characters, as the
// document does), which is what the preview would have been. The number is written out: a migration is history,
// and must not change if the document's bound does. Only the rows over the bound are rewritten.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update conversations set last_message_preview = left(last_message_preview, 100) where char_length(last_message_preview) > 100`.execute(
    db,
  );
}

export async function down(): Promise<void> {
  // The cut characters are not kept; nothing to restore (the longer previews were the defect).
}
