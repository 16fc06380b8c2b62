// Limits on the SQL a request runs. A request's work runs inside a StatementScope (AsyncLocalStorage, set by the
// HTTP layer): every connection it checks out of the pool gets the scope's `statement_timeout`, and when the client
// goes away (the scope's signal aborts) the statement it is running is cancelled and no new connection is handed
// to it. Work outside any scope (background jobs, migrations, the CLI) runs with the database's own setting.
//
// pg has no AbortSignal, so the pool does it: each checkout is recorded on its scope, and an abort asks PostgreSQL
// to cancel the backend of each (pg_cancel_backend over a connection of its own: the pool may be exhausted by the
// very statements to cancel). A connection whose cancellation was asked is closed when it is released instead of
// going back to the pool, so a cancel that arrives late can never stop another request's statement.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

export class StatementScope {
  /** statement_timeout of the scope's statements, in milliseconds; an operation may set a longer one once routed. */
  timeoutMs: number;
  /** Aborted when the client that waits for the work is gone. */
  readonly signal: AbortSignal | undefined;
  /** Connections checked out by the scope and not yet released. */
  readonly held = new Set<pg.PoolClient>();

  constructor(timeoutMs: number, signal?: AbortSignal) {
    this.timeoutMs = timeoutMs;
    this.signal = signal;
  }
}

const scopes = new AsyncLocalStorage<StatementScope>();

/** Runs `work` (and everything it starts) in the scope. */
export function runInStatementScope<T>(scope: StatementScope, work: () => T): T {
  return scopes.run(scope, work);
}

export function currentStatementScope(): StatementScope | undefined {
  return scopes.getStore();
}

/**
 * Runs work that other requests may wait for (a single-flight read cached for the process, a take from the key's
 * shared rate count) under the caller's statement limit but without its client's signal: the first request starts
 * the work and the others await the same promise, so if the first one's client went away the work was refused a
 * connection (ClientGoneError) and every request waiting on it answered 500 with it (bench part m1: 20 sends at
 * once, as one round's clients closed while the next round's requests waited on the take a closing one started).
 */
export function runShared<T>(work: () => T): T {
  const scope = scopes.getStore();
  return scope ? scopes.run(new StatementScope(scope.timeoutMs), work) : work();
}

/** Thrown instead of handing a connection to a scope whose client has gone. */
class ClientGoneError extends Error {
  constructor() {
    super('The client went away; no further statement of its request is started.');
  }
}

type Callback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: Error | boolean) => void) => void;

/** statement_timeout each connection has now, as last set by a checkout (absent: the session's default). */
const applied = new WeakMap<pg.PoolClient, number>();
/** Connections whose backend was asked to cancel: closed on release. */
const cancelling = new WeakSet<pg.PoolClient>();
/** The error listener of a checked-out connection (see checkout). */
const ignoreWhileCheckedOut = () => {};
/** Scopes whose abort is already wired to cancellation. */
const watched = new WeakSet<StatementScope>();

/**
 * pg.Pool whose checkouts obey the caller's StatementScope. Every checkout goes through connect() (pool.query too),
 * so Kysely, the COPY helper and the rate limiter's raw queries alike get the limit of the work they do.
 */
export class ScopedPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: Callback): void;
  override connect(callback?: Callback): Promise<pg.PoolClient> | void {
    // Read here, in the caller's context: a client handed over later by another request's release runs our
    // callback in that request's context.
    const scope = scopes.getStore();
    if (scope?.signal?.aborted) {
      if (!callback) return Promise.reject(new ClientGoneError());
      callback(new ClientGoneError(), undefined, () => {});
      return;
    }
    if (!callback) return super.connect().then((client) => this.checkout(client, scope));
    super.connect((err, client, done) => {
      if (err || !client) return callback(err, client, done);
      this.checkout(client, scope).then(
        (scoped) => callback(undefined, scoped, scoped.release),
        (error: Error) => callback(error, undefined, () => {}),
      );
    });
  }

  private async checkout(client: pg.PoolClient, scope: StatementScope | undefined): Promise<pg.PoolClient> {
    // pg-pool takes its error listener off a connection it hands out, and Kysely adds none: a connection the server
    // ended while it was checked out between statements (a restart, a failover, pg_terminate_backend) emitted
    // 'error' with no listener, and the process exited on it (seen stopping the database under load). The error
    // needs no handling here: the connection's next statement fails with it, and pg-pool discards the connection
    // at its release (it is no longer queryable).
    client.on('error', ignoreWhileCheckedOut);
    const release = client.release;
    let released = false;
    client.release = (err?: Error | boolean) => {
      if (!released) {
        scope?.held.delete(client);
        client.removeListener('error', ignoreWhileCheckedOut);
      }
      released = true;
      release(err || (cancelling.has(client) ? new Error('connection retired after a cancellation') : undefined));
    };
    const timeoutMs = scope?.timeoutMs ?? 0;
    if ((applied.get(client) ?? 0) !== timeoutMs) {
      // Awaited, though pg would send it ahead of the caller's first statement: queuing a query on a connection
      // that is running one is deprecated in pg 8 (a warning at every start) and removed in pg 9. One round trip,
      // only when the connection's limit changes (a pool shared by requests and background jobs).
      try {
        await client.query(timeoutMs ? `set statement_timeout = ${Math.floor(timeoutMs)}` : 'reset statement_timeout');
      } catch (error) {
        client.release(error as Error); // a connection that cannot take a setting is broken: discarded
        throw error;
      }
      applied.set(client, timeoutMs);
    }
    if (scope?.signal) {
      scope.held.add(client);
      if (!watched.has(scope)) {
        watched.add(scope);
        scope.signal.addEventListener('abort', () => this.cancelAll(scope), { once: true });
      }
    }
    return client;
  }

  /** Asks PostgreSQL to cancel the statement each of the scope's connections is running. */
  private cancelAll(scope: StatementScope): void {
    for (const client of scope.held) {
      // processID: the backend's pid from the protocol's BackendKeyData (pg sets it on connect; a test checks it).
      const pid = (client as pg.PoolClient & { processID?: number }).processID;
      if (!pid) continue;
      cancelling.add(client);
      // The pool's own options (its password is not enumerable, so it is named).
      const control = new pg.Client({
        ...this.options,
        password: this.options.password,
        application_name: 'messaging-service-api (cancel)',
      });
      control.on('error', () => {});
      control
        .connect()
        .then(() => control.query('select pg_cancel_backend($1)', [pid]))
        .catch(() => {}) // best effort: the statement_timeout still bounds it
        .finally(() => void control.end().catch(() => {}));
    }
  }
}
