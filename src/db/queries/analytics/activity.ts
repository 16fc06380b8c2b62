// Organization-wide activity counts that are not message figures: conversations created, sessions started (from the
// rollup), contacts created, opt-outs recorded, in [from, to). Each other count is one indexed count on its table.
import { sql } from 'kysely';
import { tenant, type TenantDb } from '../../tenant.ts';
import { rollupSessions } from './rollups.ts';

export type ActivityCounts = { conversations: number; sessions: number; newContacts: number; optOuts: number };

export async function activityCounts(db: TenantDb, orgId: string, from: Date, to: Date): Promise<ActivityCounts> {
  const count = sql<string>`count(*)::int8`;
  const [conversations, sessions, newContacts, optOuts] = await Promise.all([
    tenant(db.selectFrom('conversations'), orgId)
      .select(count.as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow(),
    // Sessions are recorded (messages.opens_session, migration 0028) and counted by the rollup: no scan of messages.
    rollupSessions(db, orgId, from, to),
    tenant(db.selectFrom('contacts'), orgId)
      .select(count.as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow(),
    tenant(db.selectFrom('consent_events'), orgId)
      .select(count.as('n'))
      .where('action', '=', 'OPT_OUT')
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow(),
  ]);
  return { conversations: Number(conversations.n), sessions, newContacts: Number(newContacts.n), optOuts: Number(optOuts.n) };
}

/** Contacts existing at `to` (created before it), bots with a published flow at `to`, bot sessions in [from, to). */
export async function overviewCounts(
  db: TenantDb,
  orgId: string,
  from: Date,
  to: Date,
): Promise<{ contactsTotal: number; botsPublished: number; botSessions: number }> {
  const count = sql<string>`count(*)::int8`;
  const [contacts, bots, sessions] = await Promise.all([
    tenant(db.selectFrom('contacts'), orgId).select(count.as('n')).where('created_at', '<', to).executeTakeFirstOrThrow(),
    tenant(db.selectFrom('bots'), orgId)
      .select(count.as('n'))
      .where('published_flow', 'is not', null)
      .where('published_at', '<', to)
      .executeTakeFirstOrThrow(),
    tenant(db.selectFrom('bot_sessions'), orgId)
      .select(count.as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirstOrThrow(),
  ]);
  return { contactsTotal: Number(contacts.n), botsPublished: Number(bots.n), botSessions: Number(sessions.n) };
}
