// Sender IDs section (the sender-ids paths of openapi.yaml), the deprecated /v1/channels view and its RCS senders: see README "Adding an operation".
// Each handler: typed input → one service call (src/domain/sender-ids/channels.ts) → the mapper. The Deprecation,
// Sunset and Link headers go on every answer of these operations, errors included, from the HTTP layer
// (src/contract/deprecations.ts).
import {
  toLegacyChannel,
  toLegacyChannelWithHealth,
  toRcsSender,
  toRcsSenderDetail,
  toRcsTestDevice,
} from '../domain/sender-ids/channel-mappers.ts';
import * as channels from '../domain/sender-ids/channels.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const senderIdChannelsHandlers = defineHandlers({
  async listChannels({ query }, { tenant }) {
    return { status: 200 as const, body: wholeOrPaged((await channels.listChannels(tenant)).map(toLegacyChannel), query) };
  },

  async createChannel({ body }, { tenant, services }) {
    return { status: 201 as const, body: { data: toLegacyChannelWithHealth(await channels.createChannel(tenant, services, body)) } };
  },

  async getChannel({ path }, { tenant }) {
    return { status: 200 as const, body: { data: toLegacyChannel(await channels.getChannel(tenant, path.id)) } };
  },

  async replaceChannel({ path, body }, { tenant, services }) {
    return {
      status: 200 as const,
      body: { data: toLegacyChannelWithHealth(await channels.replaceChannel(tenant, services, path.id, body)) },
    };
  },

  async deleteChannel({ path }, { tenant }) {
    return { status: 200 as const, body: { data: { ...(await channels.deleteChannel(tenant, path.id)), deleted: true as const } } };
  },

  async testChannel({ path }, { tenant, services }) {
    return { status: 200 as const, body: await channels.testChannel(tenant, services, path.id) };
  },

  async listRcsSenders({ path, query }, { tenant }) {
    return { status: 200 as const, body: wholeOrPaged((await channels.listRcsSenders(tenant, path.channelId)).map(toRcsSender), query) };
  },

  async createRcsSender({ path, body }, { tenant }) {
    return { status: 201 as const, body: { data: toRcsSender(await channels.createRcsSender(tenant, path.channelId, body)) } };
  },

  async getRcsSender({ path }, { tenant }) {
    return {
      status: 200 as const,
      body: { data: toRcsSenderDetail(await channels.getRcsSender(tenant, path.channelId, path.senderName)) },
    };
  },

  async addRcsTestDevice({ path, body }, { tenant, services }) {
    return {
      status: 201 as const,
      body: { data: toRcsTestDevice(await channels.addRcsTestDevice(tenant, services, path.channelId, path.senderName, body)) },
    };
  },

  async listRcsTestDevices({ path, query }, { tenant }) {
    return {
      status: 200 as const,
      body: wholeOrPaged((await channels.listRcsTestDevices(tenant, path.channelId, path.senderName)).map(toRcsTestDevice), query),
    };
  },
});
