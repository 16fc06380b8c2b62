// Webhooks section: stored rows → the document's shapes. The signing secret is never part of an endpoint: only
// createWebhookEndpoint answers it, once, next to toWebhookEndpoint's fields.
import type { components } from '../../../generated/api.d.ts';
import type { WebhookAttemptRow } from '../../db/queries/webhooks/attempts.ts';
import type { WebhookEndpointRow } from '../../db/queries/webhooks/endpoints.ts';

type S = components['schemas'];

export function toWebhookEndpoint(row: WebhookEndpointRow): S['WebhookEndpoint'] {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    isActive: row.is_active,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toWebhookDelivery(row: WebhookAttemptRow): S['WebhookDelivery'] {
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
