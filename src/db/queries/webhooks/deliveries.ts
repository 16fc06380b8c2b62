// SQL for webhook events and their deliveries (one per event and endpoint): raising them set-based, reading what
// an attempt needs, advancing and cancelling them. Tenant-scoped: every query names organization_id.
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant } from '../../tenant.ts';
import type { WebhookDeliveryStatus } from '../../tables/webhooks.ts';
import type { JobInsert } from '../../../jobs/queue.ts';

export type NewEventRow = { id: string; type: string; test: boolean; body: string; createdAt: Date };

// System handle: the dispatcher and receipts emit events for the messages of many organizations at once.
/**
 * Inserts events and their deliveries (one per event and endpoint) and, unless `jobs` is null, queues the
 * deliveries' first-attempt jobs (`{organizationId, deliveryIds, attempt: 1}`, `jobs.perJob` deliveries to a job)
 * with pg-boss's own insert (`jobs.insert`, its NOTIFY included), all in one set-based statement. Returns the
 * deliveries' ids.
 */
export async function insertEventsAndDeliveries(
  db: Db,
  orgId: string,
  events: NewEventRow[],
  deliveries: Array<{ eventId: string; endpointId: string }>,
  jobs: { insert: JobInsert; perJob: number } | null,
): Promise<string[]> {
  if (!deliveries.length) return [];
  const notify = jobs?.insert.notify;
  const queued = jobs
    ? sql`,
    queued as (${sql.raw(jobs.insert.head)}(
      select coalesce(json_agg(json_build_object('data',
               json_build_object('organizationId', ${orgId}::uuid, 'deliveryIds', j.ids, 'attempt', 1))), '[]'::json)::text
      from (select array_agg(d.id) as ids
            from (select id, (row_number() over () - 1) / ${jobs.perJob}::int as part from new_deliveries) d
            group by d.part) j)${sql.raw(jobs.insert.tail)})`
    : sql``;
  // The notifying CTE is read, so PostgreSQL runs it (a plain select in WITH runs only when referenced).
  const woken = notify
    ? sql`,
    woken as (select ${sql.raw(notify)} from queued limit 1)`
    : sql``;
  const read = notify ? sql` where (select count(*) from woken) >= 0` : sql``;
  const result = await sql<{ id: string }>`/* prepared:webhook-events-queue */
    with new_events as (
      insert into webhook_events (id, organization_id, type, test, body, created_at)
      select id, ${orgId}::uuid, type, test, body, "createdAt"
      -- One JSON value, not a text[] per column: node-postgres escapes each element of an array in JavaScript, and
      -- the envelopes are full of quotes (JSON.stringify escapes them natively, about 8 times faster).
      from json_to_recordset(${JSON.stringify(events)}::json) as t(id uuid, type text, test boolean, body text, "createdAt" timestamptz)
      returning id
    ),
    new_deliveries as (
      insert into webhook_deliveries (organization_id, endpoint_id, event_id)
      select ${orgId}::uuid, endpoint_id, event_id
      from unnest(${deliveries.map((d) => d.endpointId)}::uuid[], ${deliveries.map((d) => d.eventId)}::uuid[]) as t(endpoint_id, event_id)
      returning id
    )${queued}${woken}
    select id from new_deliveries${read}`.execute(db);
  return result.rows.map((r) => r.id);
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

// System handle: a webhook delivery batch (one pg-boss batch) holds the deliveries of many organizations.
/** Everything the attempts need: each delivery's state, its event's body, its endpoint's url and secret. */
export function deliveriesForAttempts(db: Db, orgId: string, ids: string[]): Promise<DeliveryForAttempt[]> {
  return tenant(db.selectFrom('webhook_deliveries as d'), orgId, 'd.organization_id')
    .innerJoin('webhook_events as ev', (j) => j.onRef('ev.id', '=', 'd.event_id').onRef('ev.organization_id', '=', 'd.organization_id'))
    .innerJoin('webhook_endpoints as ep', (j) =>
      j.onRef('ep.id', '=', 'd.endpoint_id').onRef('ep.organization_id', '=', 'd.organization_id'),
    )
    .select([
      'd.id',
      'd.status',
      'd.attempts',
      'd.event_id',
      'ev.type as event_type',
      'ev.test',
      'ev.body',
      'd.endpoint_id',
      'ep.url',
      'ep.secret',
      'ep.is_active',
    ])
    .where('d.id', '=', sql<string>`any(${ids}::uuid[])`)
    .execute();
}

// System handle: a webhook delivery batch (one pg-boss batch) holds the deliveries of many organizations.
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
