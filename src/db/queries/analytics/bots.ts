// SQL for a bot's lifetime summary (GET /v1/analytics/bots/{id}): its sessions (bot_sessions), the messages exchanged
// during them (a message of the session's conversation between the session's start and its last change: outbound
// ones the bot sent, origin `bot` or `event`, handed to a carrier; inbound ones received), and the intent values tapped in them. Every step names
// the organization.
import { sql } from 'kysely';
import { tenant, type TenantDb } from '../../tenant.ts';
import { tapCounts } from './taps.ts';

export type BotLifetime = {
  sessions: number;
  uniqueContacts: number;
  completions: number;
  handoffs: number;
  durationSeconds: number;
  lastActivityAt: Date | null;
};

export async function botOf(db: TenantDb, orgId: string, botId: string): Promise<{ id: string; name: string } | undefined> {
  return tenant(db.selectFrom('bots'), orgId).select(['id', 'name']).where('id', '=', botId).executeTakeFirst();
}

export async function botLifetime(db: TenantDb, orgId: string, botId: string): Promise<BotLifetime> {
  const row = await tenant(db.selectFrom('bot_sessions as s'), orgId, 's.organization_id')
    .where('s.bot_id', '=', botId)
    .select([
      sql<string>`count(*)::int8`.as('sessions'),
      sql<string>`count(distinct s.contact_id)::int8`.as('contacts'),
      // Reached an End node: the session ended on a node of type END of the flow it ran.
      sql<string>`count(*) filter (where s.status = 'ENDED' and exists (
        select 1 from jsonb_array_elements(coalesce(s.flow->'nodes', '[]'::jsonb)) n
        where n->>'id' = s.node_id and n->>'type' = 'END'))::int8`.as('completions'),
      sql<string>`count(*) filter (where s.status = 'HANDED_OFF')::int8`.as('handoffs'),
      sql<string>`coalesce(sum(extract(epoch from (s.updated_at - s.created_at))), 0)::float8`.as('duration'),
      sql<Date | null>`max(s.updated_at)`.as('last'),
    ])
    .executeTakeFirstOrThrow();
  return {
    sessions: Number(row.sessions),
    uniqueContacts: Number(row.contacts),
    completions: Number(row.completions),
    handoffs: Number(row.handoffs),
    durationSeconds: Number(row.duration),
    lastActivityAt: row.last === null ? null : new Date(row.last),
  };
}

/** Messages of the bot's sessions: outbound sent by the bot, inbound received; each message counted once. */
export async function botMessages(db: TenantDb, orgId: string, botId: string): Promise<{ sent: number; received: number }> {
  const row = await tenant(db.selectFrom('messages as m'), orgId, 'm.organization_id')
    .where(({ exists, selectFrom }) =>
      exists(
        tenant(selectFrom('bot_sessions as s'), orgId, 's.organization_id')
          .select(sql`1`.as('one'))
          .where('s.bot_id', '=', botId)
          .whereRef('s.conversation_id', '=', 'm.conversation_id')
          .whereRef('m.created_at', '>=', 's.created_at')
          .whereRef('m.created_at', '<=', 's.updated_at'),
      ),
    )
    .select([
      // What the bot sent, whatever started it: a session started by an event trigger sends with origin `event`
      // (src/domain/bots/triggers.ts), later turns with `bot`. `sent` as AnalyticsMessageMetrics defines it:
      // handed to a carrier (sent_at set), not revoked.
      sql<string>`count(*) filter (where m.direction = 'outbound' and m.origin in ('bot', 'event') and m.sent_at is not null
        and m.status <> 'revoked')::int8`.as('sent'),
      sql<string>`count(*) filter (where m.direction = 'inbound')::int8`.as('received'),
    ])
    .executeTakeFirstOrThrow();
  return { sent: Number(row.sent), received: Number(row.received) };
}

/** The `limit` most tapped values (src/db/queries/analytics/taps.ts) during the bot's sessions, ties by value. */
export async function botTopIntents(db: TenantDb, orgId: string, botId: string, limit: number): Promise<{ value: string; taps: number }[]> {
  const sessions = sql.table('bot_sessions');
  const inSession = sql`exists (select 1 from ${sessions} s where s.organization_id = ${orgId} and s.bot_id = ${botId}
    and s.conversation_id = m.conversation_id and m.created_at >= s.created_at and m.created_at <= s.updated_at)`;
  return (await tapCounts(db, orgId, {}, { where: inSession, limit })).map((t) => ({ value: t.value, taps: t.taps }));
}
