// The pool every request and job checks its connections out of (ScopedPool, src/db/statement-scope.ts), on the real
// database: the parts of it that HTTP cannot time.
//
// Work that several requests wait for runs under no one request's client (runShared). Bench part m1 found it: the API key's requests wait on one take from the key's shared rate count, started by the
// first of them; when that one's client had gone (a round of the load generator closing its connections), the take
// was refused a connection, and the 20 requests of the next round waiting on it answered 500 ClientGoneError.
// The race needs a client gone between two awaits of another request, so it is set up here on the parts themselves:
// the pool and the rate limiter of the API process, on the real database.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runInStatementScope, ScopedPool, StatementScope } from '../src/db/statement-scope.ts';
import { KeyRateLimiter } from '../src/http/rate-limit.ts';
import { isDatabaseUnavailable } from '../src/startup-errors.ts';

const pool = new ScopedPool({ connectionString: inject('databaseUrl'), max: 2 });
pool.on('error', () => {});
afterAll(() => pool.end());

describe('work shared by requests', () => {
  it('a take from the key’s shared count, started by a request whose client then went away, still serves the others', async () => {
    const limiter = new KeyRateLimiter(pool, { perKey: 1000, windowSeconds: 60 });
    const principal = { organizationId: randomUUID(), apiKeyId: randomUUID(), scopes: new Set<string>() };
    const gone = new AbortController();
    const first = runInStatementScope(new StatementScope(5000, gone.signal), () => limiter.take(principal));
    gone.abort(); // the first request's client leaves before its take reaches the database
    const waiting = runInStatementScope(new StatementScope(5000, new AbortController().signal), () => limiter.take(principal));
    await expect(waiting).resolves.toMatchObject({ 'RateLimit-Limit': '1000' });
    await expect(first).resolves.toMatchObject({ 'RateLimit-Limit': '1000' }); // its answer goes nowhere, but is not an error
  });

  it('a request whose client went away still gets no new connection for its own statements', async () => {
    const gone = new AbortController();
    gone.abort();
    const own = runInStatementScope(new StatementScope(5000, gone.signal), () => pool.query('select 1'));
    await expect(own).rejects.toThrow(/client went away/);
  });
});

describe('a connection the server ends while it is checked out', () => {
  it('fails its next statement and is discarded at its release; the process does not exit', async () => {
    const client = await pool.connect(); // checked out, between statements (a transaction's JavaScript, say)
    const pid = (client as typeof client & { processID: number }).processID;
    const ended = new Promise((resolve) => client.once('end', resolve)); // no 'error' listener here: that is the point
    await pool.query('select pg_terminate_backend($1)', [pid]); // a restart or failover, as seen from this connection
    await ended; // its 'error' event came first: with no listener of the pool's, an uncaught exception (the process exited)
    const error = await client.query('select 1').catch((e: unknown) => e);
    expect(isDatabaseUnavailable(error), String(error)).toBe(true); // its request answers 503 SERVICE_UNAVAILABLE, not 500
    client.release();
    expect(pool.totalCount).toBe(1); // the broken one was discarded: only the terminating query's connection is left
    expect((await pool.query<{ n: number }>('select 1 as n')).rows[0]!.n).toBe(1);
  });
});
