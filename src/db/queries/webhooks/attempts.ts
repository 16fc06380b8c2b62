// SQL for webhook delivery attempts: one row per HTTP try (what GET /v1/webhook-endpoints/{id}/deliveries lists).
// Tenant-scoped: every query names organization_id.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, type Page } from '../../paging.ts';
import type { WebhookDeliveryAttemptsTable } from '../../tables/webhooks.ts';
import { tenant } from '../../tenant.ts';

export type WebhookAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;
export type NewAttempt = Omit<Insertable<WebhookDeliveryAttemptsTable>, 'id' | 'organization_id'>;

/** Inserts attempt rows in one set-based statement; returns the inserted rows. */
export async function insertAttempts(db: Db, orgId: string, rows: NewAttempt[]): Promise<WebhookAttemptRow[]> {
  if (!rows.length) return [];
  const col = <K extends keyof NewAttempt>(k: K) => rows.map((r) => r[k] ?? null);
  const { rows: out } = await sql<WebhookAttemptRow>`
    insert into webhook_delivery_attempts as a (organization_id, endpoint_id, delivery_id, event_id, event_type, attempt, test, url,
      success, status_code, error, duration_ms, attempted_at, completed_at, next_retry_at)
    select ${orgId}, endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
      attempted_at, completed_at, next_retry_at
    from unnest(${col('endpoint_id')}::uuid[], ${col('delivery_id')}::uuid[], ${col('event_id')}::uuid[], ${col('event_type')}::text[],
                ${col('attempt')}::int[], ${col('test')}::boolean[], ${col('url')}::text[], ${col('success')}::boolean[],
                ${col('status_code')}::int[], ${col('error')}::text[], ${col('duration_ms')}::int[], ${col('attempted_at')}::timestamptz[],
                ${col('completed_at')}::timestamptz[], ${col('next_retry_at')}::timestamptz[])
      as t(endpoint_id, delivery_id, event_id, event_type, attempt, test, url, success, status_code, error, duration_ms,
           attempted_at, completed_at, next_retry_at)
    returning a.*`.execute(db);
  return out;
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
