// The send path's per-recipient lookups are planned by primary key, whatever the statistics (migration 0035). A
// contact is found by its id (a lateral probe that is never flattened into a join), and a conversation's id is
// derived from its key (read, by id, only for a chat-app session); each compliance list is read once per recipient.
// Planned as joins, on statistics that had not yet seen an organization's new contacts or conversations, a blast
// batch read every contact of the table, or every conversation of the organization per recipient (quadratic).
// Checked on the plans PostgreSQL makes for the statements the service really sent: a direct send's and a blast
// batch's, captured at the driver and explained with their own parameters.
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newConversationId } from '../src/db/queries/conversations/conversations.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { watchingStatements } from './support/statements.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;

type Captured = { text: string; values: unknown[] };

/** The statements matching `pattern` sent while `work` runs, with their parameters. */
async function captured(pattern: RegExp, work: () => Promise<void>): Promise<Captured[]> {
  const seen: Captured[] = [];
  await watchingStatements(({ text, values }) => {
    if (pattern.test(text)) seen.push({ text, values });
  }, work);
  return seen;
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; Plans?: PlanNode[] };

/** Runs `work` on a connection of its own to the test database (its session: prepared statements, a transaction). */
async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: (srv.context.pool as unknown as { options: { connectionString: string } }).options.connectionString,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Every scan of `relation` in the statement's plan, as "Seq Scan" or the index it uses (a Bitmap Heap Scan by the
 * indexes of its Bitmap Index Scans: on a few pages PostgreSQL may probe the primary key that way too), "(whole)"
 * after an index read without a condition. Sequential scans are priced out: the test database's tables hold a few
 * pages, and once autovacuum has analyzed them (every 10 s on the embedded server) reading one whole is the cheaper
 * plan for any lookup, probe or join. What is checked is the plan's shape: each lookup a probe by its key (an index
 * condition), not a join that reads the table.
 */
async function scansOf(statement: Captured, relation: string): Promise<string[]> {
  return withClient(async (client) => {
    await client.query('set enable_seqscan = off');
    const res = await client.query(`explain (format json) ${statement.text}`, statement.values);
    const scans: string[] = [];
    const walk = (n: PlanNode) => {
      const bitmapIndexes = (b: PlanNode): string[] =>
        b['Node Type'] === 'Bitmap Index Scan' ? [b['Index Name']!] : (b.Plans ?? []).flatMap(bitmapIndexes);
      if (n['Relation Name'] === relation && n['Node Type'] === 'Bitmap Heap Scan') scans.push(...(n.Plans ?? []).flatMap(bitmapIndexes));
      else if (n['Relation Name'] === relation && n['Node Type'].endsWith('Scan'))
        scans.push(n['Index Name'] ? `${n['Index Name']}${n['Index Cond'] ? '' : ' (whole)'}` : n['Node Type']);
      for (const child of n.Plans ?? []) walk(child);
    };
    walk((res.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan);
    return scans;
  });
}

/** Contacts of the organization (never quiet: the sends are accepted whatever the hour of the run). */
async function contacts(n: number, cohort: 'derived' | 'direct' | 'generic' | 'blast' | 'claim' | 'hot' | 'carrier'): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({
    organization_id: org.organizationId,
    phone: `+1415${{ derived: '5', direct: '6', generic: '8', blast: '7', claim: '9', hot: '4', carrier: '3' }[cohort]}${String(100000 + i)}`,
    attributes: JSON.stringify({ cohort }),
    consent_type: 'MARKETING',
    time_zone: 'UTC',
    quiet_hours_start: '00:00',
    quiet_hours_end: '00:00',
  }));
  return (await srv.context.db.insertInto('contacts').values(rows).returning('id').execute()).map((r) => r.id);
}

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Plans');
});
afterAll(() => srv.close());

describe('conversation ids derived from their key', () => {
  it('the database derives the id of a conversation inserted without one, and refuses another id', async () => {
    const [contactId] = await contacts(1, 'derived');
    const keys = { organization_id: org.organizationId, contact_id: contactId!, sender_id: org.senderId, source_type: 'api' as const };
    const row = await srv.context.db.insertInto('conversations').values(keys).returning('id').executeTakeFirstOrThrow();
    const derived = (
      await sql<{ id: string }>`select ${newConversationId(org.organizationId, contactId!, org.senderId)} as id`.execute(srv.context.db)
    ).rows[0]!.id;
    expect(row.id).toBe(derived);
    await srv.context.db.deleteFrom('conversations').where('id', '=', row.id).execute();
    await expect(
      srv.context.db
        .insertInto('conversations')
        .values({ ...keys, id: crypto.randomUUID() })
        .execute(),
    ).rejects.toThrow(/conversations_id_from_key/);
  });

  it('the check is validated here (no conversation from before the derivation), so sends probe the primary key alone', async () => {
    const row = await sql<{
      convalidated: boolean;
    }>`select convalidated from pg_constraint where conname = 'conversations_id_from_key'`.execute(srv.context.db);
    expect(row.rows[0]?.convalidated).toBe(true);
  });
});

describe('per-recipient lookups by primary key', () => {
  it('a direct send finds its contact by id and reads no conversation', async () => {
    const [contactId] = await contacts(1, 'direct');
    const [statement] = await captured(/insert into messages/, async () => {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Plans' } },
      });
      expect(res.status).toBe(200);
    });
    expect(await scansOf(statement!, 'contacts')).toEqual(['contacts_pkey']);
    // Its conversation's id is derived from its key: a send that plans no chat-app session reads no conversation.
    expect(await scansOf(statement!, 'conversations')).toEqual([]);
  });

  it('the dispatch claim updates the rows it locked where it found them, not by a second primary-key probe', async () => {
    const [contactId] = await contacts(1, 'claim');
    const [statement] = await captured(/with due as/, async () => {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Claimed' } },
      });
      expect(res.status).toBe(200);
      const deadline = Date.now() + 20_000;
      const claimed = async () =>
        (await srv.context.db.selectFrom('messages').select('status').where('id', '=', res.body.data.messageId).executeTakeFirstOrThrow())
          .status !== 'queued';
      while (!(await claimed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    });
    expect(statement).toBeDefined();
    // The lock's scan finds the message by id; the update reads it by its row address (ctid).
    expect(await scansOf(statement!, 'messages')).toEqual(['messages_pkey', 'Tid Scan']);
  });

  it("a direct send's prepared statement keeps its generic plan (planned once per connection, not per send)", async () => {
    const [contactId] = await contacts(1, 'generic');
    const [statement] = await captured(/prepared:accept-one/, async () => {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Generic' } },
      });
      expect(res.status).toBe(200);
    });
    expect(statement).toBeDefined();
    await withClient(async (client) => {
      // PostgreSQL plans the first five executions with their parameters, then keeps the generic plan unless it
      // looks costlier; an unnest of a parameter counted as ten rows made it look ten times its cost.
      await client.query('begin');
      for (let i = 0; i < 8; i++) await client.query({ name: 'accept-one', text: statement!.text, values: statement!.values });
      const plans = await client.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where name = 'accept-one'`,
      );
      await client.query('rollback');
      expect(Number(plans.rows[0]!.generic_plans)).toBeGreaterThanOrEqual(3);
    });
  });

  it("a blast batch finds each recipient's contact by id, reads no conversation, and each compliance list once", async () => {
    await contacts(30, 'blast');
    const segment = await call(srv, 'POST', '/v1/segments/resolve', {
      key: org.apiKey.secret,
      body: { conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: 'blast' }] },
    });
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key: org.apiKey.secret,
      body: {
        name: 'Plans',
        senderId: org.senderId,
        messageType: 'MARKETING',
        contentJson: { type: 'text', text: 'Plans' },
        segmentId: segment.body.data.segmentId,
      },
    });
    const [statement] = await captured(/update blast_recipients br/, async () => {
      expect((await call(srv, 'POST', `/v1/blasts/${blast.body.id}/launch`, { key: org.apiKey.secret })).status).toBe(200);
      const deadline = Date.now() + 20_000;
      // The audience is taken slice by slice after the launch (issue 33): wait until all 30 are recipients and
      // none is pending any more.
      const unsettled = async () => {
        const rows = await srv.context.db.selectFrom('blast_recipients').select('status').where('blast_id', '=', blast.body.id).execute();
        return rows.length < 30 || rows.some((r) => r.status === 'pending');
      };
      while ((await unsettled()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    });
    expect(statement).toBeDefined();
    expect(new Set(await scansOf(statement!, 'contacts'))).toEqual(new Set(['contacts_pkey']));
    expect(await scansOf(statement!, 'conversations')).toEqual([]);
    // Each compliance list is read once per recipient: a gate fact pulled up into the query was read again by every
    // expression that uses it (the refusal code, the override in two facts).
    for (const list of ['dnc_entries', 'opt_outs', 'compliance_overrides']) expect((await scansOf(statement!, list)).length, list).toBe(1);
  });
});

describe('status writes that are HOT (migration 0055)', () => {
  /** The table's updates so far, and how many of them were HOT (a new version on the same page, no index entry). */
  async function messageUpdates(): Promise<{ upd: number; hot: number }> {
    const row = (
      await sql<{ upd: string; hot: string }>`select n_tup_upd as upd, n_tup_hot_upd as hot from pg_stat_user_tables
        where relname = 'messages'`.execute(srv.context.db)
    ).rows[0]!;
    return { upd: Number(row.upd), hot: Number(row.hot) };
  }

  it("a blast's messages are claimed by HOT updates (no index holds their status), and the blast still settles", async () => {
    const n = 30;
    await contacts(n, 'hot');
    const before = await messageUpdates();
    const segment = await call(srv, 'POST', '/v1/segments/resolve', {
      key: org.apiKey.secret,
      body: { conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: 'hot' }] },
    });
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key: org.apiKey.secret,
      body: {
        name: 'Hot',
        senderId: org.senderId,
        messageType: 'MARKETING',
        contentJson: { type: 'text', text: 'Hot' },
        segmentId: segment.body.data.segmentId,
      },
    });
    expect((await call(srv, 'POST', `/v1/blasts/${blast.body.id}/launch`, { key: org.apiKey.secret })).status).toBe(200);
    // SENT: every message settled (the advance job's looks read the blast's recipients, not a status index).
    await until(
      async () => (await call(srv, 'GET', `/v1/blasts/${blast.body.id}`, { key: org.apiKey.secret })).body.status,
      (s) => s === 'SENT',
      'the blast SENT',
      30_000,
    );
    // Each message was updated at least three times (claim, provider acceptance, receipt); the counters reach
    // pg_stat_user_tables when the writing connections flush them (within seconds of going idle).
    const counted = (u: { upd: number; hot: number }) => u.upd - before.upd >= 3 * n && u.hot - before.hot >= 2 * n;
    const after = await until(messageUpdates, counted, 'the updates counted', 30_000).catch(messageUpdates);
    expect(after.upd - before.upd).toBeGreaterThanOrEqual(3 * n);
    // The claims (status, attempts, lease: HOT without status indexed and with room on the page) and the records
    // of the provider's acceptance (provider and its message id: HOT since they are no longer a unique key, 0057).
    expect(after.hot - before.hot).toBeGreaterThanOrEqual(2 * n);
  });
});

describe("the recipient's original carrier (migration 0056)", () => {
  it('is looked up with the prefix lengths the carrier table holds, not every length from 2 to 15', async () => {
    const [contactId] = await contacts(1, 'carrier');
    const [statement] = await captured(/insert into messages/, async () => {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key: org.apiKey.secret,
        body: { contactId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Carrier' } },
      });
      expect(res.status).toBe(200);
    });
    expect(statement).toBeDefined();
    await withClient(async (client) => {
      const stored = await client.query<{ lengths: number }>(
        'select max(length(prefix)) - min(length(prefix)) + 1 as lengths from phone_number_carriers',
      );
      // The statement inserts: explained with ANALYZE in a transaction that is rolled back.
      await client.query('begin');
      const res = await client.query(`explain (analyze, format json) ${statement!.text}`, statement!.values);
      await client.query('rollback');
      type Node = PlanNode & { 'Function Name'?: string; Alias?: string; 'Actual Rows'?: number };
      const probes: number[] = [];
      const walk = (n: Node) => {
        if (n['Function Name'] === 'generate_series' && n.Alias === 'n') probes.push(n['Actual Rows']!);
        for (const child of (n.Plans ?? []) as Node[]) walk(child);
      };
      walk((res.rows[0] as { 'QUERY PLAN': Array<{ Plan: Node }> })['QUERY PLAN'][0]!.Plan);
      // One recipient: the prefixes tried are one per stored length (3 to 9 digits: 7), where 14 were tried.
      expect(probes).toEqual([stored.rows[0]!.lengths]);
    });
  });
});
