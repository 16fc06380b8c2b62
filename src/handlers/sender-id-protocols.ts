// Sender IDs section (the sender-ids paths of openapi.yaml), protocols and voice forwarding: see README "Adding an operation".
// listSenderProtocols, enableSenderProtocol, updateSenderProtocol, disableSenderProtocol,
// getSenderIdVoiceForwarding, configureSenderIdVoiceForwarding, disableSenderIdVoiceForwarding.
import { toSenderProtocol, toVoiceForwarding } from '../domain/sender-ids/protocol-mappers.ts';
import * as protocols from '../domain/sender-ids/protocols.ts';
import * as forwarding from '../domain/sender-ids/voice-forwarding.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const senderIdProtocolsHandlers = defineHandlers({
  async listSenderProtocols({ path, query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await protocols.listProtocols(tenant, path.id)).map(toSenderProtocol), query) };
  },

  async enableSenderProtocol({ path, body }, { tenant }) {
    return { status: 200, body: { data: toSenderProtocol(await protocols.enableProtocol(tenant, path.id, body)) } };
  },

  async updateSenderProtocol({ path, body }, { tenant }) {
    return { status: 200, body: { data: toSenderProtocol(await protocols.updateProtocol(tenant, path.id, path.type, body)) } };
  },

  async disableSenderProtocol({ path }, { tenant }) {
    return { status: 200, body: { data: toSenderProtocol(await protocols.disableProtocol(tenant, path.id, path.type)) } };
  },

  async getSenderIdVoiceForwarding({ path }, { tenant }) {
    const row = await forwarding.getForwarding(tenant, path.id);
    return { status: 200, body: { data: row && toVoiceForwarding(row) } };
  },

  async configureSenderIdVoiceForwarding({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toVoiceForwarding(await forwarding.configureForwarding(tenant, services, path.id, body)) } };
  },

  async disableSenderIdVoiceForwarding({ path }, { tenant, services }) {
    const row = await forwarding.disableForwarding(tenant, services, path.id);
    return { status: 200, body: { data: row && toVoiceForwarding(row) } };
  },
});
