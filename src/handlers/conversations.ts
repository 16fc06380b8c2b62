// Conversations section: direct messages (sendMessage, previewMessage, revokeMessage) and conversations
// (list, get, messages, send inside, session, source, handoff). The pipeline itself is in src/domain/messaging/.
import { sql } from 'kysely';
import type { components } from '../../generated/api.d.ts';
import { inTransaction } from '../db/database.ts';
import { tenant } from '../db/tenant.ts';
import { evaluateCompliance } from '../domain/compliance/gate.ts';
import { messageEvent } from '../domain/messaging/events.ts';
import { toMoney } from '../domain/messaging/pricing.ts';
import { channelAccepts, fallbackChannelFor, render, type Rendering, type Warning } from '../domain/messaging/render.ts';
import { acceptMessage, planChannel, textOf } from '../domain/messaging/send.ts';
import { emitEvent } from '../domain/webhooks/events.ts';
import { ApiError, conflict, notFound } from '../domain/errors.ts';
import { defineHandlers, requirePrincipal, type RequestScope } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';
import * as q from '../db/queries/conversations.ts';
import { toConversation, toMessage } from '../domain/messaging/views.ts';

const SESSION_HOURS = 24;

async function conversationOrThrow(scope: RequestScope, id: string) {
  const conversation = await q.getConversation(scope.app.db, requirePrincipal(scope).organizationId, id);
  if (!conversation) throw notFound('Conversation');
  return conversation;
}

type PreviewRendering = components['schemas']['MessagePreviewRendering'];

function toPreview(r: Rendering, role: 'primary' | 'fallback'): PreviewRendering {
  return {
    channel: r.channel,
    role,
    body: r.body,
    title: r.title,
    mediaUrl: r.mediaUrl,
    actions: r.actions,
    replies: r.replies,
    segments: r.segments,
    encoding: r.encoding,
    characters: r.characters,
    cost: toMoney(r.costUnits),
    warnings: r.warnings,
  };
}


export const conversationHandlers = defineHandlers({
  // Idempotency-Key is applied by the router (src/http/api.ts): scope.tenant.db is then the key's transaction.
  async sendMessage({ body }, scope) {
    const { organizationId, db } = scope.tenant;
    const data = await inTransaction(db, (tx) => acceptMessage(scope.app, tx, { ...body, organizationId, origin: 'api' }));
    return { status: 200, body: { data } };
  },

  async previewMessage({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const requested = body.channelType ?? 'RCS';
    const fallbackAllowed = body.fallbackToSms ?? true;
    if (!channelAccepts(requested, body.content)) {
      throw new ApiError(400, 'VALIDATION_ERROR', `channelType ${requested} cannot carry a ${body.content.type} message.`, {
        details: [{ field: 'body.content.type', message: `not allowed with channelType ${requested}` }],
      });
    }
    const renderings = [toPreview(render(requested, body.content), 'primary')];
    if ((requested === 'RCS' || requested === 'CHATAPP') && fallbackAllowed) renderings.push(toPreview(render(fallbackChannelFor(body.content), body.content), 'fallback'));

    const warnings: Warning[] = [];
    let plannedChannel: components['schemas']['Channel'] | null = null;
    if (body.contactId) {
      const contact = await tenant(scope.app.db.selectFrom('contacts'), organizationId).selectAll().where('id', '=', body.contactId).executeTakeFirst();
      if (!contact) throw notFound('Contact');
      const plan = planChannel(requested, body.content, contact.rcs_capable, fallbackAllowed, false);
      plannedChannel = plan?.planned ?? null;
      if (!plan) warnings.push({ code: 'NO_CHANNEL_AVAILABLE', message: 'No channel can carry this message to the contact with the current settings.' });
      if (requested === 'RCS' && contact.rcs_capable === null) {
        warnings.push({ code: 'CAPABILITY_UNKNOWN', message: "The contact's RCS capability is unknown: RCS is attempted, the fallback used if it is not delivered." });
      }
      const verdict = await evaluateCompliance({
        db: scope.app.db,
        organizationId,
        contact,
        messageType: body.messageType ?? 'MARKETING',
        content: textOf(body.content),
        now: new Date(),
      });
      for (const reason of verdict.reasons) warnings.push({ code: reason.code, message: reason.message });
    }
    return { status: 200, body: { data: { requestedChannel: requested, plannedChannel, renderings, warnings } } };
  },

  async revokeMessage({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const app = scope.app;
    const message = await tenant(app.db.selectFrom('messages'), organizationId).selectAll().where('id', '=', path.id).executeTakeFirst();
    if (!message) throw notFound('Message');
    if (message.status === 'revoked') {
      return { status: 200, body: { data: { messageId: message.id, status: 'revoked', revokedAt: message.revoked_at!.toISOString() } } };
    }
    const notYetSent = message.status === 'queued' || message.status === 'held';
    const rcsInFlight = (message.status === 'sending' || message.status === 'sent') && message.planned_channel === 'RCS';
    if (message.direction !== 'outbound' || !(notYetSent || rcsInFlight)) {
      throw conflict('INVALID_STATE', `A ${message.direction} message in status ${message.status} on ${message.planned_channel ?? 'no channel'} cannot be revoked; only undelivered RCS messages (or any message not yet sent) can.`);
    }
    if (rcsInFlight && message.provider_message_id && !(await app.provider.revoke(message.provider_message_id))) {
      throw conflict('INVALID_STATE', 'The carrier has already delivered this message.');
    }
    const revoked = await tenant(app.db.updateTable('messages'), organizationId)
      .set({ status: 'revoked', revoked_at: sql`now()`, cost_units: null, updated_at: sql`now()` })
      .where('id', '=', message.id)
      .where('status', '=', message.status)
      .returningAll()
      .executeTakeFirst();
    if (!revoked) throw conflict('INVALID_STATE', 'The message changed state while being revoked; read it again.');
    await emitEvent(app.db, app.queue!, messageEvent('message.revoked', revoked, { id: revoked.sender_id }));
    return { status: 200, body: { data: { messageId: revoked.id, status: 'revoked', revokedAt: revoked.revoked_at!.toISOString() } } };
  },

  async listConversations({ query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const page = pageOf(query);
    const rows = await q.listConversations(scope.app.db, organizationId, query, page);
    return { status: 200, body: paginated(rows.map(toConversation), Number(rows[0]?.total_count ?? 0), page) };
  },

  async getConversation({ path }, scope) {
    return { status: 200, body: { data: toConversation(await conversationOrThrow(scope, path.id)) } };
  },

  async listConversationMessages({ path, query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    await conversationOrThrow(scope, path.id);
    const page = pageOf(query);
    const rows = await q.listConversationMessages(scope.app.db, organizationId, path.id, page);
    return { status: 200, body: paginated(rows.map(toMessage), Number(rows[0]?.total_count ?? 0), page) };
  },

  async sendConversationMessage({ path, body }, scope) {
    const { organizationId, db } = scope.tenant;
    const conversation = await conversationOrThrow(scope, path.id);
    const data = await inTransaction(db, (tx) =>
      acceptMessage(scope.app, tx, {
        ...body,
        organizationId,
        contactId: conversation.contact_id,
        senderId: conversation.sender_id,
        // Inside an active chat-app session the reply goes by chat-app; otherwise RCS with fallback.
        channelType: conversation.session_channel === 'CHATAPP' ? 'CHATAPP' : 'RCS',
        origin: 'conversation',
      }),
    );
    return { status: 200, body: { data } };
  },

  async getConversationSession({ path }, scope) {
    const c = await conversationOrThrow(scope, path.id);
    const expiresAt = c.last_inbound_at ? new Date(c.last_inbound_at.getTime() + SESSION_HOURS * 3600_000) : null;
    const state = !expiresAt ? 'none' : expiresAt.getTime() > Date.now() ? 'active' : 'expired';
    return {
      status: 200,
      body: {
        data: {
          conversationId: c.id,
          channel: (c.session_channel as components['schemas']['Channel'] | null) ?? null,
          state,
          startedAt: c.session_started_at?.toISOString() ?? null,
          expiresAt: expiresAt?.toISOString() ?? null,
          lastInboundAt: c.last_inbound_at?.toISOString() ?? null,
        },
      },
    };
  },

  async getConversationSource({ path }, scope) {
    const c = await conversationOrThrow(scope, path.id);
    return {
      status: 200,
      body: {
        data: {
          conversationId: c.id,
          type: c.source_type as components['schemas']['ConversationSourceType'],
          blastId: c.source_blast_id,
          botId: c.source_bot_id,
          campaignId: c.source_campaign_id,
          firstMessageId: c.first_message_id ?? c.id,
          startedAt: c.created_at.toISOString(),
        },
      },
    };
  },

  async handoffConversation({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const c = await conversationOrThrow(scope, path.id);
    if (body.to === 'bot') {
      // Bots are not built yet (their operations answer 501), so no bot of the organization can be found.
      throw notFound('Bot');
    }
    if (c.handled_by !== 'human') {
      await tenant(scope.app.db.updateTable('conversations'), organizationId)
        .set({ handled_by: 'human', updated_at: sql`now()` })
        .where('id', '=', c.id)
        .execute();
      await emitEvent(scope.app.db, scope.app.queue!, {
        organizationId,
        type: 'conversation.handed_off',
        data: {
          conversationId: c.id,
          senderIdId: c.sender_id,
          contactId: c.contact_id,
          contactPhone: c.contact_phone,
          channel: (c.session_channel as components['schemas']['Channel'] | null) ?? 'SMS',
          botId: c.bot_id,
          initiatedBy: 'API',
          reason: body.note ?? null,
          handedOffAt: new Date().toISOString(),
        },
      });
    }
    return { status: 200, body: { data: toConversation((await q.getConversation(scope.app.db, organizationId, c.id))!) } };
  },
});
