// SQL for a bot blast's sessions (issue 33 item 2): after a batch's set statement accepted its recipients, each
// accepted recipient's conversation becomes the bot's and a session starts at the opening node — set-based, two
// statements per batch whatever its size, in the batch's transaction. A conversation a human holds after a bot
// handed it over (handled_by human, bot_id set: conversations are human's until handed back) gets the blast's
// message like any blast recipient, but no session: its replies stay with the human.
import { sql } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

export type BlastSessionStart = {
  blastId: string;
  batch: number;
  botId: string;
  botVersion: number | null;
  flow: unknown;
  startNodeId: string;
  nodeId: string;
  nodeType: string;
  status: 'ACTIVE' | 'ENDED';
};

/** The batch's accepted recipients and their conversations; `held` keeps those a human holds out. */
const accepted = (orgId: string, s: BlastSessionStart) => sql`
  select br.contact_id, m.conversation_id
  from blast_recipients br
  join messages m on m.organization_id = br.organization_id and m.id = br.message_id
  join conversations cv on cv.organization_id = m.organization_id and cv.id = m.conversation_id
  where br.organization_id = ${orgId}::uuid and br.blast_id = ${s.blastId}::uuid and br.batch = ${s.batch} and br.status = 'accepted'
    and not (cv.handled_by = 'human' and cv.bot_id is not null)`;

/**
 * Starts the sessions of one batch; answers how many started. First the conversations' running sessions end (their
 * open visits `abandoned`, as startSession does for one) and the conversations become the bot's; then one statement
 * inserts the sessions, with the variables a flow starts with (runtime.ts startVariables: the contact's scalar
 * attributes by lower-cased name, `name`, `first_name`, `phone`), and their visits: START advanced to the opening
 * node, which stays open while the session waits there (completed when the opening was the whole flow).
 */
export async function startBlastSessions(db: TenantDb, orgId: string, s: BlastSessionStart): Promise<number> {
  await sql`
    with t as (${accepted(orgId, s)}),
    ended as (
      update bot_sessions bs set status = 'ENDED', updated_at = now() from t
      where bs.organization_id = ${orgId}::uuid and bs.conversation_id = t.conversation_id and bs.status = 'ACTIVE'
      returning bs.id),
    abandoned as (
      update bot_node_visits v set exit = 'abandoned', left_at = now() from ended
      where v.organization_id = ${orgId}::uuid and v.session_id = ended.id and v.exit is null
      returning 1)
    update conversations cv set handled_by = 'bot', bot_id = ${s.botId}::uuid, updated_at = now() from t
    where cv.organization_id = ${orgId}::uuid and cv.id = t.conversation_id`.execute(db);
  const ended = s.status === 'ENDED';
  const row = (
    await sql<{ n: number }>`
    with t as (${accepted(orgId, s)}),
    ins as (
      insert into bot_sessions (organization_id, bot_id, bot_version, conversation_id, contact_id, flow, node_id, variables, status)
      select ${orgId}::uuid, ${s.botId}::uuid, ${s.botVersion}::int, t.conversation_id, t.contact_id, ${JSON.stringify(s.flow)}::jsonb,
        ${s.nodeId}, vars.v, ${s.status}
      from t join contacts c on c.organization_id = ${orgId}::uuid and c.id = t.contact_id
      cross join lateral (select
          jsonb_strip_nulls(jsonb_build_object('first_name', (regexp_split_to_array(c.name, '\\s+'))[1]))
          || coalesce((select jsonb_object_agg(lower(a.key), a.value #>> '{}') from jsonb_each(coalesce(c.attributes, '{}'::jsonb)) a
                       where jsonb_typeof(a.value) in ('string', 'number', 'boolean')), '{}'::jsonb)
          || jsonb_strip_nulls(jsonb_build_object('name', c.name, 'phone', c.phone)) as v) vars
      returning id, conversation_id, contact_id, created_at),
    visits as (
      insert into bot_node_visits (organization_id, bot_id, bot_version, session_id, conversation_id, contact_id, session_started_at,
        node_id, node_type, exit, next_node_id, left_at, latest)
      select ${orgId}::uuid, ${s.botId}::uuid, ${s.botVersion}::int, ins.id, ins.conversation_id, ins.contact_id, ins.created_at,
        st.node_id, st.node_type, st.exit, st.next_node_id, case when st.exit is null then null else now() end, true
      from ins cross join (values
          (1, ${s.startNodeId}, 'START', 'advanced', ${s.nodeId}),
          (2, ${s.nodeId}, ${s.nodeType}, ${ended ? 'completed' : null}::text, null::text)) st(k, node_id, node_type, exit, next_node_id)
      order by ins.id, st.k
      returning 1)
    select count(*)::int as n from ins`.execute(db)
  ).rows[0];
  return row?.n ?? 0;
}
