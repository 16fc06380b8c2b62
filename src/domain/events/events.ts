// Event-triggered messages: POST /v1/events and /v1/events/batch. An event is recorded (always, even when no
// trigger matches), resolved to one contact (by `contactId`, or by `phone`, creating the contact when missing),
// and handed to the bots' event triggers (bots/triggers.ts runBotTriggers, called directly), which send through the
// send entry (messaging/send.ts) and reports what each matching trigger did. Idempotency-Key is applied by the router: `tenant.db`
// is then the key's transaction, so a replay never re-runs triggers.
import type { components } from '../../../generated/api.d.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import * as q from '../../db/queries/events/events.ts';
import { contactByPhone } from '../contacts/by-phone.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { ApiError, unknownReference } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { TriggerOutcome } from './trigger-sources.ts';
import { runBotTriggers } from '../bots/triggers.ts';

type EventRequest = components['schemas']['EventTriggerRequest'];

export type RecordedEvent = {
  eventId: string;
  event: string;
  contactId: string;
  contactCreated: boolean;
  receivedAt: Date;
  outcomes: TriggerOutcome[];
  /** Status of every message the outcomes name (queued or held). */
  statuses: Map<string, string>;
};

export type BatchItem = { index: number; ok: true; result: RecordedEvent } | { index: number; ok: false; error: ApiError };

/** The contact the event is about: an unknown id (another organization's included) → 404 naming `<field>.contactId`. */
async function resolveContact(tenant: Tenant, body: EventRequest, field: string): Promise<{ id: string; created: boolean }> {
  const { db, organizationId: orgId } = tenant;
  if (body.contactId !== undefined) {
    const row = await contacts.getContact(db, orgId, body.contactId);
    if (!row) throw unknownReference(`${field}.contactId`, 'contact');
    return { id: row.id, created: false };
  }
  return contactByPhone(tenant, body.phone!, `${field}.phone`);
}

async function processEvent(tenant: Tenant, services: Services, body: EventRequest, field: string): Promise<RecordedEvent> {
  return inTenantTransaction(tenant, async (t) => {
    const contact = await resolveContact(t, body, field);
    const properties = (body.properties ?? {}) as Record<string, unknown>;
    const row = await q.insertEvent(t.db, t.organizationId, {
      name: body.event,
      contactId: contact.id,
      contactCreated: contact.created,
      properties,
      messageType: body.messageType ?? 'MARKETING',
      occurredAt: body.occurredAt ? new Date(body.occurredAt) : new Date(),
    });
    const event = {
      eventId: row.id,
      name: row.name,
      contactId: contact.id,
      properties,
      occurredAt: row.occurred_at,
      ...(body.messageType ? { messageType: body.messageType } : {}),
    };
    const outcomes: TriggerOutcome[] = await runBotTriggers(t, services, event);
    await q.setEventOutcomes(t.db, t.organizationId, row.id, outcomes);
    const statuses = await q.messageStatuses(
      t.db,
      t.organizationId,
      outcomes.flatMap((o) => o.messageIds),
    );
    return {
      eventId: row.id,
      event: row.name,
      contactId: contact.id,
      contactCreated: contact.created,
      receivedAt: row.received_at,
      outcomes,
      statuses,
    };
  });
}

/** POST /v1/events. */
export function triggerEvent(tenant: Tenant, services: Services, body: EventRequest): Promise<RecordedEvent> {
  return processEvent(tenant, services, body, 'body');
}

/**
 * POST /v1/events/batch: items in order, each in a savepoint of the batch's transaction, so a failing item
 * (an ApiError: unknown contact, bad phone, a refusal) leaves nothing behind and the others go on. Any other error
 * (a bug, the database) fails the whole batch.
 */
export function triggerEventBatch(tenant: Tenant, services: Services, events: EventRequest[]): Promise<BatchItem[]> {
  return inTenantTransaction(tenant, async (t) => {
    const items: BatchItem[] = [];
    for (const [index, body] of events.entries()) {
      const name = `event_item_${index}`;
      await q.savepoint(t.db, name);
      try {
        items.push({ index, ok: true, result: await processEvent(t, services, body, `body.events.${index}`) });
        await q.releaseSavepoint(t.db, name);
      } catch (error) {
        await q.rollbackToSavepoint(t.db, name);
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        items.push({ index, ok: false, error });
      }
    }
    return items;
  });
}
