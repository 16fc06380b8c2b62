// Which sender a message goes from: the one named (404 unknown, 409 not ACTIVE), or the organization's default,
// its oldest ACTIVE sender (422 when it has none).
import * as q from '../../db/queries/conversations/senders.ts';
import type { Db } from '../../db/database.ts';
import { conflict, found, unknownReference, unprocessable } from '../errors.ts';

export type SenderRow = q.SenderRow;

/**
 * The named sender, or the default one. `field` is where the request named `senderId` (`body.senderId`): an
 * unknown id then answers 404 naming it (`unknownReference`); without it (an id taken from stored data, e.g. a
 * conversation's sender) a plain 404.
 */
export async function resolveSender(db: Db, organizationId: string, senderId: string | undefined, field?: string): Promise<SenderRow> {
  if (senderId) {
    const sender = await requireSender(db, organizationId, senderId, field);
    if (sender.status !== 'ACTIVE') throw conflict('INVALID_STATE', `Sender ID ${senderId} is ${sender.status}, not ACTIVE.`);
    return sender;
  }
  const sender = await q.oldestActiveSender(db, organizationId);
  if (!sender) throw unprocessable('UNPROCESSABLE', 'The organization has no ACTIVE sender ID; create one or name `senderId`.');
  return sender;
}

/** A sender ID of the organization in any status; 404 (naming `field` when given) otherwise. */
export async function requireSender(db: Db, organizationId: string, senderId: string, field?: string): Promise<SenderRow> {
  const sender = await q.getSender(db, organizationId, senderId);
  if (!sender && field) throw unknownReference(field, 'sender ID');
  return found(sender, 'Sender ID');
}
