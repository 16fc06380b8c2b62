// SQL for webhook endpoints: the section's CRUD, the subscribers of an event, and the failure streaks the delivery
// worker keeps. Tenant-scoped: every query names organization_id (tenant() or the inserted values).
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import type { WebhookDisabledReason, WebhookEndpointsTable } from '../../tables/webhooks.ts';
import type { WebhookEventName } from '../../tables/enums.ts';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookEndpointPatch = Updateable<WebhookEndpointsTable>;

/** Every endpoint of the organization, newest first (the list is not paginated). */
export function listEndpoints(db: TenantDb, orgId: string): Promise<WebhookEndpointRow[]> {
  return tenant(db.selectFrom('webhook_endpoints'), orgId).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** One endpoint of the organization; `forUpdate` locks it until the surrounding transaction ends. */
export function getEndpoint(
  db: TenantDb,
  orgId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<WebhookEndpointRow | undefined> {
  const query = tenant(db.selectFrom('webhook_endpoints'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** `e.sealedSecret` is the secret as stored (sealed, `v1:…`; migration 0008 refuses anything else). */
export function insertEndpoint(
  db: TenantDb,
  orgId: string,
  e: { url: string; description: string | null; events: WebhookEventName[]; sealedSecret: string },
): Promise<WebhookEndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({ organization_id: orgId, url: e.url, description: e.description, events: e.events, secret: e.sealedSecret })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateEndpoint(
  db: TenantDb,
  orgId: string,
  id: string,
  patch: WebhookEndpointPatch,
): Promise<WebhookEndpointRow | undefined> {
  return tenant(db.updateTable('webhook_endpoints'), orgId)
    .set({ ...patch, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the endpoint (its deliveries and attempts cascade); its id, or undefined when the organization has none such. */
export async function deleteEndpoint(db: TenantDb, orgId: string, id: string): Promise<string | undefined> {
  const row = await tenant(db.deleteFrom('webhook_endpoints'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
  return row?.id;
}

// System handle: the dispatcher and receipts emit events for the messages of many organizations at once.
/** Active endpoints subscribed to at least one of `types`. */
export function subscribedEndpoints(db: Db, orgId: string, types: string[]): Promise<Array<{ id: string; events: string[] }>> {
  return tenant(db.selectFrom('webhook_endpoints'), orgId)
    .select(['id', 'events'])
    .where('is_active', '=', true)
    .where(sql<boolean>`events && ${types}::text[]`)
    .execute();
}

// System handle: a webhook delivery batch (one pg-boss batch) holds the deliveries of many organizations.
/** Stores a new failure streak and, with `disable`, disables the endpoint for that reason. */
export async function setEndpointState(
  db: Db,
  orgId: string,
  id: string,
  state: { consecutiveFailures: number; disable: WebhookDisabledReason | null },
): Promise<void> {
  const disabled = state.disable
    ? { is_active: false, disabled_reason: state.disable, disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` }
    : {};
  await tenant(db.updateTable('webhook_endpoints'), orgId)
    .set({ consecutive_failures: state.consecutiveFailures, ...disabled })
    .where('id', '=', id)
    .execute();
}
