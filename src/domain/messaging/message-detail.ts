// getMessage: one message of the organization with its status history. The history is read from the times the
// pipeline already records on the message (acceptance, carrier acceptance, receipts, failure, revocation), which
// read in order (receipts are clamped, see receipts.ts): no second record of each change on the send path's
// writes. Another organization's id is a 404 like an unknown one.
import type { components } from '../../../generated/api.d.ts';
import * as messages from '../../db/queries/messages/messages.ts';
import { found } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

type Status = components['schemas']['MessageStatus'];
export type StatusChange = { status: Status; at: Date };

export async function getMessageDetail(tenant: Tenant, id: string): Promise<{ message: messages.MessageRow; history: StatusChange[] }> {
  const message = found(await messages.getMessage(tenant.db, tenant.organizationId, id), 'Message');
  return { message, history: statusHistory(message) };
}

/** Each status the message reached, oldest first, at the time it reached it (transient `sending` left out). */
function statusHistory(m: messages.MessageRow): StatusChange[] {
  if (m.direction === 'inbound') return [{ status: 'received', at: m.created_at }];
  // held_until outlives the hold: it says the message waited for quiet hours at some point.
  const history: StatusChange[] = [{ status: m.held_until ? 'held' : 'queued', at: m.created_at }];
  const reached = (status: Status, at: Date | null) => {
    if (at) history.push({ status, at });
  };
  reached('sent', m.sent_at);
  reached('delivered', m.delivered_at);
  reached('read', m.read_at);
  reached(m.status === 'undeliverable' ? 'undeliverable' : 'failed', m.failed_at);
  reached('revoked', m.revoked_at);
  // Stable: equal times keep the pipeline's order (sent before delivered when a carrier reports both at once).
  return history.sort((a, b) => a.at.getTime() - b.at.getTime());
}
