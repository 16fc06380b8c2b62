// SQL for bot node visits (migration 0027): the runtime writes each step's trail in the step's transaction — the
// visit the session waited in is closed, the nodes it walked through are inserted in order (the identity id keeps
// the order; they share the transaction's time), the last one left open when the session waits there. Only a
// session's latest visit of each node keeps `latest` (the funnel counts a session once per node).
import { sql } from 'kysely';
import { tenant, type TenantDb } from '../../tenant.ts';

/** How a session left a node; null while it waits there. */
export type VisitExit = 'advanced' | 'completed' | 'handed_off' | 'errored' | 'abandoned';

export type VisitStep = { nodeId: string; nodeType: string; exit: VisitExit | null; nextNodeId: string | null };

export type VisitSession = {
  id: string;
  botId: string;
  botVersion: number | null;
  conversationId: string;
  contactId: string;
  startedAt: Date;
};

/** Closes the session's open visit (when `close` is given), then inserts the trail. */
export async function recordVisits(
  db: TenantDb,
  orgId: string,
  session: VisitSession,
  step: { close?: { exit: VisitExit; nextNodeId: string | null }; trail: readonly VisitStep[] },
): Promise<void> {
  if (step.close) {
    await tenant(db.updateTable('bot_node_visits'), orgId)
      .set({ exit: step.close.exit, next_node_id: step.close.exit === 'advanced' ? step.close.nextNodeId : null, left_at: sql`now()` })
      .where('session_id', '=', session.id)
      .where('exit', 'is', null)
      .execute();
  }
  if (step.trail.length === 0) return;
  const nodeIds = [...new Set(step.trail.map((v) => v.nodeId))];
  await tenant(db.updateTable('bot_node_visits'), orgId)
    .set({ latest: false })
    .where('session_id', '=', session.id)
    .where('node_id', 'in', nodeIds)
    .where('latest', '=', true)
    .execute();
  const lastOf = new Map(step.trail.map((v, i) => [v.nodeId, i]));
  await db
    .insertInto('bot_node_visits')
    .values(
      step.trail.map((v, i) => ({
        organization_id: orgId,
        bot_id: session.botId,
        bot_version: session.botVersion,
        session_id: session.id,
        conversation_id: session.conversationId,
        contact_id: session.contactId,
        session_started_at: session.startedAt,
        node_id: v.nodeId,
        node_type: v.nodeType,
        exit: v.exit,
        next_node_id: v.exit === 'advanced' ? v.nextNodeId : null,
        left_at: v.exit === null ? null : sql<Date>`now()`,
        latest: lastOf.get(v.nodeId) === i,
      })),
    )
    .execute();
}

/** The open visits of the conversation's running sessions end `abandoned` (a new session replaces them). */
export async function abandonOpenVisits(db: TenantDb, orgId: string, conversationId: string): Promise<void> {
  await tenant(db.updateTable('bot_node_visits'), orgId)
    .set({ exit: 'abandoned', left_at: sql`now()` })
    .where('exit', 'is', null)
    .where(
      'session_id',
      'in',
      tenant(db.selectFrom('bot_sessions'), orgId)
        .select('id')
        .where('conversation_id', '=', conversationId)
        .where('status', '=', 'ACTIVE'),
    )
    .execute();
}
