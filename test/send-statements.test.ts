// Round trips per POST /v1/messages/send, counted at the pg driver: every statement this process sends (the API's
// pool and the job queue's), BEGIN and COMMIT included. A budget, so a change that adds a round trip to the hot
// path fails here; `npm run bench -- --only m` reports the throughput it buys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let contacts: string[];

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Statement budget');
  const rows = Array.from({ length: 12 }, (_, i) => ({
    organization_id: org.organizationId,
    phone: `+1415555${String(2000 + i)}`,
    attributes: '{}',
    consent_type: 'MARKETING',
    time_zone: 'UTC',
    quiet_hours_start: '00:00',
    quiet_hours_end: '00:00', // never quiet: the send is accepted whatever the hour of the test run
  }));
  contacts = (await srv.context.db.insertInto('contacts').values(rows).returning('id').execute()).map((r) => r.id);
});
afterAll(() => srv.close());

/** Statements sent while `work` runs. */
async function statementsDuring(work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  // The per-key rate limit takes its points from PostgreSQL a chunk at a time (src/http/rate-limit.ts): one statement
  // per 100 requests or per window of a key, not per send, so it lands in a round when a window happens to turn.
  await watchingStatements((s) => {
    if (!/"rate_limits"/.test(s.text)) seen.push(s.text.replace(/\s+/g, ' ').slice(0, 60));
  }, work);
  return seen;
}

const send = async (contactId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key: org.apiKey.secret,
    body: { contactId, content: { type: 'text', text: 'Budget' }, ...body },
    headers,
  });
  expect(res.status).toBe(200);
};

describe('statements per send', () => {
  it.each([
    // The budgets of the set-based send path (BEGIN, the one read, the set statement, the wake job, COMMIT). Since
    // then the wake job is part of the set statement and a send without a key needs no transaction: see the tighter
    // budget below. Before the set-based send path: 11, 11 and 15.
    ['TRANSACTIONAL', { messageType: 'TRANSACTIONAL' }, false, 5],
    ['MARKETING (the gate reads the quiet-hours group too)', { messageType: 'MARKETING' }, false, 5],
    ['MARKETING with an Idempotency-Key (its lock, record and response)', { messageType: 'MARKETING' }, true, 9],
  ] as const)('%s', async (_name, body, withKey, budget) => {
    await send(contacts[0]!, body, withKey ? { 'idempotency-key': `warm-${_name}` } : {}); // caches warm
    const rounds = 5;
    const seen = await statementsDuring(async () => {
      for (let i = 0; i < rounds; i++) await send(contacts[1 + i]!, body, withKey ? { 'idempotency-key': `${_name}-${i}` } : {});
    });
    const perSend = seen.length / rounds;
    console.log(`statements per send, ${_name}: ${perSend}\n  ${seen.slice(0, seen.length / rounds).join('\n  ')}`);
    expect(perSend).toBeLessThanOrEqual(budget);
  });
});

describe('statements per send, without a transaction of its own', () => {
  it('sends without an Idempotency-Key in the read and the accepting statement (plus at most one coalesced worker nudge); with a key in 6', async () => {
    for (const [withKey, budget] of [
      [false, 3],
      [true, 6],
    ] as const) {
      const rounds = 4;
      await new Promise((r) => setTimeout(r, 200)); // the nudge of an earlier send is out of the way
      const seen = await statementsDuring(async () => {
        for (let i = 0; i < rounds; i++)
          await send(contacts[7 + i]!, { messageType: 'TRANSACTIONAL' }, withKey ? { 'idempotency-key': `own-${i}` } : {});
      });
      expect(seen.filter((s) => /^\s*(begin|commit)\b/i.test(s)).length).toBe(withKey ? 2 * rounds : 0);
      expect(seen.length / rounds).toBeLessThanOrEqual(budget);
    }
  });
});

describe('statements per send, built once', () => {
  it('builds, guards and compiles no statement with Kysely per send once its shapes are warm (compiledOnce: src/db/compiled-once.ts)', async () => {
    const { DefaultQueryCompiler } = await import('kysely');
    const proto = DefaultQueryCompiler.prototype as unknown as { compileQuery: (...args: unknown[]) => unknown };
    const original = proto.compileQuery;
    let compiles = 0;
    proto.compileQuery = function (this: unknown, ...args: unknown[]) {
      compiles++;
      return original.apply(this, args);
    };
    try {
      await send(contacts[11]!, { messageType: 'MARKETING' }); // warm: this shape's first execution builds it
      compiles = 0;
      const rounds = 4;
      // Other contacts, other texts: the same shape, each send with its own values.
      for (let i = 0; i < rounds; i++)
        await send(contacts[7 + i]!, { messageType: 'MARKETING', content: { type: 'text', text: `Budget ${i}` } });
      console.log(`Kysely compilations per send: ${compiles / rounds}`);
      expect(compiles / rounds).toBe(0);
    } finally {
      proto.compileQuery = original;
    }
  });
});
