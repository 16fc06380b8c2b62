// Tenancy. A request's handlers and services get a TenantDb: the database bound to the caller's organization.
// Queries say `tenant(qb, organizationId)`, the one scoping pattern, and raw SQL says
// `organization_id = ${organizationId}`; that is what keeps organizations apart. The guard on a TenantDb
// (TenantGuard) is a backstop that catches the query that forgets, and it is a heuristic, not a proof:
//
// What it checks, before each statement runs: if the statement touches a tenant table (one with an
// `organization_id` column), the text `organization_id` and this organization's id (as a parameter) must both
// occur somewhere in it. Tenant tables are found as Kysely table nodes, and in raw `sql` fragments as the name
// after `from`, `join`, `update` or `into` (schema-qualified or quoted names too).
//
// What it does not check (so a query can pass and still be wrong):
// - that the organization's id is compared with the organization_id *of each* tenant table: in a join or a
//   subquery, one scoped table is enough to pass, and `organization_id <> $org` passes as well;
// - tables named in raw SQL any other way: a CTE or view reading a tenant table, `from a, b` (only `a`
//   is seen), a table name built at run time, a function that reads tables;
// - the system handle (AppContext.db), which is unguarded.
// Row-level security was weighed and declined (issue 36): keyed by a transaction-local setting, it costs a round
// trip per statement or a transaction per request on a send path tuned to one statement, and the embedded
// server's superuser role bypasses it.
//
// Workers that legitimately cross organizations (dispatch, receipts, webhook deliveries, retention, schedulers)
// use the unguarded system handle, `AppContext.db`; a worker acting for one organization binds it with
// bindTenant().
//
// The types say which is which: a query acting for one organization takes a TenantDb (or the TenantTx of a
// transaction opened on one), which only bindTenant() makes, so the system handle cannot reach it by mistake. The
// exported queries of src/db/queries that take the system Db are listed once, CROSS_ORGANIZATION in
// test/architecture.test.ts, each marked `// System handle: why` in its code.
import {
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { Db, TenantDb } from './database.ts';
import { runShared } from './statement-scope.ts';

interface Whereable {
  where(lhs: never, op: never, rhs: never): unknown;
}

/** The one tenant-scoped query pattern: adds `organization_id = $org`; another organization's ids find nothing (→ 404). */
export function tenant<QB extends Whereable>(qb: QB, organizationId: string, column = 'organization_id'): QB {
  return (qb as unknown as { where(l: string, o: string, r: string): QB }).where(column, '=', organizationId);
}

// The handle types live with Db and Tx (database.ts), which inTransaction's overloads need.
export type { TenantDb } from './database.ts';

export class TenantScopeError extends Error {}

let tenantTables: Promise<ReadonlySet<string>> | undefined;

/** Tables with an `organization_id` column (every tenant table has one), read from the database once per process. */
export function loadTenantTables(db: Db): Promise<ReadonlySet<string>> {
  // Every request waits on the first one's read: runShared, so that request's client going away cancels nothing.
  tenantTables ??= runShared(() =>
    sql<{ table_name: string }>`
    select distinct table_name from information_schema.columns
    where table_schema = current_schema() and column_name = 'organization_id'`.execute(db),
  )
    .then((r) => new Set(r.rows.map((row) => row.table_name)))
    .catch((error: unknown) => {
      tenantTables = undefined;
      throw error;
    });
  return tenantTables;
}

export function bindTenant(db: Db, organizationId: string, tenantTables: ReadonlySet<string>): TenantDb {
  return db.withPlugin(new TenantGuard(organizationId, tenantTables)) as TenantDb;
}

/**
 * Refuses a query that touches a tenant table unless it names both the `organization_id` column and this
 * organization's id (what tenant() adds, and what an insert's values carry). A cheap walk of the query tree;
 * a heuristic (see the head of this file for what it does not see).
 */
class TenantGuard implements KyselyPlugin {
  readonly organizationId: string;
  readonly tables: ReadonlySet<string>;

  constructor(organizationId: string, tables: ReadonlySet<string>) {
    this.organizationId = organizationId;
    this.tables = tables;
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    assertScoped(node, this.organizationId, this.tables);
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** The guard of a handle bound with bindTenant() (a transaction opened on one keeps it); undefined for the system handle. */
export function tenantGuardOf(db: Db): { organizationId: string; tables: ReadonlySet<string> } | undefined {
  return db.getExecutor().plugins.find((p): p is TenantGuard => p instanceof TenantGuard);
}

type Node = { kind?: string; [key: string]: unknown };

/** A table named after from/join/update/into in raw SQL: `contacts`, `"contacts"`, `public.contacts`, `only x`. */
const RAW_TABLE = /\b(?:from|join|update|into)\s+(?:only\s+)?(?:"?\w+"?\.)?"?(\w+)"?/gi;

type RawFacts = { names: readonly string[]; column: boolean };

/**
 * What a raw `sql` node's fragments say, read once per fragment list: every table name after from/join/update/into
 * (lowercased), and whether `organization_id` is written. A `sql` template's strings are one frozen array per call
 * site, so the send path's long statements are scanned once per process, not at every execution (the scan was ~4 %
 * of the API process's CPU per send: bench m, issue 38). `sql.raw` and `sql.join` make a new array on each call:
 * those are remembered by their text too (a bounded memo: their texts are a statement's fixed pieces, few per
 * process), so the guard does not scan them again on every statement (its memo missed on every send before).
 */
const rawFacts = new WeakMap<readonly string[], RawFacts>();
const rawFactsByText = new Map<string, RawFacts>();
const MAX_RAW_TEXTS = 5000;

function rawFactsOf(fragments: readonly string[]): RawFacts {
  let facts = rawFacts.get(fragments);
  if (facts) return facts;
  const text = fragments.length === 1 ? fragments[0]! : fragments.join('\u0000');
  facts = rawFactsByText.get(text);
  if (!facts) {
    const names: string[] = [];
    for (const fragment of fragments) for (const m of fragment.matchAll(RAW_TABLE)) names.push(m[1]!.toLowerCase());
    facts = { names, column: fragments.some((f) => f.includes('organization_id')) };
    if (rawFactsByText.size < MAX_RAW_TEXTS) rawFactsByText.set(text, facts);
  }
  rawFacts.set(fragments, facts);
  return facts;
}

export function assertScoped(root: RootOperationNode, organizationId: string, tables: ReadonlySet<string>): void {
  const touched = new Set<string>();
  let column = false;
  let value = false;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (Array.isArray(n)) {
      for (const x of n) if (x && typeof x === 'object') stack.push(x);
      continue;
    }
    if (!n || typeof n !== 'object') continue;
    const node = n as Node;
    switch (node.kind) {
      case 'TableNode': {
        const name = ((node.table as Node).identifier as { name: string }).name;
        if (tables.has(name)) touched.add(name);
        break;
      }
      case 'IdentifierNode':
        if (node.name === 'organization_id') column = true;
        break;
      // A value is data, not query: its contents are never walked. An upload's 10 MB Buffer (the import's stored
      // file) walked as an object is ten million entries: ~0.2-0.9 s of the API process's CPU per upload, with the
      // event loop held.
      case 'ValueNode':
        if (node.value === organizationId) value = true;
        continue;
      case 'PrimitiveValueListNode':
        if ((node.values as unknown[]).includes(organizationId)) value = true;
        continue;
      case 'RawNode': {
        const facts = rawFactsOf(node.sqlFragments as readonly string[]);
        if (facts.column) column = true;
        for (const name of facts.names) if (tables.has(name)) touched.add(name);
        break;
      }
    }
    for (const child of Object.values(node)) if (child && typeof child === 'object') stack.push(child);
  }
  if (touched.size > 0 && !(column && value)) {
    throw new TenantScopeError(`Query on ${[...touched].join(', ')} is not scoped to the organization (use tenant()).`);
  }
}
