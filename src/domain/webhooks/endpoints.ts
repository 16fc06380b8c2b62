// Creating and changing webhook endpoints: destination rules, the one-time secret, enabling and disabling.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as q from '../../db/queries/webhooks.ts';
import { invalidField } from '../errors.ts';
import { DestinationRefusedError, checkDestination } from './destination-guard.ts';
import { generateWebhookSecret } from './signing.ts';

type CreateBody = components['schemas']['CreateWebhookEndpointBody'];
type UpdateBody = components['schemas']['UpdateWebhookEndpointBody'];

/** 400 VALIDATION_ERROR on body.url unless the URL is an allowed destination (resolving its host now). */
export async function assertDestination(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkDestination(url, allowPrivate);
  } catch (error) {
    if (error instanceof DestinationRefusedError) throw invalidField('body.url', `url ${error.message}`);
    throw error;
  }
}

export async function createEndpoint(db: Db, organizationId: string, body: CreateBody, allowPrivate: boolean) {
  await assertDestination(body.url, allowPrivate);
  const secret = generateWebhookSecret();
  const row = await q.insertEndpoint(db, organizationId, { url: body.url, description: body.description ?? null, events: body.events, secret });
  return { row, secret };
}

/**
 * Applies a PATCH. `isActive: true` on a disabled endpoint re-enables it and resets the failure streak;
 * `isActive: false` on an active one disables it (manual) and cancels its pending retries; the current value
 * is a no-op. Undefined when the endpoint does not exist.
 */
export async function updateEndpoint(db: Db, organizationId: string, id: string, body: UpdateBody, allowPrivate: boolean) {
  if (body.url !== undefined) await assertDestination(body.url, allowPrivate); // before the transaction: DNS may be slow
  return inTransaction(db, async (tx) => {
    const current = await q.getEndpoint(tx, organizationId, id, { forUpdate: true });
    if (!current) return undefined;
    const patch: Parameters<typeof q.updateEndpoint>[3] = {};
    if (body.url !== undefined) patch.url = body.url;
    if (body.events !== undefined) patch.events = body.events;
    if (body.description !== undefined) patch.description = body.description;
    if (body.isActive === true && !current.is_active) {
      Object.assign(patch, { is_active: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
    } else if (body.isActive === false && current.is_active) {
      Object.assign(patch, { is_active: false, disabled_reason: 'manual', disabled_at: new Date() });
    }
    if (!Object.keys(patch).length) return current;
    const row = await q.updateEndpoint(tx, organizationId, id, patch);
    if (patch.is_active === false) await q.cancelPendingDeliveries(tx, organizationId, id);
    return row;
  });
}
