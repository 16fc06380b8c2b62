// Sender IDs section (the sender-ids paths of openapi.yaml), core (CRUD and lifecycle): see README "Adding an operation".
// Each handler: typed input → one service call (src/domain/sender-ids/senders.ts) → the mapper.
import { toSenderId } from '../domain/sender-ids/mappers.ts';
import * as senders from '../domain/sender-ids/senders.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const senderIdsHandlers = defineHandlers({
  async listSenderIds({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await senders.listSenderIds(tenant, { type: query.type, status: query.status, provider: query.provider }, page);
    return { status: 200, body: paginated(rows.map(toSenderId), total, page) };
  },

  async createSenderId({ body }, { tenant }) {
    return { status: 201, body: { data: toSenderId(await senders.createSenderId(tenant, body)) } };
  },

  async getSenderId({ path }, { tenant }) {
    return { status: 200, body: { data: toSenderId(await senders.getSenderId(tenant, path.id)) } };
  },

  async updateSenderId({ path, body }, { tenant }) {
    return { status: 200, body: { data: toSenderId(await senders.updateSenderId(tenant, path.id, body)) } };
  },

  async deleteSenderId({ path }, { tenant, services }) {
    return { status: 200, body: { data: toSenderId(await senders.transitionSenderId(tenant, services, path.id, 'delete')) } };
  },

  async activateSenderId({ path }, { tenant, services }) {
    return { status: 200, body: { data: toSenderId(await senders.transitionSenderId(tenant, services, path.id, 'activate')) } };
  },

  async suspendSenderId({ path }, { tenant, services }) {
    return { status: 200, body: { data: toSenderId(await senders.transitionSenderId(tenant, services, path.id, 'suspend')) } };
  },

  async reactivateSenderId({ path }, { tenant, services }) {
    return { status: 200, body: { data: toSenderId(await senders.transitionSenderId(tenant, services, path.id, 'reactivate')) } };
  },
});
