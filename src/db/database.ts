import type pg from 'pg';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Database } from './schema.ts';
import { migrations } from './migrations/index.ts';
import { withPreparedStatements } from './prepared.ts';
import { ScopedPool } from './statement-scope.ts';

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
  const pool = new ScopedPool({ connectionString: url, max: poolSize, application_name: 'messaging-service-api' });
  // An idle connection dropped by the server (restart, failover, shutdown) is discarded by the pool; without a
  // listener the 'error' event would crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPreparedStatements(pool) }) });
  return { db, pool };
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error && !failed) throw error; // no migration ran: the connection itself failed (keep its code for the operator)
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * The one way to run a multi-step write: all of it commits, or none of it does. Called inside a
 * transaction, it joins that transaction, so domain functions compose without knowing their caller.
 */
export function inTransaction<T>(db: TenantDb, work: (tx: TenantTx) => Promise<T>): Promise<T>;
export function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T>;
export function inTransaction<T>(db: Db, work: ((tx: Tx) => Promise<T>) | ((tx: TenantTx) => Promise<T>)): Promise<T> {
  const run = work as (tx: Tx) => Promise<T>;
  if (db.isTransaction) return run(db as Tx);
  // A transaction opened on a TenantDb carries its TenantGuard (Kysely keeps the plugins), hence the overload.
  return db.transaction().execute(run);
}
