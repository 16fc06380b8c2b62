// A request's SQL is bounded (issue 31, item 8): each statement by STATEMENT_TIMEOUT_SECONDS, or by the
// operation's `x-statement-timeout-seconds`, answering 504 QUERY_TIMEOUT past it; and a client that disconnects
// has its statement cancelled instead of left running. A statement is held here by a row lock the test takes on a
// connection of its own (a lock wait counts toward statement_timeout and is what pg_stat_activity shows).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

/** Holds `for update` on one row, on a connection of the test's own, until release(). */
async function lockRow(table: 'contacts' | 'blasts', id: string): Promise<{ pid: number; release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
  await client.query('begin');
  await client.query(`select 1 from ${table} where id = $1 for update`, [id]);
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  return {
    pid,
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}

/** Backends of the service waiting on the locker's lock. */
async function blockedBy(srv: TestServer, pid: number): Promise<number> {
  const rows = await srv.context.pool.query<{ n: string }>(
    'select count(*) as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
    [pid],
  );
  return Number(rows.rows[0]!.n);
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('statement timeout', () => {
  let srv: TestServer;
  let key: string;
  let senderId: string;
  beforeAll(async () => {
    srv = await startTestServer({ config: { statementTimeoutMs: 500 } });
    const org = await srv.newOrg('Statement timeout org');
    key = org.apiKey.secret;
    senderId = org.senderId;
  });
  afterAll(() => srv.close());

  it('a statement past the limit answers 504 QUERY_TIMEOUT, and what it would have written is not kept', async () => {
    const created = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155557001', name: 'Before' } });
    expect(created.status, created.text).toBe(201);
    const lock = await lockRow('contacts', created.body.id);
    try {
      const t0 = performance.now();
      const res = await call(srv, 'PUT', `/v1/contacts/${created.body.id}`, { key, body: { phone: '+14155557001', name: 'After' } });
      expect(res.status, res.text).toBe(504);
      expect(res.body.code).toBe('QUERY_TIMEOUT');
      expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
      expect(res.body.message).toMatch(/0\.5 s/);
      expect(performance.now() - t0).toBeLessThan(3000);
    } finally {
      await lock.release();
    }
    expect((await call(srv, 'GET', `/v1/contacts/${created.body.id}`, { key })).body.name).toBe('Before');
  });

  it('a tool call through /mcp is held to the same limit: a tool error with 504 QUERY_TIMEOUT, not a 500', async () => {
    const created = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155557003', name: 'Before' } });
    const lock = await lockRow('contacts', created.body.id);
    try {
      const res = await fetch(`${srv.baseUrl}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'replaceContact', arguments: { id: created.body.id, body: { phone: '+14155557003', name: 'After' } } },
        }),
      });
      const answer = (await res.json()) as { result: { isError?: boolean; _meta: { status: number; error: { code: string } } } };
      expect(answer.result.isError).toBe(true);
      expect(answer.result._meta.status).toBe(504);
      expect(answer.result._meta.error.code).toBe('QUERY_TIMEOUT');
    } finally {
      await lock.release();
    }
  });

  it("an operation's x-statement-timeout-seconds (blast audiences: 300 s) outlasts the default; the default still applies to the others", async () => {
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155557002' } });
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Limits',
        senderId,
        messageType: 'TRANSACTIONAL',
        contentJson: { type: 'text', text: 'Hi' },
        contactIds: [contact.body.id],
      },
    });
    expect(blast.status, blast.text).toBe(201);
    const id = blast.body.id as string;
    const lock = await lockRow('blasts', id);
    let released = false;
    try {
      // updateBlast has no longer limit: it waits on the blast's row lock past 0.5 s and is stopped.
      const plain = await call(srv, 'PUT', `/v1/blasts/${id}`, { key, body: { name: 'Renamed' } });
      expect(plain.status, plain.text).toBe(504);
      expect(plain.body.code).toBe('QUERY_TIMEOUT');
      // updateBlastAudience (300 s) waits on the same lock for longer than 0.5 s, then completes once it is released.
      const pending = call(srv, 'PUT', `/v1/blasts/${id}/audience`, { key, body: { contactIds: [contact.body.id] } });
      await new Promise((r) => setTimeout(r, 1500));
      await lock.release();
      released = true;
      const longer = await pending;
      expect(longer.status, longer.text).toBe(200);
      expect(longer.body.data.recipientCount).toBe(1);
    } finally {
      if (!released) await lock.release();
    }
  });
});

describe('a client that disconnects', () => {
  let srv: TestServer;
  let key: string;
  beforeAll(async () => {
    srv = await startTestServer(); // the default limit (30 s): only the cancellation can end the statement in time
    key = (await srv.newOrg('Cancellation org')).apiKey.secret;
  });
  afterAll(() => srv.close());

  it('has the statement its request runs cancelled: gone from pg_stat_activity shortly after', async () => {
    const created = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155557003', name: 'Before' } });
    const lock = await lockRow('contacts', created.body.id);
    try {
      const gone = new AbortController();
      const request = fetch(`${srv.baseUrl}/v1/contacts/${created.body.id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ phone: '+14155557003', name: 'After' }),
        signal: gone.signal,
      }).catch((e: unknown) => e);
      expect(await until(async () => (await blockedBy(srv, lock.pid)) === 1, 5000)).toBe(true);
      gone.abort();
      await request;
      expect(await until(async () => (await blockedBy(srv, lock.pid)) === 0, 2000)).toBe(true);
      // The server goes on answering, and its pool is whole.
      expect((await call(srv, 'GET', '/health')).status).toBe(200);
    } finally {
      await lock.release();
    }
    expect((await call(srv, 'GET', `/v1/contacts/${created.body.id}`, { key })).body.name).toBe('Before');
  });
});
