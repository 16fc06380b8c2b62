// Bots section (the bots paths of openapi.yaml): see README "Adding an operation".
import * as bots from '../domain/bots/bots.ts';
import { toBot, toBotRevision, toBotSummary, toBotTester } from '../domain/bots/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const botHandlers = defineHandlers({
  async listBots({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await bots.listBots(tenant, page, query.search);
    return { status: 200, body: paginated(rows.map(toBotSummary), total, page) };
  },

  async createBot({ body }, { tenant }) {
    return { status: 201, body: toBot(await bots.createBot(tenant, body)) };
  },

  async getBot({ path }, { tenant }) {
    return { status: 200, body: toBot(await bots.getBot(tenant, path.id)) };
  },

  async updateBot({ path, body }, { tenant }) {
    return { status: 200, body: toBot(await bots.updateBot(tenant, path.id, body)) };
  },

  async deleteBot({ path }, { tenant }) {
    await bots.deleteBot(tenant, path.id);
    return { status: 204, body: null as never };
  },

  async publishBot({ path }, { tenant }) {
    return { status: 200, body: toBot(await bots.publishBot(tenant, path.id)) };
  },

  async validateBot({ path }, { tenant }) {
    return { status: 200, body: { data: await bots.validateBot(tenant, path.id) } };
  },

  async listBotRevisions({ path, query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await bots.listRevisions(tenant, path.id, page);
    return { status: 200, body: paginated(rows.map(toBotRevision), total, page) };
  },

  async listBotTesters({ path, query }, { tenant }) {
    return { status: 200, body: wholeOrPaged((await bots.listTesters(tenant, path.id)).map(toBotTester), query) };
  },

  async addBotTester({ path, body }, { tenant, services }) {
    const row = await bots.addTester(tenant, services, path.id, body);
    return { status: 201, body: { data: { ...toBotTester(row), contactCreated: row.contactCreated } } };
  },
});
