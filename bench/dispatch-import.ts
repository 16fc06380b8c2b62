// Part (i) of `npm run bench` (bench/run.ts, issue 38 item 1): dispatch throughput before and after a bulk import, in
// one run. The same backlog of direct sends (POST /v1/messages/send, one wake job per message, as part m2 drains)
// is handed to the carrier simulator by one fresh worker process twice: on the run's database as it is, then after
// part d's 150,000-row import (two imports of the file and the reference COPY into another organization, about
// 300,000 contacts with their tags and consent entries) and the settling bench/run.ts does after it (vacuum,
// analyze, checkpoint). Goal: the rate after the import within 20 % of the rate before.
//
// With BENCH_STATEMENTS=1 the run's PostgreSQL loads pg_stat_statements (bench/run.ts), and each phase prints the
// statements that took most of the database's time while the worker drained, with their buffers per call: the
// figures that do not depend on the machine's load.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { loadDocument } from '../src/contract/document.ts';
import { createDb, type Db } from '../src/db/database.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { benchContactImport } from './contacts-import.ts';
import type { OwnDataBench } from './own-data.ts';

const BACKLOG = Number(process.env.BENCH_DISPATCH_BACKLOG ?? 8000);
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Org = Awaited<ReturnType<typeof createOrganization>>;

/** `n` direct sends through an API process without workers: queued messages, each with its wake job. */
async function queueSends(own: OwnDataBench, org: Org, contactIds: string[], n: number): Promise<void> {
  const port = await own.freePort();
  const api = spawn(process.execPath, ['src/main.js'], { env: { ...own.env, PORT: String(port), RUN_WORKERS: '0' }, stdio: 'ignore' });
  own.children.push(api);
  try {
    await own.waitFor(`http://127.0.0.1:${port}/health`);
    let i = 0;
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/v1/messages/send`,
      method: 'POST',
      connections: 10,
      amount: n,
      headers: { authorization: `Bearer ${org.apiKey.secret}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              contactId: contactIds[i++ % contactIds.length],
              messageType: 'TRANSACTIONAL',
              content: { type: 'text', text: 'Your order has shipped and arrives Thursday.' },
            }),
          }),
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`dispatch bench sends: ${result.non2xx} non-2xx, ${result.errors} errors`);
  } finally {
    api.kill('SIGTERM');
  }
}

const unsent = async (db: Db, orgId: string) =>
  Number(
    (
      await sql<{
        n: string;
      }>`select count(*) as n from messages where organization_id = ${orgId}::uuid and status in ('queued', 'sending')`.execute(db)
    ).rows[0]!.n,
  );

/** One fresh worker process drains the organization's backlog: messages per second from its first send to its last. */
async function drain(own: OwnDataBench, db: Db, orgId: string): Promise<{ total: number; seconds: number; statements: string[] }> {
  const total = await unsent(db, orgId);
  if (STATEMENTS) await sql`select pg_stat_statements_reset()`.execute(db);
  const receiverPort = await own.freePort();
  const receiver = spawn(process.execPath, ['src/main.js'], {
    env: { ...own.env, PORT: String(receiverPort), RUN_WORKERS: '0' },
    stdio: 'ignore',
  });
  own.children.push(receiver);
  await own.waitFor(`http://127.0.0.1:${receiverPort}/health`);
  const worker = spawn(process.execPath, ['src/worker.js'], {
    env: { ...own.env, CALLBACK_BASE_URL: `http://127.0.0.1:${receiverPort}` },
    stdio: 'ignore',
  });
  own.children.push(worker);
  let first: number | undefined;
  let left = total;
  const deadline = Date.now() + 180_000;
  try {
    while (left > 0 && Date.now() < deadline) {
      await sleep(50);
      left = await unsent(db, orgId);
      if (first === undefined && left < total) first = performance.now();
    }
  } finally {
    worker.kill('SIGTERM');
    receiver.kill('SIGTERM');
  }
  const seconds = (performance.now() - (first ?? performance.now())) / 1000;
  return { total: total - left, seconds, statements: STATEMENTS ? await topStatements(db) : [] };
}

/** The statements that took most of the database's time since the reset, with their buffers per call (BENCH_STATEMENTS=1). */
export async function topStatements(db: Db, limit = 10): Promise<string[]> {
  const { rows } = await sql<{
    calls: string;
    plans: string;
    total: number;
    mean: number;
    plan: number;
    hit: number;
    read: number;
    rows: number;
    query: string;
  }>`
    select calls, plans, total_exec_time as total, mean_exec_time as mean, mean_plan_time as plan, shared_blks_hit::float / calls as hit,
      shared_blks_read::float / calls as read, rows::float / calls as rows, query
    from pg_stat_statements where calls > 0 order by total_exec_time + total_plan_time desc limit ${limit}`.execute(db);
  return rows.map(
    (r) =>
      `        ${fmt(r.total).padStart(6)} ms ${fmt(Number(r.calls)).padStart(6)} calls (${fmt(Number(r.plans))} planned, ${fmt(r.plan, 2)} ms) ${fmt(r.mean, 2).padStart(7)} ms/call ${fmt(r.hit).padStart(7)} hit ${fmt(r.read).padStart(5)} read ${fmt(r.rows).padStart(5)} rows/call  ${r.query.replace(/\s+/g, ' ').slice(0, 160)}`,
  );
}

export async function benchDispatchAfterImport(own: OwnDataBench, settle: () => Promise<void>): Promise<string[]> {
  const { db } = createDb(own.databaseUrl, 2);
  const lines: string[] = [];
  try {
    const org = await createOrganization(db, loadDocument(), 'Dispatch after import bench');
    // As part m: contacts that take RCS (last digit 1) or not (last digit 8); no sandbox magic suffix.
    const phones = Array.from({ length: 2000 }, (_, i) => `+1629${String(300_000 + i)}${i % 2 === 0 ? '1' : '8'}`);
    const contacts = await db
      .insertInto('contacts')
      .values(
        phones.map((phone, i) => ({
          organization_id: org.organizationId,
          phone,
          attributes: '{}',
          rcs_capable: i % 2 === 0,
          consent_type: 'MARKETING',
        })),
      )
      .returning('id')
      .execute();
    const ids = contacts.map((c) => c.id);
    await settle();

    const phase = async (label: string) => {
      await queueSends(own, org, ids, BACKLOG);
      const load = loadavg()[0]!;
      const r = await drain(own, db, org.organizationId);
      const rate = r.total / r.seconds;
      lines.push(
        `      ${label}: ${fmt(r.total)} messages in ${fmt(r.seconds, 2)} s = ${fmt(rate)} messages/s (load average ${fmt(load, 1)})`,
        ...r.statements,
      );
      return rate;
    };
    lines.push(
      `(i) dispatch of ${fmt(BACKLOG)} direct sends to the carrier simulator, one fresh worker process, before and after a bulk import`,
    );
    const before = await phase('before the import');
    const t0 = performance.now();
    const imp = await benchContactImport(own.databaseUrl);
    await settle();
    lines.push(
      `      the import: part d (${fmt(imp.rows)} rows twice, and the reference COPY into another organization) and the settling, ${fmt((performance.now() - t0) / 1000, 1)} s`,
    );
    const after = await phase('after the import ');
    const ratio = after / before;
    lines.push(
      `      after/before: ${fmt(ratio * 100, 1)} % (${ratio >= 0.8 ? 'goal ≥ 80 % (issue 38) ✓' : '✗ MISSED goal ≥ 80 % (issue 38)'}); ${after >= 1000 ? 'goal ≥ 1,000/s ✓' : '✗ MISSED goal ≥ 1,000/s'}`,
    );
    return lines;
  } finally {
    await db.destroy();
  }
}
