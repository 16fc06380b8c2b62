// revokeMessage: withdraws an outbound message that has not reached the handset — any message not yet sent,
// or an RCS message in flight that the carrier can still withdraw. Revoking twice answers the same.
import * as messages from '../../db/queries/messages/messages.ts';
import { getSender } from '../../db/queries/sender-ids/senders.ts';
import { conflict, found } from '../errors.ts';
import { providerOperation } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';
import { emitEvent } from '../webhooks/events.ts';
import { inTenantTransaction, queueOf } from './context.ts';
import { dedupeKeyOf, dropsFallbackOnEnd } from './fallback.ts';
import { messageEvent } from './message-events.ts';

export async function revokeMessage(tenant: Tenant, services: Services, id: string): Promise<messages.MessageRow> {
  const message = found(await messages.getMessage(tenant.db, tenant.organizationId, id), 'Message');
  if (message.status === 'revoked') return message;
  const notYetSent = message.status === 'queued' || message.status === 'held';
  const rcsInFlight = (message.status === 'sending' || message.status === 'sent') && message.planned_channel === 'RCS';
  if (message.direction !== 'outbound' || !(notYetSent || rcsInFlight)) {
    throw conflict(
      'INVALID_STATE',
      `A ${message.direction} message in status ${message.status} on ${message.planned_channel ?? 'no channel'} cannot be revoked; only undelivered RCS messages (or any message not yet sent) can.`,
    );
  }
  // The carrier is asked first (outside any transaction): once it has delivered, nothing changes here. A provider
  // that cannot withdraw a sent message answers 422 PROVIDER_UNSUPPORTED.
  if (rcsInFlight && message.provider_message_id) {
    const sender = found(await getSender(tenant.db, tenant.organizationId, message.sender_id), 'Sender ID');
    const withdraw = providerOperation(services.providers.forSender(sender), 'revoke', 'revoking a sent RCS message', 'path.id');
    const ref = { providerMessageId: message.provider_message_id, dedupeKey: dedupeKeyOf(message), to: message.contact_phone };
    if (!(await withdraw(ref))) throw conflict('INVALID_STATE', 'The carrier has already delivered this message.');
  }
  return inTenantTransaction(tenant, async ({ db, organizationId }) => {
    const revoked = await messages.revokeMessage(db, organizationId, message.id, message.status, {
      dropFallback: dropsFallbackOnEnd(message),
    });
    if (!revoked) throw conflict('INVALID_STATE', 'The message changed state while being revoked; read it again.');
    await emitEvent(db, queueOf(services), messageEvent('message.revoked', revoked, { id: revoked.sender_id }));
    return revoked;
  });
}
