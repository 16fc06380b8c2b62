// SQL for webhook delivery attempts: one row per HTTP try (what GET /v1/webhook-endpoints/{id}/deliveries lists).
// Tenant-scoped: every query names organization_id.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, type Page } from '../../paging.ts';
import type { WebhookDeliveryAttemptsTable, WebhookDeliveryStatus } from '../../tables/webhooks.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type WebhookAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;
export type NewAttempt = Omit<Insertable<WebhookDeliveryAttemptsTable>, 'id' | 'organization_id'>;

/** Inserts attempt rows in one set-based statement; returns the inserted rows. */
export async function insertAttempts(db: TenantDb, orgId: string, rows: NewAttempt[]): Promise<WebhookAttemptRow[]> {
  if (!rows.length) return [];
  const col = <K extends keyof NewAttempt>(k: K) => rows.map((r) => r[k] ?? null);
  const result = await sql<WebhookAttemptRow>`/* prepared:webhook-attempts-insert-returning */
    insert into webhook_delivery_attempts as a (organization_id, endpoint_id, delivery_id, event_id, event_type, attempt, test, url,
      success, status_code, error, duration_ms, attempted_at, completed_at, next_retry_at)
    select ${orgId}::uuid, endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
      attempted_at, completed_at, next_retry_at
    from unnest(${col('endpoint_id')}::uuid[], ${col('delivery_id')}::uuid[], ${col('event_id')}::uuid[], ${col('event_type')}::text[],
                ${col('attempt')}::int[], ${col('test')}::boolean[], ${col('url')}::text[], ${col('success')}::boolean[],
                ${col('status_code')}::int[], ${col('error')}::text[], ${col('duration_ms')}::int[], ${col('attempted_at')}::timestamptz[],
                ${col('completed_at')}::timestamptz[], ${col('next_retry_at')}::timestamptz[])
      as t(endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
           attempted_at, completed_at, next_retry_at)
    returning a.*`.execute(db);
  return result.rows;
}

/** An attempt of the delivery worker: its row, how its delivery advances, and what it counts for its endpoint's streak. */
export type BatchAttempt = NewAttempt & {
  delivery_id: string;
  /** The delivery's state after this attempt. */
  status: WebhookDeliveryStatus;
  /** Toward the endpoint's failure streak: a success, a final failure, or neither (a retry follows; a test event). */
  counts: 'success' | 'failure' | null;
};

export type LockedEndpoint = { id: string; is_active: boolean; consecutive_failures: number };

// System handle: a webhook delivery batch (one pg-boss batch) holds the deliveries of many organizations.
/**
 * Records a batch of one organization's attempts in one statement, in the lock order of the delivery worker
 * (src/domain/webhooks/attempts.ts): locks `endpointIds` (id order) before touching any delivery, cancels
 * `cancelIds` (pending deliveries of inactive endpoints), advances each attempt's delivery only where that attempt
 * is the next one, inserts the attempt rows of the deliveries advanced, and resets the streak of each endpoint
 * whose counted attempts here all succeeded. Returns the endpoints as locked (before that reset) and the deliveries
 * advanced; what remains (streaks with failures, disabling, retries) is the caller's, under the same locks.
 */
export async function recordBatch(
  db: Db,
  orgId: string,
  endpointIds: string[],
  cancelIds: string[],
  rows: BatchAttempt[],
): Promise<{ locked: LockedEndpoint[]; advanced: Set<string> }> {
  const col = <K extends keyof BatchAttempt>(k: K) => rows.map((r) => r[k] ?? null);
  // Not prepared: a generic plan guesses 10 attempts and 1 pending delivery, and joined them in a nested loop that
  // read the whole batch once per pending delivery of the database (0.8 s for 500 attempts). Planned per batch, the
  // deliveries are found by primary key (bounded by the batch) and hash-joined to the attempts.
  const {
    rows: [result],
  } = await sql<{ locked: LockedEndpoint[]; advanced: string[] }>`
    with locked as (
      select id, is_active, consecutive_failures from webhook_endpoints
      where organization_id = ${orgId}::uuid and id = any(${endpointIds}::uuid[])
      order by id
      for no key update
    ),
    cancelled as (
      update webhook_deliveries d set status = 'cancelled', next_attempt_at = null, updated_at = now()
      where d.organization_id = ${orgId}::uuid and d.id = any(${cancelIds}::uuid[]) and d.status = 'pending'
        and (select count(*) from locked) >= 0 -- the endpoints first
      returning d.id
    ),
    t as (
      select * from unnest(${col('endpoint_id')}::uuid[], ${col('delivery_id')}::uuid[], ${col('event_id')}::uuid[], ${col('event_type')}::text[],
                ${col('attempt')}::int[], ${col('test')}::boolean[], ${col('url')}::text[], ${col('success')}::boolean[],
                ${col('status_code')}::int[], ${col('error')}::text[], ${col('duration_ms')}::int[], ${col('attempted_at')}::timestamptz[],
                ${col('completed_at')}::timestamptz[], ${col('next_retry_at')}::timestamptz[], ${col('status')}::text[], ${col('counts')}::text[])
        as t(endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
             attempted_at, completed_at, next_retry_at, status, counts)
    ),
    advanced as (
      update webhook_deliveries d
      set attempts = t.attempt, status = t.status, next_attempt_at = t.next_retry_at, updated_at = now()
      from t
      where d.organization_id = ${orgId}::uuid and d.id = any(${col('delivery_id')}::uuid[]) and d.id = t.delivery_id
        and d.attempts = t.attempt - 1 and d.status = 'pending'
        and (select count(*) from locked) >= 0 -- the endpoints first
      returning d.id
    ),
    recorded as (
      insert into webhook_delivery_attempts (organization_id, endpoint_id, delivery_id, event_id, event_type, attempt, test, url,
        success, status_code, error, duration_ms, attempted_at, completed_at, next_retry_at)
      select ${orgId}::uuid, endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
        attempted_at, completed_at, next_retry_at
      from t where t.delivery_id in (select id from advanced)
    ),
    reset as (
      update webhook_endpoints e set consecutive_failures = 0
      from locked l
      where e.organization_id = ${orgId}::uuid and e.id = l.id and l.consecutive_failures <> 0
        and exists (select from t join advanced a on a.id = t.delivery_id where t.endpoint_id = l.id and t.counts = 'success')
        and not exists (select from t join advanced a on a.id = t.delivery_id where t.endpoint_id = l.id and t.counts = 'failure')
    )
    select (select coalesce(json_agg(l order by l.id), '[]'::json) from locked l) as locked,
           (select coalesce(array_agg(a.id), '{}') from advanced a) as advanced`.execute(db);
  return { locked: result!.locked, advanced: new Set(result!.advanced) };
}

/** A page of one endpoint's attempts, newest attempt first (then id), with the total. */
export function listAttempts(
  db: TenantDb,
  orgId: string,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<Page<WebhookAttemptRow>> {
  return listPage(
    tenant(db.selectFrom('webhook_delivery_attempts'), orgId)
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('attempted_at', 'desc')
      .orderBy('id', 'desc'),
    page,
  );
}
