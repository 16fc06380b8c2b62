// SQL for webhook events and their deliveries (one per event and endpoint): raising them set-based, reading what
// an attempt needs, advancing and cancelling them. Tenant-scoped: every query names organization_id.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant } from '../../tenant.ts';
import type { WebhookDeliveryStatus } from '../../tables/webhooks.ts';

export type NewEventRow = { id: string; type: string; test: boolean; body: string; createdAt: Date };

/** Inserts events and their deliveries (one per event and endpoint) in one set-based statement. */
export async function insertEventsAndDeliveries(
  db: Db,
  orgId: string,
  events: NewEventRow[],
  deliveries: Array<{ eventId: string; endpointId: string }>,
): Promise<Array<{ id: string }>> {
  if (!deliveries.length) return [];
  const result = await sql<{ id: string }>`/* prepared:webhook-events-insert */
    with new_events as (
      insert into webhook_events (id, organization_id, type, test, body, created_at)
      select id, ${orgId}::uuid, type, test, body, created_at
      from unnest(${events.map((e) => e.id)}::uuid[], ${events.map((e) => e.type)}::text[], ${events.map((e) => e.test)}::boolean[],
                  ${events.map((e) => e.body)}::text[], ${events.map((e) => e.createdAt)}::timestamptz[]) as t(id, type, test, body, created_at)
      returning id
    )
    insert into webhook_deliveries (organization_id, endpoint_id, event_id)
    select ${orgId}::uuid, endpoint_id, event_id
    from unnest(${deliveries.map((d) => d.endpointId)}::uuid[], ${deliveries.map((d) => d.eventId)}::uuid[]) as t(endpoint_id, event_id)
    returning id`.execute(db);
  return result.rows;
}

export type DeliveryForAttempt = {
  id: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  event_id: string;
  event_type: string;
  test: boolean;
  body: string;
  endpoint_id: string;
  url: string;
  /** Sealed (`v1:…`): opened only to sign (src/domain/webhooks/deliver.ts). */
  secret: string;
  is_active: boolean;
};

/** Everything the attempts need: each delivery's state, its event's body, its endpoint's url and secret. */
export function deliveriesForAttempts(db: Db, orgId: string, ids: string[]): Promise<DeliveryForAttempt[]> {
  return tenant(db.selectFrom('webhook_deliveries as d'), orgId, 'd.organization_id')
    .innerJoin('webhook_events as ev', (j) => j.onRef('ev.id', '=', 'd.event_id').onRef('ev.organization_id', '=', 'd.organization_id'))
    .innerJoin('webhook_endpoints as ep', (j) => j.onRef('ep.id', '=', 'd.endpoint_id').onRef('ep.organization_id', '=', 'd.organization_id'))
    .select(['d.id', 'd.status', 'd.attempts', 'd.event_id', 'ev.type as event_type', 'ev.test', 'ev.body', 'd.endpoint_id', 'ep.url', 'ep.secret', 'ep.is_active'])
    .where('d.id', '=', sql<string>`any(${ids}::uuid[])`)
    .execute();
}

export type DeliveryAdvance = { id: string; attempt: number; status: WebhookDeliveryStatus; nextAttemptAt: Date | null };

/**
 * Records that attempt `attempt` of each delivery happened, only where it is the next one: a job run twice
 * (worker crash, expiry) finds nothing to update. Returns the ids actually advanced.
 */
export async function advanceDeliveries(db: Db, orgId: string, items: DeliveryAdvance[]): Promise<Set<string>> {
  if (!items.length) return new Set();
  const { rows } = await sql<{ id: string }>`
    update webhook_deliveries d
    set attempts = u.attempt, status = u.status, next_attempt_at = u.next_at, updated_at = now()
    from unnest(${items.map((i) => i.id)}::uuid[], ${items.map((i) => i.attempt)}::int[], ${items.map((i) => i.status)}::text[],
                ${items.map((i) => i.nextAttemptAt)}::timestamptz[]) as u(id, attempt, status, next_at)
    where d.organization_id = ${orgId} and d.id = u.id and d.attempts = u.attempt - 1 and d.status = 'pending'
    returning d.id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** Cancels pending deliveries whose endpoint is disabled (their next attempt is not made). */
export async function cancelDeliveries(db: Db, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await tenant(db.updateTable('webhook_deliveries'), orgId)
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: sql`now()` })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .execute();
}

/** A disabled endpoint gets no further tries: its pending deliveries are cancelled and their retries unscheduled. */
export async function cancelPendingDeliveries(db: Db, orgId: string, endpointId: string): Promise<void> {
  const cancelled = await tenant(db.updateTable('webhook_deliveries'), orgId)
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: sql`now()` })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  if (!cancelled.length) return;
  await tenant(db.updateTable('webhook_delivery_attempts'), orgId)
    .set({ next_retry_at: null })
    .where('delivery_id', '=', sql<string>`any(${cancelled.map((c) => c.id)}::uuid[])`)
    .where('next_retry_at', 'is not', null)
    .execute();
}
