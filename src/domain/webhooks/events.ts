// Raising events: emitEvent() records the event and, for every active endpoint of the organization subscribed to
// its type, a delivery and its first-attempt job — inside the caller's transaction when given one, so an event
// is delivered if and only if the change that raised it commits. Events nobody subscribes to are not stored.
import { randomUUID } from 'node:crypto';
import type { components } from '../../../generated/api.d.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import type { NewEventRow } from '../../db/queries/webhooks/deliveries.ts';
import { subscribedEndpoints } from '../../db/queries/webhooks/endpoints.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { insertEventsAndQueue } from './queue.ts';

type S = components['schemas'];
export type WebhookEventName = S['WebhookEventName'];

/** Each event name's envelope, as documented under `webhooks` in openapi.yaml. */
type Envelopes = {
  'message.queued': S['MessageQueuedWebhookEvent'];
  'message.sent': S['MessageSentWebhookEvent'];
  'message.delivered': S['MessageDeliveredWebhookEvent'];
  'message.read': S['MessageReadWebhookEvent'];
  'message.failed': S['MessageFailedWebhookEvent'];
  'message.revoked': S['MessageRevokedWebhookEvent'];
  'message.held': S['MessageHeldWebhookEvent'];
  'message.received': S['MessageReceivedWebhookEvent'];
  'message.button_tapped': S['MessageButtonTappedWebhookEvent'];
  'contact.opted_out': S['ContactOptedOutWebhookEvent'];
  'contact.opted_in': S['ContactOptedInWebhookEvent'];
  'conversation.handed_off': S['ConversationHandedOffWebhookEvent'];
  'blast.status_changed': S['BlastStatusChangedWebhookEvent'];
  'sender_id.status_changed': S['SenderIdStatusChangedWebhookEvent'];
  'submission.status_changed': S['SubmissionStatusChangedWebhookEvent'];
  'contact_import.completed': S['ContactImportCompletedWebhookEvent'];
  'analytics_export.completed': S['AnalyticsExportCompletedWebhookEvent'];
  test: S['WebhookTestEvent'];
};

/** The `data` of event `T` (or `{test: true}`). */
type EventData<T extends WebhookEventName> = Envelopes[T]['data'];

export type NewEvent<T extends WebhookEventName = WebhookEventName> = { organizationId: string; type: T; data: EventData<T> };

/** Version of the API description the payloads follow (the envelope's `apiVersion`). */
const EVENT_API_VERSION = '1.0.0';

/** The exact bytes sent (and signed) on every attempt of one event. */
export function envelopeBody(id: string, type: string, createdAt: Date, data: unknown): string {
  return JSON.stringify({ id, type, createdAt: createdAt.toISOString(), apiVersion: EVENT_API_VERSION, data });
}

const isTestData = (data: unknown) => typeof data === 'object' && data !== null && (data as { test?: unknown }).test === true;

/**
 * Records events and queues their deliveries. `db` may be the caller's transaction (recommended: the event then
 * commits with the change it describes); otherwise they are stored on their own (one statement, or a transaction for
 * several organizations' events). Returns how many events were stored (those with at least one subscribed active
 * endpoint) and how many deliveries were queued.
 */
export async function emitEvents(db: Db, queue: JobQueue, events: NewEvent[]): Promise<{ events: number; deliveries: number }> {
  if (!events.length) return { events: 0, deliveries: 0 };
  // One organization's events are one statement (atomic alone); several organizations' commit together.
  if (!db.isTransaction && new Set(events.map((e) => e.organizationId)).size > 1)
    return inTransaction(db, (tx) => emitEvents(tx, queue, events));
  let stored = 0;
  let queued = 0;
  const byOrg = Map.groupBy(events, (e) => e.organizationId);
  for (const [organizationId, group] of byOrg) {
    const endpoints = await subscribedEndpoints(db, organizationId, [...new Set(group.map((e) => e.type))]);
    if (!endpoints.length) continue;
    const createdAt = new Date();
    const rows: NewEventRow[] = [];
    const targets: Array<{ eventId: string; endpointId: string }> = [];
    for (const event of group) {
      const subscribers = endpoints.filter((ep) => ep.events.includes(event.type));
      if (!subscribers.length) continue;
      const id = randomUUID();
      rows.push({
        id,
        type: event.type,
        test: isTestData(event.data),
        body: envelopeBody(id, event.type, createdAt, event.data),
        createdAt,
      });
      for (const ep of subscribers) targets.push({ eventId: id, endpointId: ep.id });
    }
    queued += await insertEventsAndQueue(queue, db, organizationId, rows, targets);
    stored += rows.length;
  }
  return { events: stored, deliveries: queued };
}

/** One event; see emitEvents. */
export async function emitEvent<T extends WebhookEventName>(
  db: Db,
  queue: JobQueue,
  event: NewEvent<T>,
): Promise<{ events: number; deliveries: number }> {
  return emitEvents(db, queue, [event as NewEvent]);
}

/** Whether an active endpoint of the organization subscribes to any of `types` (a set send then builds its events). */
export async function subscribesToAny(db: Db, organizationId: string, types: WebhookEventName[]): Promise<boolean> {
  return (await subscribedEndpoints(db, organizationId, types)).length > 0;
}
