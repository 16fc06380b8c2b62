// What a message reports about its SMS/MMS fallback (`fallbackUsed`, `fallbackReason`; FallbackReason in the
// document). While the message is on its way they are the plan: the reason it is going by SMS/MMS. Once it has
// ended they stay only when a channel carried it: the fallback carried it, or was attempted after RCS had
// (`RCS_DELIVERY_FAILED`, `RCS_EXPIRED`). A message that ended before any channel carried it — refused at send
// (`CARRIER_REJECTED`), failed for want of a channel or of a working provider, revoked before sending — drops
// the plan: `fallbackUsed: false`, `fallbackReason: null`, no `channel`; its reason is in `error`. The stored
// row, the message events, the conversation's messages and the message report then all say the same.

/** Whether a message ending now, before any further channel carries it, drops its planned fallback. */
export function dropsFallbackOnEnd(message: { sent_at: Date | null }): boolean {
  return message.sent_at === null; // no carrier ever accepted it
}
