// SQL for a bot's funnel (GET /v1/analytics/bots/{id}/funnel) over bot_node_visits (migration 0027). The cohort is
// the sessions started in [from, to); each (session, node) counts once, by the session's latest visit of the node
// (`latest`), so a loop back to a node is not a second entry. One statement reads the range once (an index range
// of the bot's latest visits) and answers three kinds of rows: per node, per (node, next node), and the totals.
// Distinct contacts are counted by grouping (hash aggregates), not count(distinct) sorts.
import { sql } from 'kysely';
import { tenant, type TenantDb } from '../../tenant.ts';

export type FunnelNodeRow = {
  nodeId: string;
  entries: number;
  contacts: number;
  /** Distinct contacts with a session that did not advance from the node. */
  stoppedContacts: number;
  advanced: number;
  completed: number;
  handedOff: number;
  errored: number;
  abandoned: number;
  waiting: number;
};
type FunnelNextRow = { nodeId: string; nextNodeId: string; sessions: number };
export type FunnelTotals = { sessions: number; contacts: number; completions: number; completedContacts: number; handoffs: number };
export type FunnelFigures = { nodes: FunnelNodeRow[]; next: FunnelNextRow[]; totals: FunnelTotals };

export async function funnelBot(
  db: TenantDb,
  orgId: string,
  botId: string,
): Promise<{ id: string; published_flow: unknown; published_version: number | null } | undefined> {
  return tenant(db.selectFrom('bots'), orgId)
    .select(['id', 'published_flow', 'published_version'])
    .where('id', '=', botId)
    .executeTakeFirst();
}

type Row = { kind: 'node' | 'next' | 'total'; node_id: string | null; next_node_id: string | null } & Record<
  'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i' | 'j',
  string
>;

export async function funnelFigures(db: TenantDb, orgId: string, botId: string, from: Date, to: Date): Promise<FunnelFigures> {
  const visits = sql.table('bot_node_visits');
  // Columns a … j: per node (entries, contacts, stopped contacts, then sessions per exit kind); per next node
  // (sessions); totals (sessions, contacts, completions, completed contacts, handoffs).
  const { rows } = await sql<Row>`
    with v as materialized (
      select node_id, node_type, contact_id, exit, next_node_id from ${visits}
      where organization_id = ${orgId} and bot_id = ${botId} and latest and session_started_at >= ${from} and session_started_at < ${to}
    ),
    per_contact as (
      select node_id, contact_id, count(*) as entries,
        count(*) filter (where exit = 'advanced') as advanced,
        count(*) filter (where exit = 'completed') as completed,
        count(*) filter (where exit = 'handed_off') as handed_off,
        count(*) filter (where exit = 'errored') as errored,
        count(*) filter (where exit = 'abandoned') as abandoned,
        count(*) filter (where exit is null) as waiting
      from v group by node_id, contact_id
    )
    select 'node' as kind, node_id, null as next_node_id, sum(entries) as a, count(*) as b, count(*) filter (where entries > advanced) as c,
      sum(advanced) as d, sum(completed) as e, sum(handed_off) as f, sum(errored) as g, sum(abandoned) as h, sum(waiting) as i, 0 as j
    from per_contact group by node_id
    union all
    select 'next', node_id, next_node_id, count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0
    from v where exit = 'advanced' group by node_id, next_node_id
    union all
    select 'total', null, null,
      (select count(*) from v where node_type = 'START'),
      (select count(*) from (select contact_id from v where node_type = 'START' group by contact_id) s),
      (select count(*) from v where exit = 'completed'),
      (select count(*) from (select contact_id from v where exit = 'completed' group by contact_id) s),
      (select count(*) from v where exit = 'handed_off'),
      0, 0, 0, 0, 0`.execute(db);
  const n = (v: string) => Number(v);
  const total = rows.find((r) => r.kind === 'total');
  return {
    nodes: rows
      .filter((r) => r.kind === 'node')
      .map((r) => ({
        nodeId: r.node_id!,
        entries: n(r.a),
        contacts: n(r.b),
        stoppedContacts: n(r.c),
        advanced: n(r.d),
        completed: n(r.e),
        handedOff: n(r.f),
        errored: n(r.g),
        abandoned: n(r.h),
        waiting: n(r.i),
      })),
    next: rows.filter((r) => r.kind === 'next').map((r) => ({ nodeId: r.node_id!, nextNodeId: r.next_node_id!, sessions: n(r.a) })),
    totals: {
      sessions: n(total?.a ?? '0'),
      contacts: n(total?.b ?? '0'),
      completions: n(total?.c ?? '0'),
      completedContacts: n(total?.d ?? '0'),
      handoffs: n(total?.e ?? '0'),
    },
  };
}
