// Benchmark (e): contact list/search and segment preview queries on 1,000,000 contacts of one organization,
// through the functions the handlers call (listContacts; countSegment + sampleSegment + toContacts), with the
// plan of each list query checked for a sequential scan of contacts. Seeded with set-based INSERT … SELECT
// generate_series statements (contacts, tag links, opt-outs), then VACUUM ANALYZE as autovacuum would.
import { sql } from 'kysely';
import type { ContactListFilters } from '../src/db/queries/contacts/contacts.ts';
import { contactCountQuery, contactPageQuery, listContacts } from '../src/db/queries/contacts/contacts.ts';
import { countSegment, sampleSegment, segmentContacts, segmentPredicate, type SegmentQuery } from '../src/db/queries/contacts/segments.ts';
import { createDb, type Db } from '../src/db/database.ts';
import { bindTenant, loadTenantTables, type TenantDb } from '../src/db/tenant.ts';
import { contactViews as toContacts } from '../src/domain/contacts/contacts.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';

type QueryTiming = {
  label: string;
  ms: number;
  rows: number;
  indexOnly: boolean;
  plan: string;
  /** Why reading every contact of the organization is the right plan, for a case whose plan does. */
  scanBecause?: string;
};
export type QueriesBenchResult = { contacts: number; seedSeconds: number; list: QueryTiming[]; segments: QueryTiming[] };

const RUNS = 5;

/**
 * Seeds the way a bulk load is done: secondary indexes of contacts and contact_tags are dropped and rebuilt
 * afterwards from their own definitions (pg_indexes), foreign-key triggers are skipped
 * (session_replication_role = replica; the rows are consistent by construction), and the work is split over
 * two connections so both cores load.
 */
export async function seedContacts(pool: Db, orgId: string, n: number): Promise<string[]> {
  const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes
    where tablename in ('contacts', 'contact_tags') and indexname not in (select conname from pg_constraint)`.execute(pool);
  for (const i of indexes) await sql`drop index ${sql.id(i.indexname)}`.execute(pool);
  const tags = (
    await sql<{ id: string }>`
    insert into tags (organization_id, name) select ${orgId}, 'tag-' || g from generate_series(1, 20) g returning id`.execute(pool)
  ).rows.map((r) => r.id);
  const half = Math.ceil(n / 2);
  await onTwoConnections(pool, (db, k) => insertContacts(db, orgId, n, k * half + 1, Math.min(n, (k + 1) * half)));
  await onTwoConnections(pool, (db, k) => insertTagLinks(db, orgId, tags, k));
  await sql`
    insert into opt_outs (organization_id, phone, source, keyword)
    select ${orgId}, phone, 'KEYWORD', 'STOP' from contacts where organization_id = ${orgId} and right(phone, 2) = '07'`.execute(pool);
  // Largest build first, then whichever connection is free takes the next.
  const queue = [...indexes].sort((a, b) => Number(b.indexdef.includes('gin')) - Number(a.indexdef.includes('gin')));
  await onTwoConnections(pool, async (db) => {
    for (let next = queue.shift(); next; next = queue.shift()) await sql.raw(next.indexdef).execute(db);
  });
  for (const t of ['contacts', 'contact_tags', 'opt_outs']) await sql`vacuum analyze ${sql.table(t)}`.execute(pool);
  return tags;
}

function onTwoConnections(pool: Db, work: (db: Db, k: number) => Promise<void>): Promise<void[]> {
  return Promise.all(
    [0, 1].map((k) =>
      pool.connection().execute(async (db) => {
        await sql`set maintenance_work_mem = '256MB'`.execute(db);
        await sql`set session_replication_role = replica`.execute(db);
        try {
          await work(db as Db, k);
        } finally {
          await sql`set session_replication_role = origin`.execute(db);
        }
      }),
    ),
  );
}

/** Contacts `from`..`to` of `n`: names from 40 first × 60 last names (5% unnamed), US numbers, typed attributes, a third each RCS capable / not / unknown, creation times over a year. */
async function insertContacts(db: Db, orgId: string, n: number, from: number, to: number): Promise<void> {
  await sql`
    insert into contacts (organization_id, name, phone, phone_country, attributes, rcs_capable, rcs_checked_at, consent_type, created_at, updated_at)
    select ${orgId},
           case when g % 20 = 0 then null else
             (array['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','John','Margaret','Linus','Radia','Ken','Dennis',
                    'Katherine','Tim','Hedy','Niklaus','Sophie','Guido','Anita','Leslie','Vint','Bjarne','James','Shafi','Judea',
                    'Robin','Dana','Ivan','Fran','Yukihiro','Ole','Ward','Kent','Martin','Erich','Rich','Joe','Brian','Larry'])[1 + g % 40]
             || ' ' ||
             (array['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Allen','McCarthy','Hamilton','Torvalds','Perlman',
                    'Thompson','Ritchie','Johnson','Berners-Lee','Lamarr','Wirth','Wilson','van Rossum','Borg','Lamport','Cerf',
                    'Stroustrup','Gosling','Goldwasser','Pearl','Milner','Scott','Sutherland','Kahn','Matsumoto','Dahl',
                    'Cunningham','Beck','Fowler','Gamma','Hickey','Armstrong','Kernighan','Wall','Hoare','Backus','Naur',
                    'Iverson','Kay','Engelbart','Hennessy','Patterson','Diffie','Hellman','Rivest','Shamir','Adleman',
                    'Yao','Valiant','Karp','Cook','Tarjan','Hartmanis','Stearns'])[1 + (g / 40) % 60]
           end,
           '+1' || (array[201,202,206,212,213,305,312,347,404,415,512,617,646,702,713,718,773,808,818,917])[1 + g % 20]
                || (200 + (g / 20) % 800)::text || lpad(((g / 16000) % 10000)::text, 4, '0'),
           'US',
           jsonb_build_object('tier', (array['gold','silver','bronze','platinum'])[1 + g % 4],
                              'ltv', (g::bigint * 7919 % 500000) / 100.0,
                              'city', (array['San Francisco','New York','Austin','Chicago','Seattle','Boston','Denver','Miami'])[1 + g % 8])
             || case when g % 10 = 0 then jsonb_build_object('vip', true) else '{}'::jsonb end,
           case g % 3 when 0 then true when 1 then false end,
           case when g % 3 < 2 then now() - interval '1 day' end,
           case when g % 3 = 0 then 'MARKETING' else 'NONE' end,
           now() - (${n} - g) * interval '30 seconds',
           now()
    from generate_series(${from}::int, ${to}::int) g`.execute(db);
}

/** Tag links (half `k` of the contacts): 60% carry one of tags 1-6 (10% each), 20% one of tags 11-20 (2% each), drawn by hash. */
async function insertTagLinks(db: Db, orgId: string, tags: string[], k: number): Promise<void> {
  await sql`
    insert into contact_tags (organization_id, contact_id, tag_id)
    select ${orgId}, c.id, (${tags}::uuid[])[1 + t.k]
    from (select id, abs(hashtext(id::text)) % 100 as h1, abs(hashtext(phone)) % 100 as h2
          from contacts where organization_id = ${orgId} and abs(hashtext(phone)) % 2 = ${k}) c
    cross join lateral (values (case when c.h1 < 60 then c.h1 % 6 end), (case when c.h2 < 20 then 10 + c.h2 % 10 end)) as t(k)
    where t.k is not null`.execute(db);
}

async function time(run: () => Promise<number>): Promise<{ ms: number; rows: number }> {
  let rows = await run(); // warm-up
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    rows = await run();
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  return { ms: runs[Math.floor(runs.length / 2)]!, rows };
}

type Explainable = { explain: (format?: 'text') => Promise<Array<Record<string, unknown>>> };

/** The plan's lines, and whether contacts is reached only through indexes (no sequential scan of it). */
async function planOf(queries: Explainable[]): Promise<{ indexOnly: boolean; plan: string }> {
  const lines: string[] = [];
  for (const q of queries) for (const r of await q.explain()) lines.push(String(Object.values(r)[0]));
  const seq = lines.some((l) => /Seq Scan on contacts\b/.test(l));
  const nodes = lines
    .map((l) => l.trim().replace(/^->\s*/, ''))
    .filter((l) => /Scan|Join|Sort/.test(l) && !/^(Sort Key|Index Cond|Filter|Hash Cond|Join Filter|Recheck)/.test(l));
  return {
    indexOnly: !seq,
    plan: [
      ...new Set(
        nodes.map((n) =>
          n
            .replace(/\s+\(cost.*$/, '')
            .replace(/ using /, ' ')
            .replace(/ on contacts( c)?/, ''),
        ),
      ),
    ]
      .slice(0, 3)
      .join('; '),
  };
}

export async function benchContactQueries(url: string, n = 1_000_000): Promise<QueriesBenchResult> {
  const { db } = createDb(url, 4);
  try {
    const org = await createOrganization(db, loadDocument(), 'Million contacts org');
    const orgId = org.organizationId;
    const tenantDb = bindTenant(db, orgId, await loadTenantTables(db)); // the handle a request's queries get
    const t0 = performance.now();
    const tags = await seedContacts(db, orgId, n);
    const seedSeconds = (performance.now() - t0) / 1000;
    const [common, rare] = [tags[0]!, tags[15]!];

    const base: ContactListFilters = { sortBy: 'createdAt', sortOrder: 'desc' };
    const lists: Array<[string, ContactListFilters, number]> = [
      ['default (newest first), page 1', base, 1],
      ['default, page 50', base, 50],
      ['sortBy=name asc', { ...base, sortBy: 'name', sortOrder: 'asc' }, 1],
      ['sortBy=name desc (unnamed last)', { ...base, sortBy: 'name', sortOrder: 'desc' }, 1],
      ['sortBy=phone asc', { ...base, sortBy: 'phone', sortOrder: 'asc' }, 1],
      ['search=hopper (name, ~1.7%)', { ...base, search: 'hopper' }, 1],
      ['search=4155551 (phone digits)', { ...base, search: '4155551' }, 1],
      ['search=Grace Hopper', { ...base, search: 'Grace Hopper' }, 1],
      ['tag (10% of contacts)', { ...base, tag: common }, 1],
      ['tag (2%) + sortBy=name', { ...base, tag: rare, sortBy: 'name', sortOrder: 'asc' }, 1],
      ['rcsCap=true', { ...base, rcsCap: true }, 1],
      ['rcsCap=false + sortBy=phone desc', { ...base, rcsCap: false, sortBy: 'phone', sortOrder: 'desc' }, 1],
      ['search=lovelace + tag + rcsCap', { ...base, search: 'lovelace', tag: common, rcsCap: true }, 1],
    ];
    const list: QueryTiming[] = [];
    for (const [label, filters, pageNo] of lists) {
      const page = { page: pageNo, limit: 20, offset: (pageNo - 1) * 20 };
      const { ms, rows } = await time(async () => (await listContacts(tenantDb, orgId, filters, page)).total);
      const plan = await planOf([
        contactPageQuery(tenantDb, orgId, filters, page),
        contactCountQuery(tenantDb, orgId, filters),
      ] as unknown as Explainable[]);
      list.push({ label, ms, rows, ...plan });
    }

    const segments = await segmentTimings(tenantDb, orgId, tags);
    return { contacts: n, seedSeconds, list, segments };
  } finally {
    await db.destroy();
  }
}

// Why a scan is the right plan, by kind of condition.
const NEGATION = 'a negation: it matches most contacts, so an index would hand back nearly every row; one parallel pass is cheaper';
const FREE_FORM_KEY =
  "attribute keys are each organization's own (no index per key can exist), and the attributes GIN index answers containment only (eq, in): a range, a substring or a key's presence reads each contact's attributes once, in one parallel pass";
const BROAD = 'matches a large share of the contacts: one parallel pass with the hashed tag set costs less than an index probe per match';
const PROBES =
  "PostgreSQL's cost model (random_page_cost 4, its default for disks) prices ~20,000 random heap reads above one parallel pass with the hashed tag set; on a fully cached database the probes would win, which only that setting (a deployment choice) changes";

/**
 * One case per documented segment operator (SegmentQueryRequest: tags any/all/none, attribute eq/neq/gt/gte/lt/lte/
 * contains/in/exists/notExists, rcsCap, createdAt, optedOut), timed as previewSegment runs them (count and sample
 * together, then the sample's tags and opt-outs), with the plan of the count.
 */
async function segmentTimings(db: TenantDb, orgId: string, tags: string[]): Promise<QueryTiming[]> {
  const [common, rare] = [tags[0]!, tags[15]!];
  const all = (...conditions: SegmentQuery['conditions']): SegmentQuery => ({ match: 'all', conditions });
  const cases: Array<[string, SegmentQuery, string?]> = [
    ['tags any [2% tag]', all({ type: 'tags', op: 'any', tagIds: [rare] }), PROBES],
    ['tags any [10% tag]', all({ type: 'tags', op: 'any', tagIds: [common] }), BROAD],
    ['tags all [10% tag, 2% tag]', all({ type: 'tags', op: 'all', tagIds: [common, rare] })],
    ['tags none [10%, 2%]', all({ type: 'tags', op: 'none', tagIds: [common, rare] }), NEGATION],
    [
      'attribute eq: tier = gold AND rcsCap = true',
      all({ type: 'attribute', attribute: 'tier', op: 'eq', value: 'gold' }, { type: 'rcsCap', value: true }),
    ],
    [
      'attribute eq: vip = true AND not opted out',
      all({ type: 'attribute', attribute: 'vip', op: 'eq', value: true }, { type: 'optedOut', value: false }),
    ],
    ['attribute in: city in [Austin, Denver]', all({ type: 'attribute', attribute: 'city', op: 'in', value: ['Austin', 'Denver'] })],
    ['attribute neq: tier != gold', all({ type: 'attribute', attribute: 'tier', op: 'neq', value: 'gold' }), NEGATION],
    ['attribute gte: ltv >= 4000 (number range)', all({ type: 'attribute', attribute: 'ltv', op: 'gte', value: 4000 }), FREE_FORM_KEY],
    ['attribute lt: city < "B" (string range)', all({ type: 'attribute', attribute: 'city', op: 'lt', value: 'B' }), FREE_FORM_KEY],
    [
      'attribute contains: city contains "york"',
      all({ type: 'attribute', attribute: 'city', op: 'contains', value: 'york' }),
      FREE_FORM_KEY,
    ],
    ['attribute exists: vip', all({ type: 'attribute', attribute: 'vip', op: 'exists' }), FREE_FORM_KEY],
    ['attribute notExists: vip', all({ type: 'attribute', attribute: 'vip', op: 'notExists' }), NEGATION],
    ['rcsCap = null (unknown)', all({ type: 'rcsCap', value: null })],
    ['createdAt in the last 30 days', all({ type: 'createdAt', after: new Date(Date.now() - 30 * 86_400_000).toISOString() })],
    ['optedOut = true', all({ type: 'optedOut', value: true })],
    ['optedOut = false', all({ type: 'optedOut', value: false }), NEGATION],
    [
      'any: city contains "york" OR tags all [2]',
      {
        match: 'any',
        conditions: [
          { type: 'attribute', attribute: 'city', op: 'contains', value: 'york' },
          { type: 'tags', op: 'all', tagIds: [common, rare] },
        ],
      },
      FREE_FORM_KEY,
    ],
  ];
  const out: QueryTiming[] = [];
  for (const [label, query, scanBecause] of cases) {
    const predicate = segmentPredicate(query, orgId);
    const { ms, rows } = await time(async () => {
      const [count, sample] = await Promise.all([countSegment(db, orgId, predicate), sampleSegment(db, orgId, predicate, 10)]);
      await toContacts(db, orgId, sample);
      return count;
    });
    const plan = await planOf([segmentContacts(db, orgId, predicate).select(sql`count(*)`.as('n'))] as unknown as Explainable[]);
    out.push({ label, ms, rows, ...plan, ...(plan.indexOnly || !scanBecause ? {} : { scanBecause }) });
  }
  return out;
}
