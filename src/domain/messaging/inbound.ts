// An inbound message from a handset, ingested in ONE transaction: routed to the organization by the number it
// was sent to, joined to the contact's conversation (the contact is created when the number is new), stored
// once per provider message id (carriers retry callbacks), announced as `message.received` (and
// `message.button_tapped` for a tapped reply), checked for a YES confirming a public sign-up, run through the
// keyword engine (STOP/START and the organization's rules change consent: `contact.opted_out` /
// `contact.opted_in`), and answered with the keyword's reply, whose dispatch job commits with the rest. Either
// all of it is stored or none of it is, so a carrier's retry after a failure does the whole work again, and a
// retry after success finds the message stored and changes nothing (no second event).
//
// Keyword replies skip the compliance gate: a STOP confirmation must reach a number that has just opted out.
// A reply that cannot be sent (the sender is not ACTIVE …) is logged; the inbound message, the consent change
// and its events still commit: the carrier delivered the message, and the handset's STOP holds regardless.
import { servicesOf, type AppContext } from '../../app-context.ts';
import { schemaPattern } from '../../contract/schema-bounds.ts';
import * as contacts from '../../db/queries/conversations/contacts.ts';
import * as conversations from '../../db/queries/conversations/conversations.ts';
import * as messages from '../../db/queries/messages/messages.ts';
import { senderByPhoneNumber } from '../../db/queries/sender-ids/senders.ts';
import type { ProviderCallback } from '../../providers/provider.ts';
import { actingKeyword, applyKeyword } from '../compliance/keyword-engine.ts';
import { ApiError } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import { tenantFor, type Services, type Tenant } from '../tenant.ts';
import { emitEvent } from '../webhooks/events.ts';
import { inTenantTransaction, queueOf } from './context.ts';
import { MEDIA_PREVIEW, openConversation, previewOf, SESSION_HOURS } from './conversation.ts';
import { failUnsentAfter } from './refusals.ts';
import { send } from './send.ts';
import { enrollByKeyword } from '../acquisition/keyword.ts';
import { confirmSignUpsByReply } from '../acquisition/confirm.ts';
import { runBotTurn } from '../bots/runtime.ts';
import { runInboundTriggers } from '../bots/triggers.ts';

export type Inbound = Extract<ProviderCallback, { type: 'inbound' }>;

/**
 * `stored` the first time; `duplicate` for a carrier's retry of a stored message; `unrouted` when no sender owns the
 * number; `not_a_phone` when the sender (`from`) is no phone number (a short code, an alphanumeric sender ID).
 */
export type InboundOutcome = 'stored' | 'duplicate' | 'unrouted' | 'not_a_phone';

/** The document's PhoneE164: what a contact's phone (and a conversation's contactPhone) must be to be read back. */
const PHONE_E164 = schemaPattern('PhoneE164');

export async function ingestInbound(app: AppContext, inbound: Inbound): Promise<InboundOutcome> {
  // A contact is a phone number: a sender that is none can be neither stored as a contact nor answered.
  if (!PHONE_E164.test(parsePhone(inbound.from)?.e164 ?? inbound.from)) {
    app.log.warn({ from: inbound.from, to: inbound.to }, 'inbound message from a sender that is no phone number; dropped');
    return 'not_a_phone';
  }
  // Routing crosses organizations: the system handle finds the sender; everything after acts for its organization.
  const sender = await senderByPhoneNumber(app.db, inbound.to);
  if (!sender) {
    app.log.warn({ to: inbound.to }, 'inbound message for a number no sender owns; dropped');
    return 'unrouted';
  }
  const services = servicesOf(app);
  const tenant = await tenantFor(app, sender.organization_id);
  return inTenantTransaction(tenant, (t) => ingest(t, services, sender, inbound));
}

async function ingest(
  tenant: Tenant,
  services: Services,
  sender: { id: string; provider: string },
  inbound: Inbound,
): Promise<InboundOutcome> {
  const { db, organizationId: orgId } = tenant;
  const queue = queueOf(services);
  const parsed = parsePhone(inbound.from);
  const phone = parsed?.e164 ?? inbound.from;
  const channel = inbound.channel;

  const contact = await contacts.ensureContactByPhone(db, orgId, phone, parsed?.country ?? null);
  const conversation = await openConversation(db, orgId, contact.id, sender.id, { type: 'inbound' });
  const content = inbound.postback
    ? { type: 'reply', text: inbound.text, postback: inbound.postback }
    : inbound.mediaUrl
      ? { type: 'media', text: inbound.text, mediaUrl: inbound.mediaUrl }
      : { type: 'text', text: inbound.text };
  const message = await messages.insertInboundMessage(db, orgId, {
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
  });
  if (!message) return 'duplicate'; // a repeated callback: already stored, with everything it caused

  await conversations.recordInbound(db, orgId, conversation.id, {
    messageId: message.id,
    at: message.created_at,
    channel,
    preview: previewOf(inbound.text ?? inbound.postback ?? MEDIA_PREVIEW),
    sessionHours: SESSION_HOURS,
  });
  const routing = { senderIdId: sender.id, contactId: contact.id, contactPhone: phone, conversationId: conversation.id };
  await emitEvent(db, queue, {
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
    await emitEvent(db, queue, {
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
  // Precedence: a compliance keyword that acts (STOP, HELP, START from an opted-out phone) is never a bot's; a bot's
  // keyword trigger (re)starts its flow; a bot session holding the conversation takes the reply; then a pending
  // sign-up's YES, the keyword engine, a keyword acquisition campaign; last, an intent trigger or the sender's
  // default bot greets a conversation that nothing else answered.
  const keyword = inbound.text ? await actingKeyword(db, orgId, phone, inbound.text) : null;
  const said = { id: message.id, text: inbound.text ?? null, postback: inbound.postback ?? null };
  const started = keyword ? undefined : await runInboundTriggers(tenant, services, conversation, said, 'keyword');
  if (started) return 'stored';
  const turn = await runBotTurn(tenant, services, conversation, message, keyword !== null); // a conversation a bot holds gets its answer
  const greet = async () => {
    if (!turn) await runInboundTriggers(tenant, services, conversation, said, 'idle');
  };
  if (!inbound.text) {
    await greet();
    return 'stored';
  }

  // A YES answering a public sign-up's confirmation request from this sender enrolls it, instead of acting as the
  // opt-in keyword (src/domain/acquisition/confirm.ts); for any other phone or text this changes nothing.
  if (await confirmSignUpsByReply(tenant, services, { phone, senderId: sender.id, text: inbound.text, messageId: message.id, channel }))
    return 'stored';

  // The keyword engine joins this transaction (it opens none of its own inside one).
  const outcome = keyword ? await applyKeyword(db, { organizationId: orgId, contact, channel, messageId: message.id }, keyword) : null;
  if (!outcome) {
    // Not a compliance keyword: it may be a KEYWORD acquisition campaign's (text JOIN to a short code). Its
    // enrollment and welcome message commit with the inbound message; a refusal leaves the message stored.
    try {
      const enrolled = await enrollByKeyword(tenant, services, {
        phone,
        text: inbound.text,
        sender: { phone_number: inbound.to, address: null },
        contactCreated: contact.created,
      });
      if (!enrolled) await greet();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      services.log.warn(
        { organizationId: orgId, contactId: contact.id, inboundMessageId: message.id, code: error.code, reason: error.message },
        'keyword enrollment refused',
      );
    }
    return 'stored';
  }
  if (outcome.action === 'OPT_OUT' || outcome.action === 'OPT_IN') {
    await emitEvent(db, queue, {
      organizationId: orgId,
      type: outcome.action === 'OPT_OUT' ? 'contact.opted_out' : 'contact.opted_in',
      data: {
        contactId: contact.id,
        senderIdId: sender.id,
        contactPhone: phone,
        channel,
        source: 'KEYWORD',
        keyword: outcome.keyword,
        occurredAt: new Date().toISOString(),
      },
    });
  }
  // What was accepted for this phone and not yet sent (held for quiet hours, queued in a long blast) is not sent now.
  if (outcome.action === 'OPT_OUT') await failUnsentAfter(db, queue, orgId, [contact.phone], 'OPTED_OUT');
  if (outcome.replyText) {
    try {
      await send(tenant, services, {
        contactId: contact.id,
        senderId: sender.id,
        channelType: channel === 'RCS' ? 'RCS' : 'SMS',
        messageType: 'SERVICE',
        content: { type: 'text', text: outcome.replyText },
        origin: 'keyword_reply',
        skipComplianceGate: true,
      });
    } catch (error) {
      // A refusal (ApiError) is a rule checked in code, never a failed statement, so the transaction is intact
      // and the reply has stored nothing: the inbound message, the consent change and their events stand; the
      // reply is not sent, and the log says why. Any other error fails the whole ingestion (the carrier retries).
      if (!(error instanceof ApiError)) throw error;
      services.log.warn(
        {
          organizationId: orgId,
          senderId: sender.id,
          contactId: contact.id,
          inboundMessageId: message.id,
          keyword: outcome.keyword,
          code: error.code,
          reason: error.message,
        },
        'keyword reply not sent',
      );
    }
  }
  return 'stored';
}
