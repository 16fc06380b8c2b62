// SQL for taps (intents, bot summary, top): a tap is an inbound message answering a suggested reply or button. An
// RCS/chat-app tap carries its postback (content `{type: 'reply', postback}`); an inbound text message (SMS, or a
// label typed on RCS/chat apps) counts as a tap of a suggested reply of the latest outbound message of its
// conversation before it when its text equals that reply's text (trimmed, case-insensitive) or is the reply's
// number (1-based, as SMS lists them): what a bot follows as the intent (src/domain/bots/runtime.ts intentOf). The tapped value is the postback trimmed and lower-cased (the intent
// dictionary's normalization). Computed from the messages table (index messages (organization_id, created_at …));
// every table reference names the organization.
import { sql, type RawBuilder } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

/**
 * A subquery of taps `(message_id, conversation_id, contact_id, created_at, value)` of inbound messages of [from, to)
 * (either bound optional) that satisfy `where` (over the inbound message `m`).
 */
export function tapsOf(orgId: string, range: { from?: Date; to?: Date }, where: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const messages = sql.table('messages');
  return sql`(
    select m.id as message_id, m.conversation_id, m.contact_id, m.created_at,
      coalesce(
        case when m.content->>'type' = 'reply' then nullif(lower(btrim(m.content->>'postback')), '') end,
        case when m.content->>'type' = 'text' and coalesce(btrim(m.content->>'text'), '') <> '' then (
          select lower(btrim(r.reply->>'postback'))
          from ${messages} o,
            jsonb_array_elements(case when jsonb_typeof(o.content->'replies') = 'array' then o.content->'replies' else '[]'::jsonb end)
              with ordinality as r(reply, n)
          where o.organization_id = ${orgId} and o.conversation_id = m.conversation_id and o.direction = 'outbound'
            and o.created_at <= m.created_at
            and o.id = (
              select o2.id from ${messages} o2
              where o2.organization_id = ${orgId} and o2.conversation_id = m.conversation_id and o2.direction = 'outbound' and o2.created_at <= m.created_at
              order by o2.created_at desc, o2.id desc limit 1)
            and (lower(btrim(r.reply->>'text')) = lower(btrim(m.content->>'text')) or btrim(m.content->>'text') = r.n::text)
            and coalesce(btrim(r.reply->>'postback'), '') <> ''
          order by (lower(btrim(r.reply->>'text')) = lower(btrim(m.content->>'text'))) desc, r.n
          limit 1)
        end
      ) as value
    from ${messages} m
    where m.organization_id = ${orgId} and m.direction = 'inbound'
      ${range.from ? sql`and m.created_at >= ${range.from}` : sql``}
      ${range.to ? sql`and m.created_at < ${range.to}` : sql``}
      and ${where}
  )`;
}

export type TapCount = { value: string; intentId: string | null; label: string | null; taps: number; uniqueContacts: number };

/** Taps per value in [from, to), most tapped first (ties by value), with the dictionary intent of the value. */
export async function tapCounts(
  db: TenantDb,
  orgId: string,
  range: { from?: Date; to?: Date },
  opts: { where?: RawBuilder<unknown>; limit?: number } = {},
): Promise<TapCount[]> {
  const intents = sql.table('intents');
  const result = await sql<{ value: string; intent_id: string | null; label: string | null; taps: string; contacts: string }>`
    select t.value, i.id as intent_id, i.label, count(*)::int8 as taps, count(distinct t.contact_id)::int8 as contacts
    from ${tapsOf(orgId, range, opts.where)} t
    left join ${intents} i on i.organization_id = ${orgId} and i.value = t.value
    where t.value is not null
    group by t.value, i.id, i.label
    order by count(*) desc, t.value collate "C" asc
    ${opts.limit !== undefined ? sql`limit ${opts.limit}` : sql``}`.execute(db);
  return result.rows.map((r) => ({
    value: r.value,
    intentId: r.intent_id,
    label: r.label,
    taps: Number(r.taps),
    uniqueContacts: Number(r.contacts),
  }));
}
