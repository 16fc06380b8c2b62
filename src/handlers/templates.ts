// Templates section (the templates paths of openapi.yaml): see README "Adding an operation".
import { listChatAppTemplates } from '../domain/templates/templates.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const templateHandlers = defineHandlers({
  async listChatAppTemplates({ query }, { tenant, services }) {
    return { status: 200, body: wholeOrPaged(await listChatAppTemplates(tenant, services, query.senderId), query) };
  },
});
