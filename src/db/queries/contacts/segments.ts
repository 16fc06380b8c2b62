// SQL for segments. A segment query (SegmentQueryRequest) is compiled to one SQL predicate over `contacts as c`,
// so a segment is one query whatever its conditions, applied to the organization's contacts for a count, a
// sample or a page of ids. Attribute comparisons are type-aware: equality through jsonb containment (type and
// value, and it can use the attributes GIN index), ranges through SQL/JSON path (numbers with numbers, strings
// with strings in code-point order, other types never match).
// Saved segments (saved_segments, migration 0009): the queries resolve stored, one row per distinct query.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../database.ts';
import { listPage, type Page } from '../../paging.ts';
import { tenant, type TenantDb } from '../../tenant.ts';
import { likeContaining, type ContactRow } from './contacts.ts';

type Scalar = string | number | boolean | null;

/** The conditions of a segment (the shape of the document's SegmentQueryRequest, validated before it gets here). */
export type SegmentQuery = {
  match?: 'all' | 'any';
  conditions: Array<
    | { type: 'tags'; op: 'any' | 'all' | 'none'; tagIds: string[] }
    | { type: 'attribute'; attribute: string; op: AttributeCondition['op']; value?: Scalar | Scalar[] }
    | { type: 'rcsCap'; value: boolean | null }
    | { type: 'createdAt'; after?: string; before?: string }
    | { type: 'optedOut'; value: boolean }
  >;
};
type Condition = SegmentQuery['conditions'][number];

const TRUE = sql<SqlBool>`true`;

/** The organization's contacts (as `c`) matching the predicate: the one query every segment operation builds on. */
export function segmentContacts(db: TenantDb, orgId: string, predicate: RawBuilder<SqlBool>) {
  return tenant(db.selectFrom('contacts as c'), orgId, 'c.organization_id').where(predicate);
}

export async function countSegment(db: TenantDb, orgId: string, predicate: RawBuilder<SqlBool>): Promise<number> {
  const row = await segmentContacts(db, orgId, predicate)
    .select(sql<string>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * How many of the newest contacts the sample walks through before it sorts the whole matching set instead: enough
 * for a set matching 1 contact in 2,000 (the walk stops at the 10th match, so a dense set costs no more).
 */
export const SAMPLE_WINDOW = 20_000;

/**
 * The newest matching contacts first. Walking contacts newest first until `limit` match is fast when matches are
 * dense among recent contacts, and reads nearly the whole organization when they are rare there (1.9 s for 16,000
 * opted-out contacts among 1,000,000 in bench part e). So the walk is bounded to the newest SAMPLE_WINDOW
 * contacts; when it finds fewer than `limit`, the matching set is built with its own best plan (OFFSET 0 keeps
 * the planner from turning it back into the walk) and sorted.
 *
 * The window is a range of contacts_org_created_idx from the SAMPLE_WINDOW-th newest contact on (found first), not
 * a LIMIT subquery: a contact of the range can be reached by its id, so whichever side PostgreSQL starts a join
 * from, it probes the other. A LIMIT subquery can only be read again in full, and a plan that expected a handful of
 * tagged contacts (`tags all` is estimated at 0.5% of the carriers) re-read 6,000 contacts for each of 2,000: 1.3 s
 * where the probes take 20 ms.
 */
export async function sampleSegment(db: TenantDb, orgId: string, predicate: RawBuilder<SqlBool>, limit: number): Promise<ContactRow[]> {
  // The edge's time as text: a Date would drop its microseconds.
  const edge = await tenant(db.selectFrom('contacts'), orgId)
    .select([sql<string>`created_at::text`.as('at'), 'id'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(SAMPLE_WINDOW - 1)
    .limit(1)
    .executeTakeFirst();
  const inWindow = edge ? sql<SqlBool>`(c.created_at, c.id) >= (${edge.at}::timestamptz, ${edge.id}::uuid)` : TRUE;
  const recent = await segmentContacts(db, orgId, predicate)
    .where(inWindow)
    .selectAll('c')
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(limit)
    .execute();
  if (recent.length === limit || !edge) return recent;
  const matching = segmentContacts(db, orgId, predicate).selectAll('c').offset(0);
  return db.selectFrom(matching.as('c')).selectAll('c').orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(limit).execute();
}

/** A page of matching ids in creation order, then id (stable while contacts are not added or deleted), with the total. */
export async function segmentIdPage(
  db: TenantDb,
  orgId: string,
  predicate: RawBuilder<SqlBool>,
  page: { limit: number; offset: number },
): Promise<Page<string>> {
  const { rows, total } = await listPage(
    segmentContacts(db, orgId, predicate).select('c.id').orderBy('c.created_at', 'asc').orderBy('c.id', 'asc'),
    page,
  );
  return { rows: rows.map((r) => r.id), total };
}

// ---- Saved segments ----

export type SavedSegmentRow = { id: string; query: SegmentQuery; lastUsedAt: Date };

/**
 * Stores the query under its hash, or finds the one stored, and marks it used now: one statement, so concurrent
 * resolves of the same query meet on the unique index and all get the same row.
 */
export async function upsertSavedSegment(
  db: TenantDb,
  orgId: string,
  queryHash: string,
  query: SegmentQuery,
): Promise<Omit<SavedSegmentRow, 'query'>> {
  const row = await db
    .insertInto('saved_segments')
    .values({ organization_id: orgId, query_hash: queryHash, query: JSON.stringify(query) })
    .onConflict((oc) => oc.columns(['organization_id', 'query_hash']).doUpdateSet({ last_used_at: sql`now()` }))
    .returning(['id', 'last_used_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, lastUsedAt: row.last_used_at };
}

/** The organization's saved segment, marked used now; undefined when there is none (unknown, another organization's, or purged). */
export async function useSavedSegment(db: TenantDb, orgId: string, segmentId: string): Promise<SavedSegmentRow | undefined> {
  const row = await tenant(db.updateTable('saved_segments'), orgId)
    .set({ last_used_at: sql`now()` })
    .where('id', '=', segmentId)
    .returning(['id', 'query', 'last_used_at'])
    .executeTakeFirst();
  return row && { id: row.id, query: row.query as SegmentQuery, lastUsedAt: row.last_used_at };
}

// System handle: retention: the unused segments of every organization.
/** Every organization's segments unused for `days` days (the system handle: the purge crosses organizations). */
export async function deleteSegmentsUnusedFor(db: Db, days: number): Promise<number> {
  const res = await db
    .deleteFrom('saved_segments')
    .where(sql<boolean>`last_used_at < now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The predicate for the organization's contacts. Membership in tags and opt-outs is a correlated EXISTS (NOT EXISTS)
 * over the organization's rows. Where it stands among the predicate's ANDs, PostgreSQL plans it as a semi-join
 * (anti-join) and picks hashing or index probes by its estimates; under an OR (`match: any`, or a blast's audience:
 * explicit ids or the segment) or a NOT, it keeps both a hashed set and a per-contact index probe and picks one by
 * the number of contacts. Written as `IN (subquery)` instead, a set too large to hash in work_mem was read again
 * for every contact (the planner's own cost for an OR of two `tags any` over 800,000 links at 1,000,000 contacts:
 * 12 billion; twenty of them ran past 90 s), and NOT IN never becomes an anti-join. `tags all` stays `IN` the set of
 * its carriers (carriersOfAll): PostgreSQL estimates a HAVING at 0.5% of the groups, so under an OR it always hashes
 * that set, once, in each parallel worker (as EXISTS it would give up the parallel scan: 553 ms instead of 395 ms for
 * bench part e's `contains OR tags all`).
 */
export function segmentPredicate(segment: SegmentQuery, orgId: string): RawBuilder<SqlBool> {
  const parts = segment.conditions.map((c) => conditionSql(c, orgId));
  if (parts.length === 0) return TRUE; // an empty list matches every contact, for `all` and `any` alike
  return sql<SqlBool>`(${sql.join(parts, segment.match === 'any' ? sql` or ` : sql` and `)})`;
}

function conditionSql(c: Condition, orgId: string): RawBuilder<SqlBool> {
  switch (c.type) {
    case 'tags':
      return tagsSql(c.op, [...new Set(c.tagIds.map((id) => id.toLowerCase()))], orgId);
    case 'attribute':
      return attributeSql(c as AttributeCondition);
    case 'rcsCap':
      return c.value === null ? sql<SqlBool>`c.rcs_capable is null` : sql<SqlBool>`c.rcs_capable = ${c.value}`;
    case 'createdAt': {
      const bounds: RawBuilder<SqlBool>[] = [];
      if (c.after) bounds.push(sql<SqlBool>`c.created_at >= ${new Date(c.after)}`);
      if (c.before) bounds.push(sql<SqlBool>`c.created_at < ${new Date(c.before)}`);
      return bounds.length ? sql<SqlBool>`(${sql.join(bounds, sql` and `)})` : TRUE;
    }
    case 'optedOut': {
      const optedOut = sql`exists (select 1 from opt_outs o where o.organization_id = ${orgId} and o.phone = c.phone)`;
      return c.value ? sql<SqlBool>`${optedOut}` : sql<SqlBool>`not ${optedOut}`;
    }
  }
}

function tagsSql(op: 'any' | 'all' | 'none', tagIds: string[], orgId: string): RawBuilder<SqlBool> {
  if (op === 'all') return sql<SqlBool>`c.id in (${carriersOfAll(tagIds, orgId)})`;
  const linked = sql`exists (select 1 from contact_tags ct where ct.organization_id = ${orgId} and ct.contact_id = c.id and ct.tag_id = any(${tagIds}::uuid[]))`;
  return op === 'any' ? sql<SqlBool>`${linked}` : sql<SqlBool>`not ${linked}`;
}

/**
 * Contacts carrying every one of the (distinct) tags: the organization's links to any of them, grouped by contact,
 * kept where the contact has as many links as there are tags ((contact_id, tag_id) is the links' primary key, so a
 * contact's links to the tags are distinct). One index range per tag and one aggregate: planning and running grow
 * linearly with the tags. Written as a join of one link per tag (the rarest tag first, probing the others),
 * PostgreSQL's planner searched the join orders: 50 tags took 0.2 s to plan with one contact, 5 such conditions
 * 14.6 s, 20 of them past a minute.
 */
function carriersOfAll(tagIds: string[], orgId: string) {
  return sql`select ct.contact_id from contact_tags ct where ct.organization_id = ${orgId} and ct.tag_id = any(${tagIds}::uuid[]) group by ct.contact_id having count(*) = ${tagIds.length}`;
}

type AttributeCondition = {
  attribute: string;
  op: 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'in' | 'exists' | 'notExists';
  value?: Scalar | Scalar[];
};

const RANGE_OPERATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** `{"key": value}` for jsonb containment: same key, same JSON type and value. */
const holds = (key: string, value: Scalar) => sql<SqlBool>`c.attributes @> ${JSON.stringify({ [key]: value })}::jsonb`;

function attributeSql(c: AttributeCondition): RawBuilder<SqlBool> {
  const key = c.attribute;
  switch (c.op) {
    case 'eq':
      return holds(key, c.value as Scalar);
    case 'neq': // also matches contacts without the attribute
      return sql<SqlBool>`not ${holds(key, c.value as Scalar)}`;
    case 'in':
      return sql<SqlBool>`(${sql.join(
        (c.value as Scalar[]).map((v) => holds(key, v)),
        sql` or `,
      )})`;
    case 'exists':
      return sql<SqlBool>`c.attributes ? ${key}`;
    case 'notExists':
      return sql<SqlBool>`not (c.attributes ? ${key})`;
    case 'contains':
      // Case-insensitive as ILIKE, which (in a multi-byte encoding) is LIKE between lower() of the text and lower()
      // of the pattern: written out, the pattern is lowered once per query instead of once per contact (same
      // answers for every code point, checked against ILIKE on PostgreSQL 18, C.UTF-8). The substring test comes
      // first, so the type check (a string, not a number's text) runs only for values that pass it. Never null.
      return sql<SqlBool>`coalesce(lower(c.attributes ->> ${key}) like lower(${likeContaining(String(c.value))}) and jsonb_typeof(c.attributes -> ${key}) = 'string', false)`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      // SQL/JSON path comparisons are typed (a mismatch is "unknown", hence coalesce) and compare strings by
      // code point. The key is quoted as a path member; keys match ^[A-Za-z_][A-Za-z0-9_.-]*$ so need no escaping.
      // The variables are one jsonb value, not jsonb_build_object(…): a function PostgreSQL would call again for
      // every contact (three times the cost of the comparison itself at 1,000,000 contacts).
      const path = `$."${key}" ${RANGE_OPERATORS[c.op]} $v`;
      return sql<SqlBool>`coalesce(jsonb_path_match(c.attributes, ${path}::jsonpath, ${JSON.stringify({ v: c.value })}::jsonb), false)`;
    }
  }
}
