// Webhooks section: endpoint management, test deliveries, delivery attempts.
import type { components } from '../../generated/api.d.ts';
import * as q from '../db/queries/webhooks.ts';
import { sendTestDelivery } from '../domain/webhooks/attempts.ts';
import { createEndpoint, updateEndpoint } from '../domain/webhooks/endpoints.ts';
import { notFound } from '../domain/errors.ts';
import { defineHandlers, requirePrincipal } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

type S = components['schemas'];

export function toWebhookEndpoint(row: q.WebhookEndpointRow): S['WebhookEndpoint'] {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as S['WebhookEventName'][],
    isActive: row.is_active,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toWebhookDelivery(row: q.WebhookAttemptRow): S['WebhookDelivery'] {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    event: row.event_type as S['WebhookEventName'],
    attempt: row.attempt,
    test: row.test,
    url: row.url,
    success: row.success,
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
    attemptedAt: row.attempted_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
  };
}

export const webhookHandlers = defineHandlers({
  async listWebhookEndpoints(_input, scope) {
    const { organizationId } = requirePrincipal(scope);
    const rows = await q.listEndpoints(scope.app.db, organizationId);
    return { status: 200, body: { data: rows.map(toWebhookEndpoint) } };
  },

  async createWebhookEndpoint({ body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const { row, secret } = await createEndpoint(scope.app.db, organizationId, body, scope.app.config.webhookAllowPrivate);
    return { status: 201, body: { data: { ...toWebhookEndpoint(row), secret } } };
  },

  async updateWebhookEndpoint({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const row = await updateEndpoint(scope.app.db, organizationId, path.id, body, scope.app.config.webhookAllowPrivate);
    if (!row) throw notFound('Webhook endpoint');
    return { status: 200, body: { data: toWebhookEndpoint(row) } };
  },

  async deleteWebhookEndpoint({ path }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!(await q.deleteEndpoint(scope.app.db, organizationId, path.id))) throw notFound('Webhook endpoint');
    return { status: 200, body: { data: { id: path.id, deleted: true as const } } };
  },

  async testWebhookEndpoint({ path, body }, scope) {
    const { organizationId } = requirePrincipal(scope);
    const attempt = await sendTestDelivery(scope.app, organizationId, path.id, body?.event ?? 'test');
    if (!attempt) throw notFound('Webhook endpoint');
    return { status: 200, body: { data: toWebhookDelivery(attempt) } };
  },

  async listWebhookDeliveries({ path, query }, scope) {
    const { organizationId } = requirePrincipal(scope);
    if (!(await q.getEndpoint(scope.app.db, organizationId, path.id))) throw notFound('Webhook endpoint');
    const page = pageOf(query);
    const rows = await q.listAttempts(scope.app.db, organizationId, path.id, page);
    const total = rows[0] ? Number(rows[0].total_count) : page.offset > 0 ? await q.countAttempts(scope.app.db, organizationId, path.id) : 0;
    return { status: 200, body: paginated(rows.map(toWebhookDelivery), total, page) };
  },
});
