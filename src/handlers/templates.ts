// Templates section (the templates paths of openapi.yaml): see README "Adding an operation".
import { deleteChatAppTemplate, getChatAppTemplate, listChatAppTemplates, registerChatAppTemplate } from '../domain/templates/templates.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const templateHandlers = defineHandlers({
  async listChatAppTemplates({ query }, { tenant, services }) {
    return { status: 200, body: wholeOrPaged(await listChatAppTemplates(tenant, services, query.senderId), query) };
  },

  async registerChatAppTemplate({ body }, { tenant, services }) {
    return { status: 201, body: await registerChatAppTemplate(tenant, services, body) };
  },

  async getChatAppTemplate({ path }, { tenant }) {
    return { status: 200, body: await getChatAppTemplate(tenant, path.id) };
  },

  async deleteChatAppTemplate({ path }, { tenant }) {
    await deleteChatAppTemplate(tenant, path.id);
    return { status: 204, body: null as never };
  },
});
