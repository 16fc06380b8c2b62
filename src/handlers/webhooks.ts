// Webhooks section (the webhooks paths of openapi.yaml): endpoint management, test deliveries, the delivery log. Each
// handler takes the typed input, makes one service call (src/domain/webhooks/) with the tenant, and maps the
// result (mappers.ts). Deliveries themselves are background work (src/jobs/webhooks.ts).
import * as attempts from '../domain/webhooks/attempts.ts';
import * as endpoints from '../domain/webhooks/endpoints.ts';
import { toWebhookDelivery, toWebhookEndpoint } from '../domain/webhooks/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated, wholeOrPaged } from '../http/pagination.ts';

export const webhookHandlers = defineHandlers({
  async listWebhookEndpoints({ query }, { tenant }) {
    const rows = await endpoints.listEndpoints(tenant);
    return { status: 200, body: wholeOrPaged(rows.map(toWebhookEndpoint), query) };
  },

  async createWebhookEndpoint({ body }, { tenant, services }) {
    const { row, secret } = await endpoints.createEndpoint(tenant, services, body);
    return { status: 201, body: { data: { ...toWebhookEndpoint(row), secret } } };
  },

  async updateWebhookEndpoint({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toWebhookEndpoint(await endpoints.updateEndpoint(tenant, services, path.id, body)) } };
  },

  async deleteWebhookEndpoint({ path }, { tenant }) {
    return { status: 200, body: { data: { id: await endpoints.deleteEndpoint(tenant, path.id), deleted: true as const } } };
  },

  async testWebhookEndpoint({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toWebhookDelivery(await attempts.sendTestDelivery(tenant, services, path.id, body?.event)) } };
  },

  async listWebhookDeliveries({ path, query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await attempts.listDeliveries(tenant, path.id, page);
    return { status: 200, body: paginated(rows.map(toWebhookDelivery), total, page) };
  },
});
