// Webhooks section tables: endpoints, the events raised for them, one delivery per (event, endpoint) and one
// attempt row per HTTP try (what GET /v1/webhook-endpoints/{id}/deliveries lists).
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp, TimestampDefault } from './columns.ts';
import type { WebhookEventName } from './enums.ts';

export type WebhookDisabledReason = 'manual' | 'consecutive_failures' | 'gone';
export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface WebhookEndpointsTable {
  id: Generated<string>;
  organization_id: string;
  url: string;
  description: string | null;
  /** Subscribed WebhookEventName values. */
  events: WebhookEventName[];
  /**
   * The `whsec_` secret sealed with AES-256-GCM: `v1:` + base64(iv | tag | ciphertext) (src/lib/secrets.ts; a
   * CHECK constraint, migration 0008, refuses anything else). The plain secret is returned once by create and
   * opened only to sign deliveries.
   */
  secret: string;
  is_active: Generated<boolean>;
  disabled_reason: WebhookDisabledReason | null;
  disabled_at: Timestamp | null;
  /** Deliveries in a row that failed for good (every retry used); reset by any success or by re-enabling. */
  consecutive_failures: Generated<number>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** An event raised for at least one subscribed endpoint; `body` is the exact envelope sent on every attempt. */
interface WebhookEventsTable {
  id: string;
  organization_id: string;
  type: string;
  /** `data.test === true`: acknowledged and ignored by receivers, never retried, not counted as a failure. */
  test: boolean;
  body: string;
  created_at: TimestampDefault;
}

/** The state of one event's delivery to one endpoint. `attempts` guards against recording an attempt twice. */
interface WebhookDeliveriesTable {
  id: Generated<string>;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<string>;
  organization_id: string;
  endpoint_id: string;
  /** null for test deliveries (POST …/test), which have no delivery state. */
  delivery_id: string | null;
  event_id: string;
  event_type: string;
  attempt: number;
  test: boolean;
  url: string;
  success: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  attempted_at: Timestamp;
  completed_at: Timestamp | null;
  next_retry_at: Timestamp | null;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
}
