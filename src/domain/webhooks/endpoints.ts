// Webhook endpoints: listing, creating (destination rules, the one-time secret, sealed at rest), changing
// (enabling and disabling) and deleting. Another organization's endpoint id is 404.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/webhooks/endpoints.ts';
import { cancelPendingDeliveries } from '../../db/queries/webhooks/deliveries.ts';
import { sealSecret } from '../../lib/secrets.ts';
import { found, invalidField } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { DestinationRefusedError, checkDestination } from '../../net/destination-guard.ts';
import { generateWebhookSecret } from './signing.ts';

type CreateBody = components['schemas']['CreateWebhookEndpointBody'];
type UpdateBody = components['schemas']['UpdateWebhookEndpointBody'];

const WHAT = 'Webhook endpoint';

/** 400 VALIDATION_ERROR on body.url unless the URL is an allowed destination (resolving its host now). */
async function assertDestination(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkDestination(url, allowPrivate);
  } catch (error) {
    if (error instanceof DestinationRefusedError) {
      // The refusal a developer meets first with a local receiver: say which setting lets it through.
      const local = !allowPrivate && /non-public|https:\/\//.test(error.message);
      throw invalidField(
        'body.url',
        `url ${error.message}${local ? ' (for local development only, start the server with WEBHOOK_ALLOW_PRIVATE=1 to allow http:// and private addresses)' : ''}`,
      );
    }
    throw error;
  }
}

/** Every endpoint of the organization, newest first. */
export function listEndpoints(tenant: Tenant): Promise<q.WebhookEndpointRow[]> {
  return q.listEndpoints(tenant.db, tenant.organizationId);
}

/** Creates an active endpoint; `secret` is the plain `whsec_` secret, answered this once and stored sealed. */
export async function createEndpoint(
  tenant: Tenant,
  services: Services,
  body: CreateBody,
): Promise<{ row: q.WebhookEndpointRow; secret: string }> {
  await assertDestination(body.url, services.config.webhookAllowPrivate);
  const secret = generateWebhookSecret();
  const row = await q.insertEndpoint(tenant.db, tenant.organizationId, {
    url: body.url,
    description: body.description ?? null,
    events: body.events,
    sealedSecret: sealSecret(secret),
  });
  return { row, secret };
}

/**
 * Applies a PATCH. `isActive: true` on a disabled endpoint re-enables it and resets the failure streak;
 * `isActive: false` on an active one disables it (manual) and cancels its pending retries; the current value
 * is a no-op. 404 when the organization has no such endpoint.
 */
export async function updateEndpoint(tenant: Tenant, services: Services, id: string, body: UpdateBody): Promise<q.WebhookEndpointRow> {
  if (body.url !== undefined) await assertDestination(body.url, services.config.webhookAllowPrivate); // before the transaction: DNS may be slow
  return inTransaction(tenant.db, async (tx) => {
    const current = found(await q.getEndpoint(tx, tenant.organizationId, id, { forUpdate: true }), WHAT);
    const patch: q.WebhookEndpointPatch = {};
    if (body.url !== undefined) patch.url = body.url;
    if (body.events !== undefined) patch.events = body.events;
    if (body.description !== undefined) patch.description = body.description;
    if (body.isActive === true && !current.is_active) {
      Object.assign(patch, { is_active: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
    } else if (body.isActive === false && current.is_active) {
      Object.assign(patch, { is_active: false, disabled_reason: 'manual', disabled_at: new Date() });
    }
    if (!Object.keys(patch).length) return current;
    const row = found(await q.updateEndpoint(tx, tenant.organizationId, id, patch), WHAT); // locked: always found
    if (patch.is_active === false) await cancelPendingDeliveries(tx, tenant.organizationId, id);
    return row;
  });
}

/** Deletes the endpoint; its pending deliveries and its delivery log go with it. Returns its id; 404 when unknown. */
export async function deleteEndpoint(tenant: Tenant, id: string): Promise<string> {
  return found(await q.deleteEndpoint(tenant.db, tenant.organizationId, id), WHAT);
}
