// SQL for the Webhooks section: endpoints, events and deliveries, delivery attempts. Tenant-scoped: reads and
// updates go through tenant(); inserts name organization_id.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.ts';
import { sealSecret } from '../../lib/secrets.ts';
import { tenant } from '../tenant.ts';
import type { WebhookDeliveryAttemptsTable, WebhookDeliveryStatus, WebhookDisabledReason, WebhookEndpointsTable } from '../tables/webhooks.ts';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

// ---- endpoints ------------------------------------------------------------------------------------------------

export function listEndpoints(db: Db, orgId: string): Promise<WebhookEndpointRow[]> {
  return tenant(db.selectFrom('webhook_endpoints'), orgId).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export function getEndpoint(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<WebhookEndpointRow | undefined> {
  const query = tenant(db.selectFrom('webhook_endpoints'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** `e.secret` is the plain `whsec_` secret; it is stored sealed (src/lib/secrets.ts) and the row holds that. */
export function insertEndpoint(
  db: Db,
  orgId: string,
  e: { url: string; description: string | null; events: string[]; secret: string },
): Promise<WebhookEndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({ organization_id: orgId, url: e.url, description: e.description, events: e.events, secret: sealSecret(e.secret) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateEndpoint(db: Db, orgId: string, id: string, patch: Updateable<WebhookEndpointsTable>): Promise<WebhookEndpointRow | undefined> {
  return tenant(db.updateTable('webhook_endpoints'), orgId)
    .set({ ...patch, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Db, orgId: string, id: string): Promise<boolean> {
  const row = await tenant(db.deleteFrom('webhook_endpoints'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** Active endpoints subscribed to at least one of `types`. */
export function subscribedEndpoints(db: Db, orgId: string, types: string[]): Promise<Array<{ id: string; events: string[] }>> {
  return tenant(db.selectFrom('webhook_endpoints'), orgId)
    .select(['id', 'events'])
    .where('is_active', '=', true)
    .where(sql<boolean>`events && ${types}::text[]`)
    .execute();
}

/** Successes end the failure streak (no write where there was none). */
export async function resetStreaks(db: Db, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await tenant(db.updateTable('webhook_endpoints'), orgId).set({ consecutive_failures: 0 }).where('id', 'in', ids).where('consecutive_failures', '<>', 0).execute();
}

/** Locks endpoints (in id order, so concurrent workers cannot deadlock) to update their failure streaks. */
export function lockEndpointStates(db: Db, orgId: string, ids: string[]): Promise<Array<{ id: string; is_active: boolean; consecutive_failures: number }>> {
  return tenant(db.selectFrom('webhook_endpoints'), orgId)
    .select(['id', 'is_active', 'consecutive_failures'])
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Stores a new failure streak and, with `disable`, disables the endpoint for that reason. */
export async function setEndpointState(db: Db, orgId: string, id: string, state: { consecutiveFailures: number; disable: WebhookDisabledReason | null }): Promise<void> {
  const disabled = state.disable ? { is_active: false, disabled_reason: state.disable, disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` } : {};
  await tenant(db.updateTable('webhook_endpoints'), orgId)
    .set({ consecutive_failures: state.consecutiveFailures, ...disabled })
    .where('id', '=', id)
    .execute();
}

// ---- events and deliveries ----------------------------------------------------------------------------------------

export type NewEventRow = { id: string; type: string; test: boolean; body: string; createdAt: Date };

/** Inserts events and their deliveries (one per event and endpoint) in one set-based statement. */
export async function insertEventsAndDeliveries(
  db: Db,
  orgId: string,
  events: NewEventRow[],
  deliveries: Array<{ eventId: string; endpointId: string }>,
): Promise<Array<{ id: string }>> {
  if (!deliveries.length) return [];
  const result = await sql<{ id: string }>`
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
  /** Sealed (`v1:…`): opened only to sign (deliver.ts). */
  secret: string;
  is_active: boolean;
};

/** Everything the attempts need: each delivery's state, its event's body, its endpoint's url and secret. */
export function deliveriesForAttempts(db: Db, orgId: string, ids: string[]): Promise<DeliveryForAttempt[]> {
  return tenant(db.selectFrom('webhook_deliveries as d'), orgId, 'd.organization_id')
    .innerJoin('webhook_events as ev', (j) => j.onRef('ev.id', '=', 'd.event_id').onRef('ev.organization_id', '=', 'd.organization_id'))
    .innerJoin('webhook_endpoints as ep', (j) => j.onRef('ep.id', '=', 'd.endpoint_id').onRef('ep.organization_id', '=', 'd.organization_id'))
    .select(['d.id', 'd.status', 'd.attempts', 'd.event_id', 'ev.type as event_type', 'ev.test', 'ev.body', 'd.endpoint_id', 'ep.url', 'ep.secret', 'ep.is_active'])
    .where('d.id', 'in', ids)
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

// ---- attempts -----------------------------------------------------------------------------------------------------

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

export function listAttempts(db: Db, orgId: string, endpointId: string, page: { limit: number; offset: number }) {
  return tenant(db.selectFrom('webhook_delivery_attempts'), orgId)
    .selectAll()
    .select((eb) => eb.fn.countAll<string>().over().as('total_count'))
    .where('endpoint_id', '=', endpointId)
    .orderBy('attempted_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countAttempts(db: Db, orgId: string, endpointId: string): Promise<number> {
  const row = await tenant(db.selectFrom('webhook_delivery_attempts'), orgId)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---- secrets at rest (start-up maintenance) -------------------------------------------------------------------
// Deliberately across organizations, like a migration: run once by startRuntime after migrating, never on a
// request path.

/** Up to `limit` endpoints after id `after` (in id order) whose secret is still plain (written before migration 0008). */
export function plainSecrets(db: Db, after: string | null, limit: number): Promise<Array<{ id: string; secret: string }>> {
  let query = db.selectFrom('webhook_endpoints').select(['id', 'secret']).where('secret', 'not like', 'v1:%');
  if (after !== null) query = query.where('id', '>', after);
  return query.orderBy('id').limit(limit).execute();
}

/** Replaces plain secrets by their sealed form, only where the row still holds that plain value; returns how many. */
export async function replacePlainSecrets(db: Db, rows: Array<{ id: string; plain: string; sealed: string }>): Promise<number> {
  if (!rows.length) return 0;
  const result = await sql`
    update webhook_endpoints e set secret = u.sealed
    from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.plain)}::text[], ${rows.map((r) => r.sealed)}::text[]) as u(id, plain, sealed)
    where e.id = u.id and e.secret = u.plain`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The sealed secret of the newest endpoint, to check at start that this process holds the key that sealed it. */
export async function newestSealedSecret(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('webhook_endpoints').select('secret').where('secret', 'like', 'v1:%').orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  return row?.secret;
}

/** Once no plain secret is left: VALIDATE the NOT VALID constraint of migration 0008 (a no-op when done). */
export async function validateSealedSecretsConstraint(db: Db): Promise<void> {
  const { rows } = await sql<{ convalidated: boolean }>`
    select convalidated from pg_constraint where conname = 'webhook_endpoints_secret_sealed' and conrelid = 'webhook_endpoints'::regclass`.execute(db);
  if (rows[0] && !rows[0].convalidated) await sql`alter table webhook_endpoints validate constraint webhook_endpoints_secret_sealed`.execute(db);
}
