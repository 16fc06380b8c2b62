// What a message reports about its SMS/MMS fallback (`fallbackUsed`, `fallbackReason`; FallbackReason in the
// document). While the message is on its way they are the plan: the reason it is going by SMS/MMS. Once it has
// ended they stay only when a channel carried it: the fallback carried it, or was attempted after RCS had
// (`RCS_DELIVERY_FAILED`, `RCS_EXPIRED`). A message that ended before any channel carried it — refused at send
// (`CARRIER_REJECTED`), failed for want of a channel or of a working provider, revoked before sending — drops
// the plan: `fallbackUsed: false`, `fallbackReason: null`, no `channel`; its reason is in `error`. The stored
// row, the message events, the conversation's messages and the message report then all say the same.
//
// Who carries the fallback: the message's own sender when it carries SMS/MMS, else the fallback sender chosen at
// acceptance (an RCS agent's: sending-rule.ts fallbackCarrier). A fallback known at acceptance goes from it at
// once (accept.ts); one found later — the capability lookup at dispatch, a failed or expired RCS delivery — moves the message
// to it at dispatch (dispatch.ts moveToFallbackSenders), which checks then that it may still send, with the same
// refusal as acceptance's (notReadyText).
import type { Tx } from '../../db/database.ts';
import { followMovedMessages } from '../../db/queries/messages/fallback-conversations.ts';
import type { NotReady } from '../sender-ids/sending-rule.ts';

/** Whether a message ending now, before any further channel carries it, drops its planned fallback. */
export function dropsFallbackOnEnd(message: { sent_at: Date | null }): boolean {
  return message.sent_at === null; // no carrier ever accepted it
}

/** A SENDER_NOT_READY refusal's text, at acceptance (the 422) and at a later move to the fallback sender (the message's error). */
export const notReadyText = (n: NotReady): string => `${n.message} Next: ${n.action.message}`;

/**
 * The fallback reasons of a retry after the carrier had taken the RCS message: its delivery failed
 * (`RCS_DELIVERY_FAILED`, a receipt) or did not come in time and the message was withdrawn (`RCS_EXPIRED`,
 * rcs-expiry.ts). Such a retry is a second hand-over, under its own dedupe key (dedupeKeyOf).
 */
const AFTER_RCS = new Set(['RCS_DELIVERY_FAILED', 'RCS_EXPIRED']);

/** Whether the message's fallback is a retry after its RCS attempt had been accepted by the carrier. */
export const retriedAfterRcs = (m: { fallback_reason: string | null }): boolean =>
  m.fallback_reason !== null && AFTER_RCS.has(m.fallback_reason);

/** Provider-side dedupe key: the message id, or a distinct key for the SMS/MMS retry of a failed or expired RCS send. */
export function dedupeKeyOf(m: { id: string; fallback_reason: string | null }): string {
  return retriedAfterRcs(m) ? `${m.id}:fallback` : m.id;
}

/** Why the fallback is needed, for a message's error when nobody may carry it. */
export const fallbackCause = (reason: string | null): string =>
  retriedAfterRcs({ fallback_reason: reason }) ? 'The RCS message was not delivered' : "The contact's handset cannot receive RCS";

/**
 * After messages moved to their fallback sender (dispatch.ts): the conversation each left (`leftOf`: message id →
 * its conversation before the move) gives its bot session to the message's new conversation, where the contact's
 * reply arrives, and is deleted when the move left it empty — the contact saw it never (followMovedMessages). In the
 * move's transaction.
 */
export async function followFallbackMoves(
  tx: Tx,
  moved: ReadonlyArray<{ id: string; organization_id: string; conversation_id: string }>,
  leftOf: ReadonlyMap<string, string>,
): Promise<void> {
  const moves = moved.flatMap((m) => {
    const from = leftOf.get(m.id);
    return from && from !== m.conversation_id ? [{ organizationId: m.organization_id, from, to: m.conversation_id }] : [];
  });
  if (moves.length) await followMovedMessages(tx, moves);
}
