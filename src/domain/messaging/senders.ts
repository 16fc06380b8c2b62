// Which sender a message goes from: the one named (404 unknown, 409 not ACTIVE, 422 ACTIVE but not send-ready),
// or the organization's default, its oldest ACTIVE send-ready sender (422 when it has none).
import * as q from '../../db/queries/sender-ids/senders.ts';
import { ApiError, found, unknownReference, unprocessable } from '../errors.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type SenderRow = q.SenderRow;

/**
 * The named sender, or the default one. `field` is where the request named `senderId` (`body.senderId`): an
 * unknown id then answers 404 naming it (`unknownReference`); without it (an id taken from stored data, e.g. a
 * conversation's sender) a plain 404.
 */
export async function resolveSender(
  db: TenantDb,
  organizationId: string,
  senderId: string | undefined,
  field?: string,
): Promise<SenderRow> {
  return chosenSender(
    senderId ? await q.getSender(db, organizationId, senderId) : await q.oldestActiveSender(db, organizationId),
    senderId,
    field,
  );
}

/**
 * The channel a send asks for when it names none (`channelType` absent): the sender's own — `CHATAPP` for a chat-app
 * business sender, which carries nothing else; `RCS` (with its SMS/MMS fallback) for every other sender. Direct
 * sends, previews, blasts and their estimates all take it, so a chat-app sender's blast goes by chat-app.
 */
export function defaultChannelOf(sender: Pick<SenderRow, 'type'> | null | undefined): 'RCS' | 'CHATAPP' {
  return sender?.type === 'CHATAPP_BUSINESS' ? 'CHATAPP' : 'RCS';
}

/** resolveSender's checks on a row read elsewhere: the named sender's (`senderId`) or the default one's (`row`). */
export function chosenSender(row: SenderRow | undefined, senderId: string | undefined, field?: string): SenderRow {
  if (senderId) {
    if (!row && field) throw unknownReference(field, 'sender ID');
    const sender = found(row, 'Sender ID');
    assertSendable(sender, field);
    return sender;
  }
  if (!row) throw unprocessable('UNPROCESSABLE', 'The organization has no ACTIVE, send-ready sender ID; activate one or name `senderId`.');
  return row;
}

/**
 * A sender may send when it is ACTIVE (else 409 INVALID_STATE, as `sendMessage` documents, with its status) and
 * send-ready (else 422 UNPROCESSABLE: every prerequisite is not met, e.g. registration lapsed or no protocol
 * ACTIVE). Checked before anything is stored or queued.
 */
export function assertSendable(sender: SenderRow, field?: string): void {
  if (sender.status !== 'ACTIVE') {
    throw new ApiError(409, 'INVALID_STATE', `Sender ID ${sender.id} is ${sender.status}, not ACTIVE.`, {
      ...(field ? { details: [{ field, message: `the sender ID is ${sender.status}`, code: 'invalid_state' }] } : {}),
    });
  }
  if (!sender.send_ready) {
    throw new ApiError(
      422,
      'UNPROCESSABLE',
      `Sender ID ${sender.id} is ACTIVE but not send-ready${sender.status_reason ? `: ${sender.status_reason}` : ''}.`,
      {
        ...(field ? { details: [{ field, message: 'the sender ID is not send-ready', code: 'not_send_ready' }] } : {}),
      },
    );
  }
}

/** A sender ID of the organization in any status; 404 (naming `field` when given) otherwise. */
export async function requireSender(db: TenantDb, organizationId: string, senderId: string, field?: string): Promise<SenderRow> {
  const sender = await q.getSender(db, organizationId, senderId);
  if (!sender && field) throw unknownReference(field, 'sender ID');
  return found(sender, 'Sender ID');
}
