// What a message's move to its fallback sender (dispatch.ts moveToFallbackSender) leaves behind in the conversation it
// left, the contact's conversation with the original sender (an RCS agent): the bot session a bot blast started
// there follows the message, since the contact's reply comes to the fallback sender's conversation; and the
// conversation itself goes when the move emptied it (the message was its only one): the contact never saw it.
import { sql } from 'kysely';
import type { Tx } from '../../database.ts';
import { rowsOf } from '../../rows.ts';

/** A moved message: the conversation it left (`from`) and the one it is in now (`to`). */
export type ConversationMove = { organizationId: string; from: string; to: string };

// System handle: the dispatcher moves messages of every organization; each row names its own.
/**
 * In the caller's transaction: the left conversations are locked first (a message inserted into one meanwhile
 * holds its key, so the emptiness read after the lock sees it). Then an ACTIVE bot session of a left conversation
 * moves to the message's new conversation with its node visits, and that conversation becomes the bot's — unless a
 * session runs there already or a human holds it (handed over by a bot: the human's until handed back). Last, a
 * left conversation with no message and no bot session any more is deleted. Answers how many were deleted.
 */
export async function followMovedMessages(tx: Tx, moves: readonly ConversationMove[]): Promise<number> {
  if (moves.length === 0) return 0;
  const v = rowsOf('v', [
    { name: 'organization_id', type: 'uuid', values: moves.map((m) => m.organizationId) },
    { name: 'from_id', type: 'uuid', values: moves.map((m) => m.from) },
    { name: 'to_id', type: 'uuid', values: moves.map((m) => m.to) },
  ]);
  await sql`select c.id from conversations c join ${v} on c.organization_id = v.organization_id and c.id = v.from_id
    order by c.id for update of c`.execute(tx);
  await sql`
    with w as (select distinct on (organization_id, from_id) * from ${v} where from_id <> to_id order by organization_id, from_id, to_id),
    s as (
      update bot_sessions bs set conversation_id = w.to_id, updated_at = now()
      from w join conversations t on t.organization_id = w.organization_id and t.id = w.to_id
      where bs.organization_id = w.organization_id and bs.conversation_id = w.from_id and bs.status = 'ACTIVE'
        and not (t.handled_by = 'human' and t.bot_id is not null)
        and not exists (select 1 from bot_sessions o
          where o.organization_id = w.organization_id and o.conversation_id = w.to_id and o.status = 'ACTIVE')
      returning bs.id, bs.organization_id, bs.bot_id, bs.conversation_id
    ),
    visits as (
      update bot_node_visits x set conversation_id = s.conversation_id
      from s where x.organization_id = s.organization_id and x.session_id = s.id
      returning 1
    )
    update conversations c set handled_by = 'bot', bot_id = s.bot_id, updated_at = now()
    from s where c.organization_id = s.organization_id and c.id = s.conversation_id`.execute(tx);
  const deleted = await sql`
    delete from conversations c using (select distinct organization_id, from_id from ${v}) w
    where c.organization_id = w.organization_id and c.id = w.from_id
      and not exists (select 1 from messages m where m.organization_id = c.organization_id and m.conversation_id = c.id)
      and not exists (select 1 from bot_sessions bs where bs.organization_id = c.organization_id and bs.conversation_id = c.id)`.execute(
    tx,
  );
  return Number(deleted.numAffectedRows ?? 0);
}
