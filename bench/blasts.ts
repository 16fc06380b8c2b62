// Part (l) of `npm run bench` (bench/run.ts): a 1,000,000-recipient blast through the HTTP API of a spawned API
// process and a spawned worker process.
//  - launch → every recipient accepted (its message queued or held, or the recipient skipped with its reason; the
//    audience is resolved batch by batch as the blast sends, src/domain/blasts/sending.ts),
//    next to a plain INSERT … SELECT of the same 1,000,000 message rows into a scratch copy of the messages table
//    (same columns, indexes and defaults) measured in the same run;
//  - issue 33's goals: the launch request answers in < 300 ms, the first message reaches the carrier < 2 s after
//    launch (messages.sent_at against the database clock at launch), ≥ 5,000 messages/s handed over end to end
//    (launch → the latest hand-over by the end of the drain sample), each exactly once (the carrier simulator's log: one row per message, none
//    sent twice);
//  - the dispatch rate while the blast drains (compare with part m's dispatch figure);
//  - what migration 0059 saves each blast batch: the per-row attribution trigger (migration 0044), which outbound
//    rows no longer run (the acceptance statement attributes them once per statement), timed on the same batches
//    inserted with it enabled and disabled, alternating, in the same run, and the ratio;
//  - RSS of the API and the worker process, sampled through the run, and their live heap after each full
//    garbage collection (V8's --trace-gc): RSS also holds the heap V8 has grown and not yet given back, so the live
//    heap is what shows whether memory stays flat or leaks.
// The organization and its contacts are seeded set-based (INSERT … SELECT generate_series): a third each RCS
// capable / not / unknown, every contact with marketing consent, 1 % opted out and 0.5 % on the DNC list (so the
// skip reasons show), explicit time zone UTC with quiet hours that never apply (the figure must not depend on the
// hour of the run).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadDocument } from '../src/contract/document.ts';
import { createDb, type Db } from '../src/db/database.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { topStatements } from './dispatch-import.ts';
import type { OwnDataBench } from './own-data.ts';
import { postmasterOf, USER_HZ, watchCpu } from './process-cpu.ts';

const RECIPIENTS = Number(process.env.BENCH_BLAST_RECIPIENTS ?? 1_000_000);
const DRAIN_SAMPLE_SECONDS = 15;
/** BENCH_STATEMENTS=1: the statements of the run (pg_stat_statements) and the indexes' use, per recipient handed over. */
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
/** BENCH_CPU_PROF=<dir>: the worker process writes a V8 CPU profile there (node --cpu-prof) when it stops. */
const CPU_PROF = process.env.BENCH_CPU_PROF;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const goal = (met: boolean, text: string) => (met ? `goal ${text} ✓` : `✗ MISSED goal ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function seedContacts(db: Db, orgId: string, n: number): Promise<void> {
  // Two connections, one half each: both cores load.
  const half = Math.ceil(n / 2);
  await Promise.all(
    [0, 1].map((k) =>
      sql`
        insert into contacts (organization_id, phone, phone_country, attributes, rcs_capable, consent_type, time_zone, quiet_hours_start, quiet_hours_end)
        select ${orgId}::uuid, '+1415' || lpad(g::text, 7, '0'), 'US', '{"cohort":"bench"}'::jsonb,
               case g % 3 when 0 then true when 1 then false end, 'MARKETING', 'UTC', '00:00', '00:00'
        from generate_series(${k * half + 1}::int, ${Math.min(n, (k + 1) * half)}::int) g`.execute(db),
    ),
  );
  await sql`insert into opt_outs (organization_id, phone, source, keyword)
    select ${orgId}::uuid, '+1415' || lpad(g::text, 7, '0'), 'KEYWORD', 'STOP' from generate_series(1, ${n}::int) g where g % 100 = 7`.execute(
    db,
  );
  await sql`insert into dnc_entries (organization_id, phone, source)
    select ${orgId}::uuid, '+1415' || lpad(g::text, 7, '0'), 'API' from generate_series(1, ${n}::int) g where g % 200 = 11`.execute(db);
  for (const t of ['contacts', 'opt_outs', 'dnc_entries']) await sql`vacuum analyze ${sql.table(t)}`.execute(db);
}

/** The baseline: the same number of message rows written by one plain INSERT … SELECT into a scratch copy of messages. */
async function plainInsertSelect(db: Db, orgId: string, senderId: string): Promise<number> {
  await sql`drop table if exists bench_messages_scratch`.execute(db);
  await sql`drop table if exists bench_conversations_scratch`.execute(db);
  await sql`create table bench_messages_scratch (like messages including defaults including indexes)`.execute(db);
  const t0 = performance.now();
  await sql`
    insert into bench_messages_scratch (organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, requested_channel,
      planned_channel, message_type, status, content, segments, encoding, estimated_cost_units, origin, dispatch_at)
    select c.organization_id, gen_random_uuid(), c.id, c.phone, ${senderId}::uuid, 'outbound', 'RCS', 'RCS', 'MARKETING', 'queued',
      '{"type":"text","text":"Winter sale: 30% off every jacket this weekend. Reply STOP to opt out."}'::jsonb, 1, 'GSM-7', 39, 'blast', now()
    from contacts c where c.organization_id = ${orgId}::uuid`.execute(db);
  const seconds = (performance.now() - t0) / 1000;
  await sql`drop table bench_messages_scratch`.execute(db);
  return seconds;
}

/** Rows per blast batch (src/domain/blasts/sending.ts BATCH_SIZE), and how many batches the trigger figure inserts each way. */
const BATCH_ROWS = 5_000;
// Each way reads its own contacts: no more batches than the seeded contacts fill (BENCH_BLAST_RECIPIENTS below 200,000).
const TRIGGER_BATCHES = Math.min(Number(process.env.BENCH_TRIGGER_BATCHES ?? 40), Math.floor(RECIPIENTS / BATCH_ROWS));

/**
 * The cost the per-row attribution trigger (migration 0044: messages_attribute, BEFORE INSERT FOR EACH ROW) had on
 * blast batches before migration 0059 left it to inbound rows (what 0059 saves): batches of BATCH_ROWS message rows inserted into a scratch copy of messages carrying the same trigger,
 * once with it enabled and once disabled, alternating batch by batch so both see the same machine. The sender is
 * attached to a program, so the trigger finds one (its costly path).
 */
async function attributionTriggerCost(
  db: Db,
  orgId: string,
  senderId: string,
): Promise<{ withTrigger: number; without: number; rows: number }> {
  await sql`drop table if exists bench_messages_trigger`.execute(db);
  await sql`create table bench_messages_trigger (like messages including defaults including indexes)`.execute(db);
  await sql`create trigger bench_messages_attribute before insert on bench_messages_trigger for each row execute function messages_attribute()`.execute(
    db,
  );
  const batch = (k: number) => sql`
    insert into bench_messages_trigger (organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, requested_channel,
      planned_channel, message_type, status, content, segments, encoding, estimated_cost_units, origin, dispatch_at)
    select c.organization_id, gen_random_uuid(), c.id, c.phone, ${senderId}::uuid, 'outbound', 'RCS', 'RCS', 'MARKETING', 'queued',
      '{"type":"text","text":"Winter sale: 30% off every jacket this weekend. Reply STOP to opt out."}'::jsonb, 1, 'GSM-7', 39, 'blast', now()
    from contacts c where c.organization_id = ${orgId}::uuid order by c.id offset ${k * BATCH_ROWS} limit ${BATCH_ROWS}`;
  const time = { withTrigger: 0, without: 0 };
  for (let k = 0; k < TRIGGER_BATCHES; k++) {
    for (const on of k % 2 ? [false, true] : [true, false]) {
      await sql`alter table bench_messages_trigger ${sql.raw(on ? 'enable' : 'disable')} trigger bench_messages_attribute`.execute(db);
      const t0 = performance.now();
      await batch(k).execute(db);
      time[on ? 'withTrigger' : 'without'] += (performance.now() - t0) / 1000;
    }
  }
  const attributed = await sql<{ n: string }>`select count(*) as n from bench_messages_trigger where program_id is not null`.execute(db);
  await sql`drop table bench_messages_trigger`.execute(db);
  if (Number(attributed.rows[0]!.n) !== TRIGGER_BATCHES * BATCH_ROWS) throw new Error('the trigger did not attribute every row it ran on');
  return { ...time, rows: TRIGGER_BATCHES * BATCH_ROWS };
}

/** The sender in an ACTIVE program (inserted directly: the bench needs the attachment row, not the registration flow). */
async function attachToProgram(db: Db, orgId: string, senderId: string): Promise<void> {
  await sql`with p as (
      insert into programs (organization_id, name, status, channels, sender_id) values (${orgId}::uuid, 'Bench program', 'ACTIVE', '{RCS,SMS}', ${senderId}::uuid)
      returning id)
    insert into program_senders (organization_id, program_id, sender_id, role, status) select ${orgId}::uuid, p.id, ${senderId}::uuid, 'PRIMARY', 'ACTIVE' from p`.execute(
    db,
  );
}

/** RSS of a process in MB (ps), undefined once it has gone. */
function rssOf(pid: number): number | undefined {
  try {
    return (
      Number(
        execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
          .toString()
          .trim(),
      ) / 1024
    );
  } catch {
    return undefined;
  }
}

/** A spawned process whose output (logs and V8's --trace-gc lines) goes to `log`. */
function spawnServer(ctx: OwnDataBench, entry: string, env: Record<string, string>, log: string, flags: string[] = []): ChildProcess {
  const out = openSync(log, 'w');
  const child = spawn(process.execPath, ['--trace-gc', ...flags, entry], { env: { ...ctx.env, ...env }, stdio: ['ignore', out, out] });
  ctx.children.push(child);
  return child;
}

/** The heap in use right after each full collection (Mark-Compact), in MB, from a --trace-gc log. */
function liveHeapAfterFullGc(log: string): number[] {
  const after = /Mark-Compact [\d.]+ \([\d.]+\) -> ([\d.]+) \(/;
  return readFileSync(log, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const m = after.exec(line);
      return m ? [Number(m[1])] : [];
    });
}

async function api<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/**
 * What the database did per message handed over, from launch to the end of the drain sample (BENCH_STATEMENTS=1):
 * statements and shared buffers (every statement of the run: acceptance, dispatch, jobs, receipts), the top
 * statements, each table's updates and how many were HOT, and each index's scans (an index no read uses is only
 * written).
 */
async function statementsPerRecipient(db: Db, handed: number): Promise<string[]> {
  const per = (n: number) => fmt(n / Math.max(1, handed), 2);
  const total = (
    await sql<{ calls: string; hit: string; read: string; dirtied: string }>`select sum(calls) as calls, sum(shared_blks_hit) as hit,
      sum(shared_blks_read) as read, sum(shared_blks_dirtied) as dirtied from pg_stat_statements`.execute(db)
  ).rows[0]!;
  const tables = await sql<{ relname: string; upd: string; hot: string; ins: string }>`
    select relname, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_ins as ins from pg_stat_user_tables
    where n_tup_upd + n_tup_ins > 0 order by n_tup_upd + n_tup_ins desc limit 8`.execute(db);
  const indexes = await sql<{ relname: string; indexrelname: string; idx_scan: string }>`
    select relname, indexrelname, idx_scan from pg_stat_user_indexes
    where relname in ('messages', 'blast_recipients', 'contacts', 'conversations', 'simulator_messages') order by relname, indexrelname`.execute(
    db,
  );
  return [
    `      per message handed over (${fmt(handed)}): ${per(Number(total.calls))} statements, ${per(Number(total.hit) + Number(total.read))} shared buffers (${per(Number(total.dirtied))} dirtied)`,
    `      rows written per table (inserted, updated, of which HOT): ${tables.rows.map((t) => `${t.relname} ${fmt(Number(t.ins))}/${fmt(Number(t.upd))}/${fmt(Number(t.hot))}`).join(', ')}`,
    `      index scans: ${indexes.rows.map((i) => `${i.indexrelname} ${fmt(Number(i.idx_scan))}`).join(', ')}`,
    "      statements that took the database's time:",
    ...(await topStatements(db, 25)),
  ];
}

/**
 * What every backend of the database waits on, sampled every 100 ms from launch to the end of the drain sample
 * (BENCH_STATEMENTS=1): pg_stat_activity's wait_event_type/wait_event of each active backend ("CPU" when it waits on
 * nothing: running or runnable), client backends idle in a transaction (the service holds a transaction open while it
 * works), and the server's own processes (checkpointer, autovacuum, WAL writer) apart. Answers the mean number of
 * backends in each state per sample, split between the first and the last third of the run: what grows as the tables
 * grow.
 */
function sampleWaits(db: Db): { stop: () => Promise<string[]> } {
  const samples: Array<Map<string, number>> = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t = Date.now();
      const { rows } = await sql<{ kind: string }>`
        select case when backend_type = 'client backend' then '' else backend_type || ': ' end
          || case when state = 'idle in transaction' then 'idle in transaction (' || coalesce(wait_event, '') || ')'
                  else coalesce(wait_event_type || '/' || wait_event, 'CPU') end as kind
        from pg_stat_activity
        where pid <> pg_backend_pid() and (state in ('active', 'idle in transaction') or backend_type <> 'client backend')
          and coalesce(wait_event_type, '') not in ('Activity', 'Extension')`.execute(db);
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
      samples.push(counts);
      await sleep(Math.max(0, 100 - (Date.now() - t)));
    }
  })();
  const mean = (part: Array<Map<string, number>>) => {
    const total = new Map<string, number>();
    for (const counts of part) for (const [k, v] of counts) total.set(k, (total.get(k) ?? 0) + v);
    return [...total]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => `${k} ${fmt(v / Math.max(1, part.length), 2)}`)
      .join(', ');
  };
  return {
    stop: async () => {
      stopped = true;
      await loop;
      const third = Math.max(1, Math.floor(samples.length / 3));
      return [
        `      backends per wait (mean of ${fmt(samples.length)} samples, 100 ms apart): first third ${mean(samples.slice(0, third))}`,
        `        last third ${mean(samples.slice(-third))}`,
      ];
    },
  };
}

/**
 * The server's WAL, checkpoints and buffer writes from launch to the end of the drain sample (BENCH_STATEMENTS=1; the
 * shared counters are reset at launch): WAL bytes and full-page images per message handed over (a page's first change
 * after a checkpoint logs the whole page), how often WAL buffers were full, checkpoints timed or requested (by WAL
 * volume: max_wal_size), and who wrote data pages out — the checkpointer, the background writer, or the client
 * backends themselves (shared buffers too small for the tables the run touches).
 */
async function serverWrites(db: Db, handed: number): Promise<string[]> {
  const wal = (
    await sql<{ bytes: string; fpi: string; full: string }>`select wal_bytes::bigint::text as bytes, wal_fpi::text as fpi,
      wal_buffers_full::text as full from pg_stat_wal`.execute(db)
  ).rows[0]!;
  const ck = (
    await sql<{ timed: string; requested: string; written: string }>`select num_timed::text as timed, num_requested::text as requested,
      buffers_written::text as written from pg_stat_checkpointer`.execute(db)
  ).rows[0]!;
  const io = await sql<{ backend_type: string; writes: string }>`select backend_type, sum(writes)::bigint::text as writes from pg_stat_io
    where object = 'relation' and writes > 0 group by 1 order by 2 desc`.execute(db);
  const per = (n: number) => fmt(n / Math.max(1, handed), 2);
  return [
    `      WAL per message handed over: ${fmt(Number(wal.bytes) / Math.max(1, handed) / 1024, 1)} KB (${fmt(Number(wal.bytes) / 1e9, 2)} GB), ${per(Number(wal.fpi))} full-page images; WAL buffers full ${fmt(Number(wal.full))} times; checkpoints ${ck.timed} timed, ${ck.requested} requested (${fmt(Number(ck.written))} buffers)`,
    `      data pages written by: ${io.rows.map((r) => `${r.backend_type} ${fmt(Number(r.writes))}`).join(', ') || 'nobody (every page still in shared buffers)'}`,
  ];
}

export async function benchBlasts(ctx: OwnDataBench): Promise<string[]> {
  const { db } = createDb(ctx.databaseUrl, 4);
  const lines: string[] = [];
  const stop: ChildProcess[] = [];
  const logs = mkdtempSync(join(tmpdir(), 'bench-blast-'));
  const apiLog = join(logs, 'api.log');
  const workerLog = join(logs, 'worker.log');
  try {
    const org = await createOrganization(db, loadDocument(), 'Blast bench');
    const orgId = org.organizationId;
    const sender = await db
      .selectFrom('sender_ids')
      .select(['id', 'throughput_per_second'])
      .where('organization_id', '=', orgId)
      .executeTakeFirstOrThrow();
    const seedStart = performance.now();
    await seedContacts(db, orgId, RECIPIENTS);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const port = await ctx.freePort();
    const apiProcess = spawnServer(ctx, 'src/main.js', { PORT: String(port), RUN_WORKERS: '0' }, apiLog);
    stop.push(apiProcess);
    const base = `http://127.0.0.1:${port}`;
    await ctx.waitFor(`${base}/health`);
    const worker = spawnServer(
      ctx,
      'src/worker.js',
      { CALLBACK_BASE_URL: base },
      workerLog,
      CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [],
    );
    stop.push(worker);

    const key = org.apiKey.secret;
    const segment = await api<{ data: { segmentId: string } }>(base, key, 'POST', '/v1/segments/resolve', {
      conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: 'bench' }],
    });
    if (segment.status !== 200) throw new Error(`segment: ${segment.status} ${JSON.stringify(segment.body)}`);
    const created = await api<{ id: string }>(base, key, 'POST', '/v1/blasts', {
      name: 'Million',
      senderId: sender.id,
      messageType: 'MARKETING',
      contentJson: { type: 'text', text: 'Winter sale: 30% off every jacket this weekend. Reply STOP to opt out.' },
      segmentId: segment.body.data.segmentId,
    });
    if (created.status !== 201 && created.status !== 200)
      throw new Error(`create blast: ${created.status} ${JSON.stringify(created.body)}`);
    const blastId = created.body.id;

    // RSS sampled every half second from launch to the end of the drain sample.
    const rss = { api: [] as number[], worker: [] as number[] };
    const sampler = setInterval(() => {
      const a = rssOf(apiProcess.pid!);
      const w = rssOf(worker.pid!);
      if (a !== undefined) rss.api.push(a);
      if (w !== undefined) rss.worker.push(w);
    }, 500);

    // CPU time of each side from launch to the end of the drain sample (/proc): the API process (acceptance runs in the
    // worker too: batch jobs), the worker, the PostgreSQL server.
    const postmaster = await postmasterOf(db);
    if (STATEMENTS)
      await sql`select pg_stat_statements_reset(), pg_stat_reset(), pg_stat_reset_shared('wal'), pg_stat_reset_shared('io'),
        pg_stat_reset_shared('checkpointer')`.execute(db);
    const waits = STATEMENTS ? sampleWaits(db) : undefined;
    const cpuWatch = watchCpu({ api: apiProcess.pid!, worker: worker.pid! }, postmaster);
    const load0 = loadavg()[0]!;
    // The database's clock at launch: the first hand-over is read from messages.sent_at (the same clock).
    const launchedAt = (await sql<{ at: string }>`select clock_timestamp()::text as at`.execute(db)).rows[0]!.at;
    const t0 = performance.now();
    const launched = await api<{ data: unknown }>(base, key, 'POST', `/v1/blasts/${blastId}/launch`, {});
    const launchSeconds = (performance.now() - t0) / 1000;
    if (launched.status !== 200) throw new Error(`launch: ${launched.status} ${JSON.stringify(launched.body)}`);
    // Polled as the advance job asks (the audience resolved, then hasPendingRecipient: newest batches first), not
    // by counting: a count of the pending recipients every 100 ms cost the database a fifth as much CPU as the
    // blast's own work.
    const pending = async () =>
      (
        await sql<{ left: boolean }>`select (select audience_done_at is null from blasts where id = ${blastId}::uuid)
            or (select 1 from blast_recipients where blast_id = ${blastId}::uuid and status = 'pending' order by batch desc limit 1) is not null as left`.execute(
          db,
        )
      ).rows[0]!.left;
    const deadline = Date.now() + 600_000;
    while ((await pending()) && Date.now() < deadline) await sleep(100);
    const acceptSeconds = (performance.now() - t0) / 1000;
    const counts = await sql<{ status: string; skip_reason: string | null; n: string }>`
      select status, skip_reason, count(*) as n from blast_recipients where blast_id = ${blastId}::uuid group by 1, 2 order by 3 desc`.execute(
      db,
    );
    const total = counts.rows.reduce((s, r) => s + Number(r.n), 0);

    // Dispatch while it drains: messages handed to the carrier over a fixed window.
    const handed = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from messages where organization_id = ${orgId}::uuid and origin = 'blast' and sent_at is not null`.execute(
            db,
          )
        ).rows[0]!.n,
      );
    const h0 = await handed();
    const d0 = performance.now();
    await sleep(DRAIN_SAMPLE_SECONDS * 1000);
    const h1 = await handed();
    const dispatchRate = (h1 - h0) / ((performance.now() - d0) / 1000);
    const cpuUsed = cpuWatch.read() ?? new Map<string, number>();
    cpuWatch.stop();
    const load1 = loadavg()[0]!;
    clearInterval(sampler);
    const statements = STATEMENTS
      ? [...(await statementsPerRecipient(db, h1)), ...(await serverWrites(db, h1)), ...(await waits!.stop())]
      : [];
    // From launch to the first and to the latest hand-over so far (a small blast may finish before the sample ends).
    const handedSpan = (
      await sql<{
        first: number | null;
        last: number | null;
      }>`select extract(epoch from min(sent_at) - ${launchedAt}::timestamptz)::float8 as first,
          extract(epoch from max(sent_at) - ${launchedAt}::timestamptz)::float8 as last
        from messages where organization_id = ${orgId}::uuid and origin = 'blast'`.execute(db)
    ).rows[0]!;
    const first = handedSpan.first;
    const endToEndRate = handedSpan.last ? h1 / handedSpan.last : 0;
    // Exactly once: the carrier simulator's log has one row per message (dedupe key) and counts repeated send calls.
    const once = (
      await sql<{ rows: string; repeated: string }>`select count(*) as rows, count(*) filter (where send_calls > 1) as repeated
        from simulator_messages where organization_id = ${orgId}::uuid`.execute(db)
    ).rows[0]!;

    // Stop the blast's processes before the baseline, so it runs on a quiet machine as ours did not.
    await api(base, key, 'POST', `/v1/blasts/${blastId}/cancel`, {}).catch(() => undefined);
    for (const child of stop) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    const plainSeconds = await plainInsertSelect(db, orgId, sender.id);
    await attachToProgram(db, orgId, sender.id);
    const trigger = await attributionTriggerCost(db, orgId, sender.id);

    const ratio = plainSeconds / acceptSeconds;
    // The samples are half a second apart: every 20th shows whether RSS levels off or keeps climbing.
    const every10s = (xs: number[]) =>
      xs
        .filter((_, i) => i % 20 === 0)
        .map((x) => fmt(x))
        .join(' ') + ' MB';
    const spread = (xs: number[]) =>
      xs.length
        ? `${fmt(xs[0]!)} MB at launch → max ${fmt(Math.max(...xs))} MB → ${fmt(xs[xs.length - 1]!)} MB (${xs.length} samples)`
        : 'no samples';
    lines.push(
      `(l) a ${fmt(RECIPIENTS)}-recipient blast through the HTTP API (one API process, one worker process); contacts seeded in ${fmt(seedSeconds, 1)} s`,
    );
    lines.push(
      `      launch request answered in ${fmt(launchSeconds * 1000)} ms (${goal(launchSeconds < 0.3, '< 300 ms')}; launch checks: sender, content rules, the first eligible recipient; the audience resolved batch by batch as it sends)`,
    );
    lines.push(
      `      first message handed to the carrier ${first === null ? 'never (within the run)' : `${fmt(first, 2)} s after launch`} (${goal(first !== null && first < 2, '< 2 s')})`,
    );
    lines.push(
      `      launch → every recipient accepted: ${fmt(acceptSeconds, 2)} s for ${fmt(total)} recipients = ${fmt(total / acceptSeconds)} recipients/s (no goal of its own: each batch is accepted when it is dispatched, so this follows the hand-over below)`,
    );
    lines.push(
      `        ${counts.rows.map((r) => `${r.status}${r.skip_reason ? ` ${r.skip_reason}` : ''} ${fmt(Number(r.n))}`).join(', ')}`,
    );
    lines.push(
      `      plain INSERT … SELECT of the same ${fmt(RECIPIENTS)} message rows into a scratch copy of messages: ${fmt(plainSeconds, 2)} s`,
    );
    lines.push(
      `      ratio plain/ours: ${fmt(ratio, 2)}x of its speed (for scale, no goal: paced by the hand-over) — ours also runs the gate, the plan, the price, a conversation per recipient and the recipient rows`,
    );
    lines.push(
      `      dispatch while it drains: ${fmt(dispatchRate)} messages/s to the carrier simulator over ${DRAIN_SAMPLE_SECONDS} s (sender limit ${fmt(sender.throughput_per_second)}/s; compare with (m2))`,
    );
    lines.push(
      `      handed over end to end (launch → the latest hand-over by the end of the drain sample): ${fmt(h1)} messages = ${fmt(endToEndRate)}/s (${goal(endToEndRate >= 5000, '≥ 5,000/s')}); exactly once: ${fmt(Number(once.rows))} carrier rows for ${fmt(h1)} handed, ${fmt(Number(once.repeated))} sent twice`,
    );
    const cpuSeconds = (k: 'api' | 'worker' | 'pg') => (cpuUsed.get(k === 'pg' ? 'PostgreSQL' : k) ?? 0) / USER_HZ;
    lines.push(
      `      CPU from launch to the end of the drain sample: API ${fmt(cpuSeconds('api'), 1)} s, worker ${fmt(cpuSeconds('worker'), 1)} s, PostgreSQL ${fmt(cpuSeconds('pg'), 1)} s = ${fmt(((cpuSeconds('api') + cpuSeconds('worker') + cpuSeconds('pg')) / Math.max(1, h1)) * 1e6)} µs per message handed over; load average ${fmt(load0, 2)} at launch, ${fmt(load1, 2)} at the end`,
    );
    lines.push(...statements);
    lines.push(
      `      saved by attributing per statement (migration 0059): the former per-row trigger on blast batches (${fmt(TRIGGER_BATCHES)} batches of ${fmt(BATCH_ROWS)} rows each way, alternating, sender in a program): with ${fmt(trigger.withTrigger, 2)} s, disabled ${fmt(trigger.without, 2)} s = ${fmt(trigger.withTrigger / trigger.without, 2)}x (${fmt(((trigger.withTrigger - trigger.without) / trigger.rows) * 1e6, 1)} µs per row)`,
    );
    const live = (xs: number[]) => (xs.length ? `${xs.map((x) => fmt(x)).join(' → ')} MB` : 'no full collection');
    lines.push(`      RSS API process: ${spread(rss.api)}`);
    lines.push(`        every 10 s: ${every10s(rss.api)}; live heap after each full GC: ${live(liveHeapAfterFullGc(apiLog))}`);
    lines.push(`      RSS worker process: ${spread(rss.worker)}`);
    lines.push(`        every 10 s: ${every10s(rss.worker)}; live heap after each full GC: ${live(liveHeapAfterFullGc(workerLog))}`);
    return lines;
  } finally {
    for (const child of stop) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db.destroy();
    rmSync(logs, { recursive: true, force: true });
  }
}
