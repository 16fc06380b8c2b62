// Named prepared statements for the hot path. Kysely sends every statement unnamed, so PostgreSQL parses and plans
// it on each execution; for the send path's one large statement that planning costs more than running it. A
// statement whose SQL starts with `/* prepared:<name> */` (a query builder's select marks itself with
// `.modifyFront(sql.raw('/* prepared:<name> */'))`: `select /* prepared:<name> */ …`) is sent as a named prepared statement instead: parsed
// once per connection, and after a few executions PostgreSQL may keep a generic plan. Only statements of a fixed
// shape are marked (the text is part of the name, so another shape is another statement).
//
// A migration that changes a table's columns while the process runs (a rolling deploy) invalidates such a
// statement's result type: PostgreSQL then refuses it ("cached plan must not change result type", 0A000) on that
// connection until it is prepared again. The refused statement has not run, so it is prepared again under a new
// name and retried once (outside a transaction that succeeds; inside one, the transaction fails once, as any
// statement error fails it, and the connection's next use prepares afresh).
//
// This replaces `query` on each pool client, which pg does not document as an extension point: written against
// pg 8.23.1; test/library-internals.test.ts checks the named statement reaches pg_prepared_statements.
import { createHash } from 'node:crypto';
import type pg from 'pg';

const MARK = /^(?:select )?\/\* prepared:([\w.-]+) \*\//;
const names = new Map<string, string>();
const patched = new WeakSet<pg.PoolClient>();

const isStalePlan = (error: unknown) =>
  (error as { code?: string }).code === '0A000' && /cached plan must not change result type/.test((error as Error).message);

/** The name a marked statement is prepared under, undefined for an unmarked one. */
function nameOf(text: string): string | undefined {
  const mark = MARK.exec(text);
  if (!mark) return undefined;
  let name = names.get(text);
  if (!name) {
    name = `${mark[1]}-${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    if (names.size < 1000) names.set(text, name); // a bounded memo: marked shapes are few
  }
  return name;
}

/** The pool as Kysely's PostgresDialect uses it, its clients sending marked statements as named ones. */
export function withPreparedStatements(pool: pg.Pool): pg.Pool {
  const connect = pool.connect.bind(pool);
  // What the dialect uses of a pool (connect, end, the client class and options for query cancellation); the
  // pool's own state stays on the pool.
  return {
    Client: (pool as unknown as { Client: unknown }).Client,
    options: pool.options,
    end: () => pool.end(),
    connect: async () => {
      const client = await connect();
      if (!patched.has(client)) {
        patched.add(client);
        // Looked up on each call, so whatever wraps the client class's query (a test counting statements) still sees it.
        const proto = Object.getPrototypeOf(client) as { query: (...args: unknown[]) => unknown };
        const query = (...args: unknown[]) => proto.query.apply(client, args);
        // Every other call (a config object, a callback as pg.Pool.query passes one) goes through untouched.
        // Names prepared again on this connection after their plan went stale, and how many times.
        const stale = new Map<string, number>();
        const named = (name: string) => (stale.has(name) ? `${name}~${stale.get(name)}` : name);
        client.query = ((...args: unknown[]) => {
          const [text, values, ...rest] = args;
          const name = typeof text === 'string' && (values === undefined || Array.isArray(values)) ? nameOf(text) : undefined;
          if (!name) return query(...args);
          if (rest.length) return query({ name: named(name), text, values }, ...rest); // a callback: no retry
          return (query({ name: named(name), text, values }) as Promise<unknown>).catch((error: unknown) => {
            if (!isStalePlan(error)) throw error;
            stale.set(name, (stale.get(name) ?? 0) + 1);
            return query({ name: named(name), text, values });
          });
        }) as typeof client.query;
      }
      return client;
    },
  } as unknown as pg.Pool;
}
