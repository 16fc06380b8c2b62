// Messaging benchmarks (issue 5), run by bench/run.ts:
//  (m1) POST /v1/messages/send through the full pipeline (auth, validation, compliance gate, channel plan,
//      pricing, persist, dispatch enqueue) in an API process without workers, next to the bare baseline
//  (m2) dispatch throughput: N accepted messages handed to the carrier simulator by one worker process
import { cpuMsOf, postmasterOf, USER_HZ, watchCpu } from './process-cpu.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { createDb } from '../src/db/database.ts';
import { DISPATCH_QUEUE, type DispatchJob } from '../src/domain/messaging/dispatch.ts';
import { startQueue } from '../src/jobs/queue.ts';
import { topStatements } from './dispatch-import.ts';

const DISPATCH_BACKLOG = Number(process.env.BENCH_DISPATCH_BACKLOG ?? 5000);

type Ctx = {
  databaseUrl: string;
  organizationId: string;
  apiKey: string;
  env: NodeJS.ProcessEnv;
  freePort: () => Promise<number>;
  waitFor: (url: string) => Promise<void>;
  children: Array<{ kill: () => void }>;
  baselineRps: number;
  seconds: number;
  connections: number;
  rounds: number;
};

/** The last error lines (pino level ≥ 50) of an API's log, for a round that failed. */
const apiErrors = (log: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => /"level":(5|6)0/.test(line))
    .slice(-5)
    .join('\n') || '(none logged)';

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export async function runMessagingBench(ctx: Ctx): Promise<string[]> {
  const { db } = createDb(ctx.databaseUrl, 4);
  const lines: string[] = [];
  try {
    // Contacts that take RCS (last digit 1) or not (last digit 8), all with marketing consent; no number ends in
    // one of the sandbox's magic suffixes (…0333, …0503, …0666, …0777, …9999), so every send is a plain one.
    const phones = Array.from({ length: 2000 }, (_, i) => `+1628${String(300_000 + i)}${i % 2 === 0 ? '1' : '8'}`);
    await db
      .insertInto('contacts')
      .values(
        phones.map((phone, i) => ({
          organization_id: ctx.organizationId,
          phone,
          attributes: '{}',
          rcs_capable: i % 2 === 0,
          consent_type: 'MARKETING',
        })),
      )
      .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
      .execute();
    const contacts = await db
      .selectFrom('contacts')
      .select('id')
      .where('organization_id', '=', ctx.organizationId)
      .where('phone', 'like', '+16283%')
      .execute();

    // (m1) sends per second, API process without workers. BENCH_M_COMPARE=<dir>: the API of another checkout (main's)
    // runs too, on this database, in the same alternating rounds, so a change is measured against what it changes on
    // the same machine noise. Each side's API CPU per send is read from /proc (user + system ticks of 10 ms), and so
    // is PostgreSQL's: every process of the server (its backends, WAL writer, checkpointer…), which spent about twice
    // the API's time per send (issue 38). BENCH_CPU_PROF=<dir>: this checkout's API writes a V8 CPU profile there
    // when it stops. BENCH_STATEMENTS=1: the statements of this checkout's last round, with their plan and execution
    // time and buffers per call (pg_stat_statements).
    const compareDir = process.env.BENCH_M_COMPARE;
    const cpuProf = process.env.BENCH_CPU_PROF;
    const startApi = async (cwd: string | undefined, prof: boolean) => {
      const port = await ctx.freePort();
      const args = [...(prof && cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []), 'src/main.js'];
      // Its log goes to a file: a round that fails names the API's errors (a 5xx is a defect whatever the load).
      const log = join(tmpdir(), `bench-m1-api-${port}.log`);
      const out = openSync(log, 'w');
      const child = spawn(process.execPath, args, {
        cwd,
        env: { ...ctx.env, PORT: String(port), RUN_WORKERS: '0' },
        stdio: ['ignore', out, out],
      });
      closeSync(out);
      ctx.children.push(child);
      await ctx.waitFor(`http://127.0.0.1:${port}/health`);
      return {
        port,
        child,
        label: cwd ?? 'this checkout',
        log,
        runs: [] as Array<{ rps: number; p99: number; cpuUs: number | undefined; pgUs: number | undefined }>,
      };
    };
    const sides = [await startApi(undefined, true), ...(compareDir ? [await startApi(compareDir, false)] : [])];
    let n = 0;
    const bodyFor = () =>
      JSON.stringify({
        contactId: contacts[n++ % contacts.length]!.id,
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'Your order has shipped and arrives Thursday.' },
      });
    const postmaster = await postmasterOf(db);
    const m1Statements = process.env.BENCH_STATEMENTS === '1';
    let lastStatements: string[] = [];
    const sends = async (side: (typeof sides)[number], duration: number) => {
      if (m1Statements && side === sides[0]) await sql`select pg_stat_statements_reset()`.execute(db);
      const pg = watchCpu({}, postmaster);
      const cpuBefore = cpuMsOf(side.child.pid!);
      const result = await autocannon({
        url: `http://127.0.0.1:${side.port}/v1/messages/send`,
        method: 'POST',
        connections: ctx.connections,
        duration,
        headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
        requests: [{ setupRequest: (req) => ({ ...req, body: bodyFor() }) }],
      });
      const cpuAfter = cpuMsOf(side.child.pid!);
      const pgUsed = pg.read()?.get('PostgreSQL') ?? null;
      pg.stop();
      if (m1Statements && side === sides[0]) lastStatements = await topStatements(db, 6);
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(
          `send bench: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors; the API's errors (${side.log}):\n${apiErrors(side.log)}`,
        );
      const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1000) / result.requests.total : undefined;
      const pgUs = pgUsed !== null && postmaster !== null ? (pgUsed * 1e6) / USER_HZ / result.requests.total : undefined;
      return { rps: result.requests.average, p99: result.latency.p99, cpuUs, pgUs };
    };
    // A warm-up (as (b) has: connections, prepared statements, JIT), then the median of the rounds, the sides alternating.
    for (const side of sides) await sends(side, 2);
    for (let i = 0; i < ctx.rounds; i++) {
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) side.runs.push(await sends(side, ctx.seconds));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary = (runs: (typeof sides)[number]['runs']) => {
      const cpu = runs.flatMap((r) => (r.cpuUs === undefined ? [] : [r.cpuUs]));
      const pg = runs.flatMap((r) => (r.pgUs === undefined ? [] : [r.pgUs]));
      return {
        rps: median(runs.map((r) => r.rps)),
        p99: median(runs.map((r) => r.p99)),
        cpuUs: cpu.length ? median(cpu) : undefined,
        pgUs: pg.length ? median(pg) : undefined,
      };
    };
    const cpuText = (us: number | undefined, pgUs: number | undefined) =>
      `${us === undefined ? '' : `, API CPU ${fmt(us)} µs per send`}${pgUs === undefined ? '' : `, PostgreSQL CPU ${fmt(pgUs)} µs per send`}`;
    const result = summary(sides[0]!.runs);
    for (const side of sides) side.child.kill('SIGTERM');
    const met = result.rps >= 1000 && result.p99 < 50;
    lines.push(
      `(m1) POST /v1/messages/send, full pipeline, API process without workers, median of ${ctx.rounds} ${ctx.seconds}s rounds (load average ${fmt(loadavg()[0]!, 1)}): ${fmt(result.rps)} sends/s, p99 ${result.p99} ms${cpuText(result.cpuUs, result.pgUs)} (${met ? 'goal ≥ 1,000/s with p99 < 50 ms ✓' : '✗ MISSED goal ≥ 1,000/s with p99 < 50 ms'})`,
    );
    for (const side of sides) {
      const s = summary(side.runs);
      lines.push(
        `      ${side.label}: median ${fmt(s.rps)} sends/s, p99 ${s.p99} ms${cpuText(s.cpuUs, s.pgUs)}; rounds: ${side.runs.map((r) => `${fmt(r.rps)}/s p99 ${r.p99} ms${r.cpuUs === undefined ? '' : ` API ${fmt(r.cpuUs)} µs`}${r.pgUs === undefined ? '' : ` PostgreSQL ${fmt(r.pgUs)} µs`}`).join(', ')}`,
      );
    }
    if (lastStatements.length) lines.push(`      statements of this checkout's last round (pg_stat_statements):`, ...lastStatements);
    lines.push(
      `      ratio to the bare GET baseline (${fmt(ctx.baselineRps)} req/s): ${fmt((result.rps / ctx.baselineRps) * 100, 1)}% — a send is 2 statements, the read and the accepting statement (test/send-statements.test.ts), each shared by the sends ready together (src/domain/messaging/send-reads.ts, direct-batches.ts)`,
    );
    if (process.env.BENCH_M2 === '0') return lines;

    // (m2) dispatch throughput: top the accepted backlog up to DISPATCH_BACKLOG queued messages (rows and their
    // wake jobs written directly: acceptance was measured above), then time one worker process from its
    // first send to its last, so its start-up does not count.
    const queue = await startQueue(ctx.databaseUrl, { workers: false });
    const queued = async () =>
      Number(
        (
          await db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('organization_id', '=', ctx.organizationId)
            .where('status', '=', 'queued')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const missing = DISPATCH_BACKLOG - (await queued());
    if (missing > 0) {
      const template = await db
        .selectFrom('messages')
        .selectAll()
        .where('organization_id', '=', ctx.organizationId)
        .where('status', '=', 'queued')
        .limit(1)
        .executeTakeFirstOrThrow();
      for (let done = 0; done < missing; done += 1000) {
        const rows = Array.from({ length: Math.min(1000, missing - done) }, (_, i) => {
          const c = contacts[(done + i) % contacts.length]!;
          const { id: _id, created_at: _c, updated_at: _u, attempts: _a, fallback_used: _f, fallback_allowed: _fa, ...rest } = template;
          return { ...rest, contact_id: c.id, content: JSON.stringify(template.content) };
        });
        const ids = await db.insertInto('messages').values(rows).returning('id').execute();
        // The rows are their own outbox: one wake job per thousand, as a blast batch has.
        await queue.send(DISPATCH_QUEUE, { messageIds: ids.map((r) => r.id) } satisfies DispatchJob);
      }
    }
    await queue.stop({ graceful: false });
    const total = await queued();
    const receiverPort = await ctx.freePort();
    const receiver = spawn(process.execPath, ['src/main.js'], {
      env: { ...ctx.env, PORT: String(receiverPort), RUN_WORKERS: '0' },
      stdio: 'ignore',
    });
    ctx.children.push(receiver);
    await ctx.waitFor(`http://127.0.0.1:${receiverPort}/health`);
    const statements = process.env.BENCH_STATEMENTS === '1';
    if (statements) await sql`select pg_stat_statements_reset()`.execute(db);
    const worker: ChildProcess = spawn(process.execPath, ['src/worker.js'], {
      env: { ...ctx.env, CALLBACK_BASE_URL: `http://127.0.0.1:${receiverPort}` },
      stdio: 'ignore',
    });
    ctx.children.push(worker);
    let first: number | undefined;
    let left = total;
    const deadline = Date.now() + 180_000;
    while (left > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      left = Number(
        (
          await db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('organization_id', '=', ctx.organizationId)
            .where('status', 'in', ['queued', 'sending'])
            .executeTakeFirstOrThrow()
        ).n,
      );
      if (first === undefined && left < total) first = performance.now();
    }
    const seconds = (performance.now() - (first ?? performance.now())) / 1000;
    worker.kill('SIGTERM');
    receiver.kill('SIGTERM');
    const done = total - left;
    const span = await db
      .selectFrom('messages')
      .select([sql<number>`extract(epoch from max(sent_at) - min(sent_at))`.as('s'), sql<string>`count(*)`.as('n')])
      .where('organization_id', '=', ctx.organizationId)
      .where('sent_at', 'is not', null)
      .executeTakeFirstOrThrow();
    lines.push(
      `(m2) dispatch to the carrier simulator, one worker process: ${fmt(done)} of ${fmt(total)} queued messages in ${fmt(seconds, 1)} s from first to last send = ${fmt(done / seconds)} messages/s (${done / seconds >= 1000 ? 'goal ≥ 1,000/s ✓' : '✗ MISSED goal ≥ 1,000/s'})`,
    );
    lines.push(
      `      by the messages' own sent_at: ${fmt(Number(span.n))} sent within ${fmt(Number(span.s), 2)} s = ${fmt(Number(span.n) / Number(span.s))} messages/s`,
    );
    if (statements) lines.push(...(await topStatements(db)));
    return lines;
  } finally {
    await db.destroy();
  }
}
