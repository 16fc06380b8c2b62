// An inbound message from a handset: routed to the organization by the number it was sent to, joined to the
// contact's conversation (the contact is created when the number is new), stored once per provider message
// id (carriers retry callbacks), announced as `message.received` (and `message.button_tapped` for a tapped
// reply), then run through the keyword engine: STOP/START and the organization's rules change consent and
// answer with their reply text. Keyword replies skip the compliance gate: a STOP confirmation must reach a
// number that has just opted out.
import { sql } from 'kysely';
import type { AppContext } from '../../app-context.ts';
import { inTransaction } from '../../db/database.ts';
import type { ProviderCallback } from '../../providers/provider.ts';
import { handleInboundKeyword } from '../compliance/keyword-engine.ts';
import { parsePhone } from '../phone.ts';
import { emitEvent } from '../webhooks/events.ts';
import { upsertConversation } from './conversations.ts';
import { acceptMessage } from './send.ts';

type Inbound = Extract<ProviderCallback, { type: 'inbound' }>;

export async function ingestInbound(app: AppContext, inbound: Inbound): Promise<void> {
  const sender = await app.db.selectFrom('sender_ids').selectAll().where('phone_number', '=', inbound.to).executeTakeFirst();
  if (!sender) {
    app.log.warn({ to: inbound.to }, 'inbound message for a number no sender owns; dropped');
    return;
  }
  const orgId = sender.organization_id;
  const parsed = parsePhone(inbound.from);
  const phone = parsed?.e164 ?? inbound.from;
  const channel = inbound.channel;

  const stored = await inTransaction(app.db, async (tx) => {
    await tx
      .insertInto('contacts')
      .values({ organization_id: orgId, phone, phone_country: parsed?.country ?? null, attributes: '{}' })
      .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
      .execute();
    const contact = await tx.selectFrom('contacts').select(['id', 'phone']).where('organization_id', '=', orgId).where('phone', '=', phone).executeTakeFirstOrThrow();
    const conversation = await upsertConversation(tx, { organizationId: orgId, contactId: contact.id, senderId: sender.id, source: { type: 'inbound' } });
    const content = inbound.postback
      ? { type: 'reply', text: inbound.text, postback: inbound.postback }
      : inbound.mediaUrl
        ? { type: 'media', text: inbound.text, mediaUrl: inbound.mediaUrl }
        : { type: 'text', text: inbound.text };
    const message = await tx
      .insertInto('messages')
      .values({
        organization_id: orgId,
        conversation_id: conversation.id,
        contact_id: contact.id,
        contact_phone: phone,
        sender_id: sender.id,
        direction: 'inbound',
        channel,
        status: 'received',
        content: JSON.stringify(content),
        segments: 1,
        origin: 'inbound',
        provider: sender.provider,
        provider_message_id: inbound.providerMessageId,
        created_at: new Date(inbound.at),
      })
      .onConflict((oc) => oc.columns(['provider', 'provider_message_id']).where('provider_message_id', 'is not', null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!message) return undefined; // a repeated callback: already stored
    await tx
      .updateTable('conversations')
      .set({
        status: 'open',
        session_channel: channel,
        // A new 24-hour window starts with an inbound message when none is active.
        session_started_at: sql`case when last_inbound_at is null or last_inbound_at < ${message.created_at}::timestamptz - interval '24 hours' then ${message.created_at}::timestamptz else session_started_at end`,
        last_inbound_at: message.created_at,
        last_message_at: message.created_at,
        last_message_preview: (inbound.text ?? inbound.postback ?? 'media').slice(0, 200),
        first_message_id: sql`coalesce(first_message_id, ${message.id})`,
        updated_at: sql`now()`,
      })
      .where('id', '=', conversation.id)
      .execute();
    const routing = { senderIdId: sender.id, contactId: contact.id, contactPhone: phone, conversationId: conversation.id };
    await emitEvent(tx, app.queue!, {
      organizationId: orgId,
      type: 'message.received',
      data: {
        messageId: message.id,
        ...routing,
        direction: 'inbound',
        status: 'received',
        channel,
        text: inbound.text,
        media: inbound.mediaUrl ? [{ url: inbound.mediaUrl, contentType: 'application/octet-stream', sizeBytes: null, fileName: null }] : [],
        receivedAt: message.created_at.toISOString(),
      },
    });
    if (inbound.postback) {
      await emitEvent(tx, app.queue!, {
        organizationId: orgId,
        type: 'message.button_tapped',
        data: {
          messageId: message.id,
          originalMessageId: null,
          ...routing,
          botId: conversation.bot_id,
          channel,
          buttonText: inbound.text ?? inbound.postback,
          postbackData: inbound.postback,
          intent: inbound.postback.trim().toLowerCase(),
          tappedAt: message.created_at.toISOString(),
        },
      });
    }
    return { message, contact };
  });
  if (!stored || !inbound.text) return;

  const outcome = await handleInboundKeyword(app.db, {
    organizationId: orgId,
    contact: stored.contact,
    channel,
    messageId: stored.message.id,
    text: inbound.text,
  });
  if (!outcome) return;
  await inTransaction(app.db, async (tx) => {
    if (outcome.action === 'OPT_OUT' || outcome.action === 'OPT_IN') {
      await emitEvent(tx, app.queue!, {
        organizationId: orgId,
        type: outcome.action === 'OPT_OUT' ? 'contact.opted_out' : 'contact.opted_in',
        data: { contactId: stored.contact.id, senderIdId: sender.id, contactPhone: phone, channel, source: 'KEYWORD', keyword: outcome.keyword, occurredAt: new Date().toISOString() },
      });
    }
    if (outcome.replyText) {
      await acceptMessage(app, tx, {
        organizationId: orgId,
        contactId: stored.contact.id,
        senderId: sender.id,
        channelType: channel === 'RCS' ? 'RCS' : 'SMS',
        messageType: 'SERVICE',
        content: { type: 'text', text: outcome.replyText },
        origin: 'keyword_reply',
        skipComplianceGate: true,
      });
    }
  });
}
