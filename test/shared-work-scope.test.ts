// Work that several requests wait for runs under no one request's client (runShared, src/db/statement-scope.ts).
// Bench part m1 found it: the API key's requests wait on one take from the key's shared rate count, started by the
// first of them; when that one's client had gone (a round of the load generator closing its connections), the take
// was refused a connection, and the 20 requests of the next round waiting on it answered 500 ClientGoneError.
// The race needs a client gone between two awaits of another request, so it is set up here on the parts themselves:
// the pool and the rate limiter of the API process, on the real database.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runInStatementScope, ScopedPool, StatementScope } from '../src/db/statement-scope.ts';
import { KeyRateLimiter } from '../src/http/rate-limit.ts';

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
