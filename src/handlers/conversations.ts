// Conversations section (the conversations paths of openapi.yaml): direct messages (sendMessage, previewMessage,
// revokeMessage) and conversations (list, get, messages, send inside, session, source, handoff). Each handler
// takes the typed input, makes one service call (src/domain/conversations/) with the tenant, and maps the
// result (mappers.ts). The Idempotency-Key of sendMessage and sendConversationMessage is applied by the router:
// tenant.db is then the key's transaction, which the send joins.
import * as conversations from '../domain/conversations/conversations.ts';
import * as m from '../domain/conversations/mappers.ts';
import { previewMessage } from '../domain/messaging/preview.ts';
import { revokeMessage } from '../domain/messaging/revoke.ts';
import { sendMessage } from '../domain/messaging/send.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const conversationHandlers = defineHandlers({
  async sendMessage({ body }, { tenant, services }) {
    return { status: 200, body: { data: m.toSendResult(await sendMessage(tenant, services, body)) } };
  },

  async previewMessage({ body }, { tenant, services }) {
    return { status: 200, body: { data: m.toMessagePreview(await previewMessage(tenant, services, body)) } };
  },

  async revokeMessage({ path }, { tenant, services }) {
    return { status: 200, body: { data: m.toRevokeResult(await revokeMessage(tenant, services, path.id)) } };
  },

  async listConversations({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await conversations.listConversations(tenant, query, page);
    return { status: 200, body: paginated(rows.map(m.toConversation), total, page) };
  },

  async getConversation({ path }, { tenant }) {
    return { status: 200, body: { data: m.toConversation(await conversations.getConversation(tenant, path.id)) } };
  },

  async listConversationMessages({ path, query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await conversations.listConversationMessages(tenant, path.id, page);
    return { status: 200, body: paginated(rows.map(m.toMessage), total, page) };
  },

  async sendConversationMessage({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: m.toSendResult(await conversations.sendConversationMessage(tenant, services, path.id, body)) } };
  },

  async getConversationSession({ path }, { tenant }) {
    return { status: 200, body: { data: m.toConversationSession(await conversations.conversationSession(tenant, path.id)) } };
  },

  async getConversationSource({ path }, { tenant }) {
    return { status: 200, body: { data: m.toConversationSource(await conversations.getConversation(tenant, path.id)) } };
  },

  async handoffConversation({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: m.toConversation(await conversations.handoffConversation(tenant, services, path.id, body)) } };
  },
});
