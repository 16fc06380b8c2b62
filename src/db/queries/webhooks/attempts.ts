// SQL for webhook delivery attempts: one row per HTTP try (what GET /v1/webhook-endpoints/{id}/deliveries lists).
// Tenant-scoped: every query names organization_id.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, type Page } from '../../paging.ts';
import type { WebhookDeliveryAttemptsTable } from '../../tables/webhooks.ts';
import { tenant } from '../../tenant.ts';

export type WebhookAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;
export type NewAttempt = Omit<Insertable<WebhookDeliveryAttemptsTable>, 'id' | 'organization_id'>;

/** The attempts' one set-based insert (a fixed shape: prepared once per connection). */
function insertStatement(orgId: string, rows: NewAttempt[], returning: boolean) {
  const col = <K extends keyof NewAttempt>(k: K) => rows.map((r) => r[k] ?? null);
  return sql<WebhookAttemptRow>`${sql.raw(returning ? '/* prepared:webhook-attempts-insert-returning */' : '/* prepared:webhook-attempts-insert */')}
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
    ${sql.raw(returning ? 'returning a.*' : '')}`;
}

/** Inserts attempt rows in one set-based statement; returns the inserted rows. */
export async function insertAttempts(db: Db, orgId: string, rows: NewAttempt[]): Promise<WebhookAttemptRow[]> {
  if (!rows.length) return [];
  return (await insertStatement(orgId, rows, true).execute(db)).rows;
}

/** Inserts attempt rows in one set-based statement, returning nothing (the delivery worker's batches). */
export async function recordAttempts(db: Db, orgId: string, rows: NewAttempt[]): Promise<void> {
  if (rows.length) await insertStatement(orgId, rows, false).execute(db);
}

/** A page of one endpoint's attempts, newest attempt first (then id), with the total. */
export function listAttempts(db: Db, orgId: string, endpointId: string, page: { limit: number; offset: number }): Promise<Page<WebhookAttemptRow>> {
  return listPage(
    tenant(db.selectFrom('webhook_delivery_attempts'), orgId)
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('attempted_at', 'desc')
      .orderBy('id', 'desc'),
    page,
  );
}
