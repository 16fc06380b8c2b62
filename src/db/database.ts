import type pg from 'pg';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Database } from './schema.ts';
import { loadMigrations, migrations } from './migrations/index.ts';
import { withPreparedStatements } from './prepared.ts';
import { ScopedPool } from './statement-scope.ts';
import { typeParsers } from './text-array.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A database handle bound to one organization (see TenantGuard). Transactions opened on it are guarded too. */
export type TenantDb = Db & { readonly __tenant: unique symbol };
/** A transaction opened on a TenantDb (inTransaction): guarded too, and usable wherever a TenantDb is. */
export type TenantTx = Tx & { readonly __tenant: TenantDb['__tenant'] };

// timestamptz → Date (default), int8 → number where safe is done per query; numeric stays a string (money).
// The pool's checkouts take the statement_timeout (and the cancellation) of the request they serve
// (src/db/statement-scope.ts); work outside a request runs with the database's own setting.
export function createDb(url: string, poolSize = 10): { db: Db; pool: pg.Pool } {
  // text[] columns are parsed by text-array.ts (pg-types' array parser costs an owner key's scopes ~7 % of a read).
  const pool = new ScopedPool({ connectionString: url, max: poolSize, application_name: 'messaging-service-api', types: typeParsers });
  // An idle connection dropped by the server (restart, failover, shutdown) is discarded by the pool; without a
  // listener the 'error' event would crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPreparedStatements(pool) }) });
  return { db, pool };
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  if (await everyMigrationRecorded(db)) return;
  const migrator = new Migrator({ db, provider: { getMigrations: loadMigrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error && !failed) throw error; // no migration ran: the connection itself failed (keep its code for the operator)
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * Whether the database has run exactly the registered migrations: one read of Kysely's record of them. When it
 * has, the Migrator would do nothing, but only after its own checks, whose table lookups read the whole catalogue
 * (most of the ~200 ms it took at every start: issue 38, bench part a). Anything else (a new database without the
 * record, a migration to run, one recorded that this code does not know) goes to the Migrator, which applies or
 * refuses as before.
 */
async function everyMigrationRecorded(db: Kysely<unknown>): Promise<boolean> {
  const registered = Object.keys(migrations);
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const recorded = new Set(rows.map((r) => r.name));
    return rows.length === registered.length && registered.every((name) => recorded.has(name));
  } catch {
    return false; // no record yet (or no database: the Migrator reports that)
  }
}

/**
 * The one way to run a multi-step write: all of it commits, or none of it does. Called inside a
 * transaction, it joins that transaction, so domain functions compose without knowing their caller.
 */
export function inTransaction<T>(db: TenantDb, work: (tx: TenantTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
export function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
export function inTransaction<T>(
  db: Db,
  work: ((tx: Tx) => Promise<T>) | ((tx: TenantTx) => Promise<T>),
  options: TransactionOptions = {},
): Promise<T> {
  const run = work as (tx: Tx) => Promise<T>;
  if (db.isTransaction) return run(db as Tx);
  // A transaction opened on a TenantDb carries its TenantGuard (Kysely keeps the plugins), hence the overload.
  const begin = db.transaction();
  return (options.snapshot ? begin.setIsolationLevel('repeatable read').setAccessMode('read only') : begin).execute(run);
}

export type TransactionOptions = {
  /**
   * Read-only, every statement on one snapshot (REPEATABLE READ): for a figure made of several reads that writers
   * change together, e.g. a blast's recipients and their messages, which one commit moves from one to the other.
   */
  snapshot?: boolean;
};
