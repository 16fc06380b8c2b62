// Which sender a message goes from: the one named (404 unknown, 409 not ACTIVE), or the organization's default,
// its oldest ACTIVE sender (422 when it has none).
import * as q from '../../db/queries/conversations/senders.ts';
import type { Db } from '../../db/database.ts';
import { conflict, found, unprocessable } from '../errors.ts';

export type SenderRow = q.SenderRow;

export async function resolveSender(db: Db, organizationId: string, senderId: string | undefined): Promise<SenderRow> {
  if (senderId) {
    const sender = found(await q.getSender(db, organizationId, senderId), 'Sender ID');
    if (sender.status !== 'ACTIVE') throw conflict('INVALID_STATE', `Sender ID ${senderId} is ${sender.status}, not ACTIVE.`);
    return sender;
  }
  const sender = await q.oldestActiveSender(db, organizationId);
  if (!sender) throw unprocessable('UNPROCESSABLE', 'The organization has no ACTIVE sender ID; create one or name `senderId`.');
  return sender;
}
