// Organization-wide activity counts that are not message figures (no rollup: each is one indexed count on its own
// table): conversations created, sessions started, contacts created, opt-outs recorded, in [from, to).
import { sql } from 'kysely';
import type { Db } from '../../database.ts';
import { tenant } from '../../tenant.ts';

export type ActivityCounts = { conversations: number; sessions: number; newContacts: number; optOuts: number };

export async function activityCounts(db: Db, orgId: string, from: Date, to: Date): Promise<ActivityCounts> {
  const count = sql<string>`count(*)::int8`;
  const [conversations, sessions, newContacts, optOuts] = await Promise.all([
    tenant(db.selectFrom('conversations'), orgId).select(count.as('n')).where('created_at', '>=', from).where('created_at', '<', to).executeTakeFirstOrThrow(),
    // A session is a 24-hour window opened by an inbound message: an inbound message with no inbound message of
    // the same conversation in the 24 hours before it starts one.
    tenant(db.selectFrom('messages as m'), orgId, 'm.organization_id')
      .select(count.as('n'))
      .where('m.direction', '=', 'inbound')
      .where('m.created_at', '>=', from)
      .where('m.created_at', '<', to)
      .where(({ not, exists, selectFrom }) =>
        not(exists(
          tenant(selectFrom('messages as p'), orgId, 'p.organization_id')
            .select(sql`1`.as('one'))
            .whereRef('p.conversation_id', '=', 'm.conversation_id')
            .where('p.direction', '=', 'inbound')
            .where(sql<boolean>`p.created_at < m.created_at and p.created_at >= m.created_at - interval '24 hours'`),
        )))
      .executeTakeFirstOrThrow(),
    tenant(db.selectFrom('contacts'), orgId).select(count.as('n')).where('created_at', '>=', from).where('created_at', '<', to).executeTakeFirstOrThrow(),
    tenant(db.selectFrom('consent_events'), orgId).select(count.as('n')).where('action', '=', 'OPT_OUT').where('created_at', '>=', from).where('created_at', '<', to).executeTakeFirstOrThrow(),
  ]);
  return { conversations: Number(conversations.n), sessions: Number(sessions.n), newContacts: Number(newContacts.n), optOuts: Number(optOuts.n) };
}

/** Contacts existing at `to` (created before it), bots with a published flow at `to`, bot sessions in [from, to). */
export async function overviewCounts(db: Db, orgId: string, from: Date, to: Date): Promise<{ contactsTotal: number; botsPublished: number; botSessions: number }> {
  const count = sql<string>`count(*)::int8`;
  const [contacts, bots, sessions] = await Promise.all([
    tenant(db.selectFrom('contacts'), orgId).select(count.as('n')).where('created_at', '<', to).executeTakeFirstOrThrow(),
    tenant(db.selectFrom('bots'), orgId).select(count.as('n')).where('published_flow', 'is not', null).where('published_at', '<', to).executeTakeFirstOrThrow(),
    tenant(db.selectFrom('bot_sessions'), orgId).select(count.as('n')).where('created_at', '>=', from).where('created_at', '<', to).executeTakeFirstOrThrow(),
  ]);
  return { contactsTotal: Number(contacts.n), botsPublished: Number(bots.n), botSessions: Number(sessions.n) };
}
