// A refusal that comes after a message was accepted: the phone opted out (STOP) or went on the DNC list while its
// messages waited for their turn — held for quiet hours, or queued behind a sender's rate in a long blast. The gate
// refused them at acceptance; dispatch does not look again, so they are failed here, in the transaction that
// records the refusal, before any carrier takes them (a message already claimed by a dispatcher goes on).
import { failUnsentTo } from '../../db/queries/messages/messages.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { emitEvents } from '../webhooks/events.ts';
import { messageEvent } from './message-events.ts';
import type { TenantDb } from '../../db/tenant.ts';

const REFUSALS = {
  OPTED_OUT: { code: 'OPTED_OUT', message: 'The recipient opted out after this message was accepted; it was not sent.', overridable: true },
  DNC_LISTED: {
    code: 'DNC_LISTED',
    message: 'The phone was put on the Do-Not-Contact list after this message was accepted; it was not sent.',
    overridable: false,
  },
} as const;

/** Fails the unsent outbound messages to `phones` with the refusal's code; `message.failed` for each. Answers how many. */
export async function failUnsentAfter(
  db: TenantDb,
  queue: JobQueue,
  orgId: string,
  phones: readonly string[],
  refusal: keyof typeof REFUSALS,
): Promise<number> {
  const failed = await failUnsentTo(db, orgId, phones, REFUSALS[refusal]);
  await emitEvents(
    db,
    queue,
    failed.map((m) => messageEvent('message.failed', m, { id: m.sender_id })),
  );
  return failed.length;
}
