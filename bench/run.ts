// `npm run bench`: every figure next to its baseline, in one run, with the ratios.
//  (a) start-up: spawn `node src/main.js` → first 200 from GET /health
//  (b) GET /v1/api-keys through the full stack vs. a bare node:http + pg server running the same SQL
//  (c) router matching cost with all operations loaded vs. one; ours (compiled) vs. openapi-backend's
//  (h) server RSS under stalled unauthenticated uploads, /health latency under polynomial-regex previews (bench/hostile-clients.ts),
//      and while bodies built to be slow to validate are refused: the largest arrays the body limit allows (bench/hostile-bodies.ts)
//      RSS and /health under 8 clients sending JSON-RPC batches to /mcp (bench/mcp-batches.ts)
//  (w) webhook deliveries per second to a local keep-alive receiver vs. bare signed POSTs (bench/webhooks-delivery.ts)
//  (d) contact CSV import of a ~10 MB, 150,000-row file vs. a plain load of the same rows (bench/contacts-import.ts)
//  (e) contact list/search and segment queries on 1,000,000 contacts of one organization (bench/contacts-queries.ts)
//  (s) the largest segment the document allows on 1,000,000 contacts, through the API's statement limits (bench/segments-worst.ts)
//  (m) sends per second through POST /v1/messages/send, and dispatch throughput to the simulator (bench/messaging.ts)
//  (i) dispatch throughput before and after part d's bulk import, in one run (bench/dispatch-import.ts)
//  (l) a 1,000,000-recipient blast: launch (< 300 ms), first hand-over (< 2 s), every message queued vs. a plain INSERT …
//      SELECT, hand-over rate (≥ 5,000/s, exactly once), the attribution trigger on blast batches on/off (bench/blasts.ts)
//  (r) analytics over 10,000,000 messages: rollup answers vs. the raw table; a 1,000,000-row export (bench/analytics.ts)
//  (x) mixed load: sends, a blast draining, an import, webhook deliveries and analytics reads at once, each rate next
//      to its figure alone; /health p99 meanwhile (bench/mixed.ts; `--seconds N` for the mixed phase, default 60)
import { cpuMsOf } from './process-cpu.ts';
import { sql } from 'kysely';
import { fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { OpenAPIRouter } from 'openapi-backend';
import { startEmbeddedPostgres } from '../src/db/postgres-server.ts';
import { createDb, migrateToLatest } from '../src/db/database.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { listOperations, loadDocument } from '../src/contract/document.ts';
import { CompiledRouter } from '../src/http/router.ts';
import { benchWebhookDeliveries } from './webhooks-delivery.ts';
import { benchHostileClients } from './hostile-clients.ts';
import { benchHostileBodies } from './hostile-bodies.ts';
import { benchMcpBatches, type BatchLoad } from './mcp-batches.ts';
import { benchContactImport } from './contacts-import.ts';
import { benchContactQueries } from './contacts-queries.ts';
import { benchWorstSegment } from './segments-worst.ts';
import { runMessagingBench } from './messaging.ts';
import { benchDispatchAfterImport } from './dispatch-import.ts';
import { benchBlasts } from './blasts.ts';
import { benchAnalytics } from './analytics.ts';
import { benchMixed } from './mixed.ts';

const PARTS = ['a', 'b', 'c', 'h', 'w', 'd', 'e', 's', 'm', 'i', 'l', 'r', 'x'] as const;
type Part = (typeof PARTS)[number];
const USAGE = `npm run bench [-- --only <parts>]

Every figure next to its baseline, in one run, with the ratios. Parts (default: all):
  a  start-up to the first /health 200          b  authenticated GET vs. bare node:http + pg
  c  router matching cost                       h  hostile clients (stalled uploads, polynomial regex, huge arrays, /mcp batches)
  w  webhook deliveries vs. bare signed POSTs   d  contact CSV import vs. a plain load
  e  queries at 1,000,000 contacts              s  the largest segment allowed, 1,000,000 contacts
  m  sends per second and dispatch throughput   l  a 1,000,000-recipient blast
  r  analytics over 10,000,000 messages        x  mixed load, each rate next to its figure alone
  i  dispatch before and after a bulk import
Options: --seconds N (part x's mixed phase, default 60). BENCH_B_COMPARE=<dir>: part b also runs the full stack of
  another checkout (main's) in the same alternating rounds. BENCH_A_COMPARE=<dir>: part a also starts another
  checkout, alternating with this one; BENCH_A_STARTS: starts per side (5, or 11 with BENCH_A_COMPARE).
Environment: BENCH_SECONDS (5), BENCH_CONNECTIONS (20), BENCH_ROUNDS (3), BENCH_NOTE,
  BENCH_STATEMENTS=1 (load pg_stat_statements; parts i, m1, m2 and l print the statements that took the database's time),
  BENCH_BLAST_RECIPIENTS (part l, 1,000,000), BENCH_CPU_PROF=<dir> (part l: the worker's V8 CPU profile; part m1: the API's).
  BENCH_M_COMPARE=<dir>: part m1 also runs the API of another checkout (main's) in the same alternating rounds (it
  must accept this checkout's migrations: a branch with a migration main lacks is compared in separate runs).
  BENCH_M2=0: part m stops after m1.
A figure that misses its goal is marked ✗ MISSED.`;

function selectedParts(argv: string[]): Set<Part> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  const i = argv.indexOf('--only');
  if (i === -1) return new Set(PARTS);
  const wanted = (argv[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = wanted.filter((w) => !PARTS.includes(w as Part));
  if (wanted.length === 0 || unknown.length) {
    console.error(`unknown part(s) ${unknown.join(', ') || '(none given)'}\n\n${USAGE}`);
    process.exit(2);
  }
  // (h) runs against the server of (b); (m) compares with (b)'s baseline.
  return new Set([...(wanted as Part[]), ...(wanted.includes('h') || wanted.includes('m') ? (['b'] as Part[]) : [])]);
}

const parts = selectedParts(process.argv.slice(2));

/** The goal after a figure, marked met or missed. */
const goal = (met: boolean, text: string) => (met ? `goal ${text} ✓` : `✗ MISSED goal ${text}`);

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

async function waitFor(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${url} did not answer 200 in ${timeoutMs} ms`);
}

async function load(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'msa-bench-'));
  const pgServer = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    ...(process.env.BENCH_STATEMENTS === '1'
      ? { settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' } }
      : {}),
  });
  const children: Array<{ kill: () => void }> = [];
  // Interrupted (Ctrl-C, SIGTERM): stop the children and the database, remove the temporary cluster.
  let cleaning = false;
  const cleanUp = async () => {
    if (cleaning) return;
    cleaning = true;
    for (const c of children) c.kill();
    await pgServer.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void cleanUp().then(() => process.exit(130));
    });
  }
  try {
    const { db } = createDb(pgServer.url, 2);
    await migrateToLatest(db as never);
    if (process.env.BENCH_STATEMENTS === '1') await sql`create extension if not exists pg_stat_statements`.execute(db);
    const org = await createOrganization(db, loadDocument(), 'Bench org');
    for (let i = 0; i < 9; i++) await createOrganization(db, loadDocument(), `Noise org ${i}`);
    await db.destroy();
    const env = { ...process.env, DATABASE_URL: pgServer.url, NODE_ENV: 'production', LOG_LEVEL: 'info', RUN_WORKERS: '1' };
    // After a part that writes millions of rows, the database settles before the next part: vacuumed, analyzed and
    // checkpointed now, so autovacuum and the checkpointer do not run during (and get measured in) the next part.
    const settle = async () => {
      const { db: admin } = createDb(pgServer.url, 1);
      try {
        await sql`vacuum (analyze)`.execute(admin);
        await sql`checkpoint`.execute(admin);
      } finally {
        await admin.destroy();
      }
    };

    console.log(
      `\nbenchmark (${CONNECTIONS} connections, Node ${process.version}, ${process.env.BENCH_NOTE ?? 'shared machine'}; parts ${[...parts].join(', ')})\n`,
    );

    if (parts.has('a')) {
      // Wall time is what the goal is about; on a shared machine it mostly measures the other processes, so the
      // child's own CPU time to its first 200 (Linux: /proc/<pid>/stat) and the load average are printed with it.
      // BENCH_A_COMPARE=<dir>: another checkout (main's) is started in the same alternating rounds, on this database.
      const compareDir = process.env.BENCH_A_COMPARE;
      const starts = Number(process.env.BENCH_A_STARTS ?? (compareDir ? 11 : 5));
      const startOnce = async (cwd: string | undefined) => {
        const port = await freePort();
        const t0 = performance.now();
        // A checkout from before the entry was JavaScript starts from src/main.ts.
        const entry = cwd && !existsSync(join(cwd, 'src/main.js')) ? 'src/main.ts' : 'src/main.js';
        const child = spawn(process.execPath, [entry], { cwd, env: { ...env, PORT: String(port) }, stdio: 'ignore' });
        await waitFor(`http://127.0.0.1:${port}/health`);
        const wall = performance.now() - t0;
        const cpu = cpuMsOf(child.pid!);
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        return { wall, cpu };
      };
      const sides = { here: { wall: [] as number[], cpu: [] as number[] }, other: { wall: [] as number[], cpu: [] as number[] } };
      const loadBefore = loadavg()[0]!;
      for (let i = 0; i < starts; i++) {
        const order: Array<['here' | 'other', string | undefined]> = [
          ['here', undefined],
          ...(compareDir ? [['other', compareDir] as ['other', string]] : []),
        ];
        for (const [side, cwd] of order) {
          const { wall, cpu } = await startOnce(cwd);
          sides[side].wall.push(wall);
          if (cpu !== undefined) sides[side].cpu.push(cpu);
        }
      }
      const loadAfter = loadavg()[0]!;
      const startup = median(sides.here.wall);
      console.log(
        `(a) start-up to first 200 from /health: median ${fmt(startup)} ms of ${sides.here.wall.map((s) => fmt(s)).join(', ')} ms (the first start also creates pg-boss's schema; ${goal(startup < 500, '< 500 ms (issue 38)')})`,
      );
      const cpus = sides.here.cpu;
      if (cpus.length > 0)
        console.log(
          `      CPU time of the server process to that 200: median ${fmt(median(cpus))} ms of ${cpus.map((c) => fmt(c)).join(', ')} ms; load average ${fmt(loadBefore, 1)} → ${fmt(loadAfter, 1)}`,
        );
      if (compareDir) {
        const other = sides.other;
        console.log(
          `      ${compareDir}, in the same alternating rounds: median ${fmt(median(other.wall))} ms of ${other.wall.map((s) => fmt(s)).join(', ')} ms${other.cpu.length > 0 ? `; CPU median ${fmt(median(other.cpu))} ms of ${other.cpu.map((c) => fmt(c)).join(', ')} ms` : ''}`,
        );
      }
    }

    // (b) full stack vs. bare baseline, each in its own process; (h) uses the same full-stack process.
    let baselineRps: number | undefined;
    if (parts.has('b')) {
      const fullPort = await freePort();
      const full = spawn(process.execPath, ['src/main.js'], { env: { ...env, PORT: String(fullPort) }, stdio: 'ignore' });
      children.push(full);
      await waitFor(`http://127.0.0.1:${fullPort}/health`);
      const basePort = await freePort();
      const base = fork('bench/baseline-server.ts', [], {
        env: { ...env, PORT: String(basePort), BENCH_ORG_ID: org.organizationId },
        stdio: 'ignore',
      });
      children.push(base);
      await new Promise((r) => base.once('message', r));

      // Alternating rounds, medians: both sides see the same machine noise.
      const auth = { authorization: `Bearer ${org.apiKey.secret}` };
      const fullUrl = `http://127.0.0.1:${fullPort}/v1/api-keys`;
      const baseUrl = `http://127.0.0.1:${basePort}/v1/api-keys`;
      // BENCH_B_COMPARE: the same full stack from another checkout (its own src/, this one's database), in the same
      // rounds, so a change is measured against what it changes on the same machine noise.
      const compareDir = process.env.BENCH_B_COMPARE;
      let compareUrl: string | undefined;
      let compare: ReturnType<typeof spawn> | undefined;
      if (compareDir) {
        const comparePort = await freePort();
        compare = spawn(process.execPath, ['src/main.js'], {
          cwd: compareDir,
          env: { ...env, PORT: String(comparePort) },
          stdio: 'ignore',
        });
        children.push(compare);
        await waitFor(`http://127.0.0.1:${comparePort}/health`);
        compareUrl = `http://127.0.0.1:${comparePort}/v1/api-keys`;
      }
      // With the load, each server's CPU time per request (/proc): on a shared machine the rates follow the other
      // processes, the CPU a request costs much less so.
      const measured = async (url: string, headers: Record<string, string>, pid: number | undefined) => {
        const before = pid === undefined ? undefined : cpuMsOf(pid);
        const result = await load(url, headers);
        const after = pid === undefined ? undefined : cpuMsOf(pid);
        const requests = result.rps * DURATION;
        return { ...result, cpuUs: before === undefined || after === undefined ? NaN : ((after - before) * 1000) / requests };
      };
      await load(fullUrl, auth); // warm-up
      if (compareUrl) await load(compareUrl, auth);
      await load(baseUrl, {});
      type Run = { rps: number; p99: number; cpuUs: number };
      const fullRuns: Run[] = [];
      const compareRuns: Run[] = [];
      const baseRuns: Run[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        fullRuns.push(await measured(fullUrl, auth, full.pid));
        if (compareUrl) compareRuns.push(await measured(compareUrl, auth, compare!.pid));
        baseRuns.push(await measured(baseUrl, {}, base.pid));
      }
      const summary = (runs: Run[]) => ({
        rps: median(runs.map((r) => r.rps)),
        p99: median(runs.map((r) => r.p99)),
        cpuUs: median(runs.map((r) => r.cpuUs)),
      });
      const fullResult = summary(fullRuns);
      const baseResult = summary(baseRuns);
      baselineRps = baseResult.rps;
      const ratio = (fullResult.rps / baseResult.rps) * 100;
      const cpu = (r: { cpuUs: number }) => (Number.isNaN(r.cpuUs) ? '' : `, ${fmt(r.cpuUs)} µs of CPU per request`);
      console.log(`(b) GET /v1/api-keys, median of ${ROUNDS} alternating ${DURATION}s rounds (load average ${fmt(loadavg()[0]!, 1)})`);
      console.log(
        `      full stack (auth, routing, validation, response check off in production, pino): ${fmt(fullResult.rps)} req/s, p99 ${fullResult.p99} ms${cpu(fullResult)}`,
      );
      console.log(
        `      bare node:http + pg, same SQL:                                                   ${fmt(baseResult.rps)} req/s, p99 ${baseResult.p99} ms${cpu(baseResult)}`,
      );
      console.log(`      ratio full/bare: ${fmt(ratio, 1)}% (${goal(ratio >= 60, '≥ 60% (issue 13)')})`);
      if (compareDir) {
        const other = summary(compareRuns);
        console.log(
          `      full stack of ${compareDir}: ${fmt(other.rps)} req/s, p99 ${other.p99} ms${cpu(other)}; ratio ${fmt((other.rps / baseResult.rps) * 100, 1)}% of bare`,
        );
        console.log(
          `      per round, this checkout / the other / bare: ${fullRuns.map((r, i) => `${fmt(r.rps)} / ${fmt(compareRuns[i]!.rps)} / ${fmt(baseRuns[i]!.rps)}`).join('; ')}`,
        );
      }

      if (parts.has('h')) {
        const hostile = await benchHostileClients({ baseUrl: `http://127.0.0.1:${fullPort}`, pid: full.pid!, apiKey: org.apiKey.secret });
        const grown = hostile.stalledRss - hostile.idleRss;
        const cost = hostile.withRule.health.p99 / hostile.withoutRule.health.p99;
        console.log(`(h) hostile clients vs. the same server process`);
        console.log(
          `      RSS idle ${fmt(hostile.idleRss)} MB → ${fmt(hostile.stalledRss)} MB with 100 unauthenticated 9.9 MB uploads stalled (+${fmt(grown, 1)} MB; each answered 401 on its headers) → ${fmt(hostile.afterRss)} MB after (${goal(grown < 20, '< +20 MB')})`,
        );
        console.log(`      GET /health idle: p50 ${fmt(hostile.idleHealth.p50, 2)} ms, p99 ${fmt(hostile.idleHealth.p99, 2)} ms`);
        console.log(
          `      GET /health during 100 concurrent previews (content rules run), no regex rule: p50 ${fmt(hostile.withoutRule.health.p50, 2)} ms, p99 ${fmt(hostile.withoutRule.health.p99, 2)} ms (${fmt(hostile.withoutRule.previewsPerSecond)} previews/s)`,
        );
        console.log(
          `      the same with a polynomial rule \`(\\w*)*y\` (${hostile.ruleAccepted ? 'accepted' : 'REFUSED'}) on 1,600 characters: p50 ${fmt(hostile.withRule.health.p50, 2)} ms, p99 ${fmt(hostile.withRule.health.p99, 2)} ms (${fmt(hostile.withRule.previewsPerSecond)} previews/s) → p99 with/without the rule ${fmt(cost, 2)}x (${goal(cost < 2, '< 2x')})`,
        );
        const bodies = await benchHostileBodies({
          baseUrl: `http://127.0.0.1:${fullPort}`,
          apiKey: org.apiKey.secret,
          senderId: org.senderId,
        });
        console.log(
          `      ${bodies.bodies} bodies (${fmt(bodies.megabytes)} MB) with the largest array the body limit allows, one per array of every JSON request body (statuses ${bodies.statuses.join(', ')}): median ${fmt(bodies.median, 1)} ms each`,
        );
        console.log(
          `      worst body under the limit: ${bodies.worst.what}, ${fmt(bodies.worst.bytes / 1e6, 2)} MB, answered ${bodies.worst.status} in ${fmt(bodies.worst.ms)} ms (${goal(bodies.worst.ms < 1000, '< 1000 ms')})`,
        );
        for (const t of bodies.issue) console.log(`      ${t.what} (${fmt(t.bytes / 1e3)} KB): ${t.status} in ${fmt(t.ms, 1)} ms`);
        console.log(
          `      GET /health while they were validated: p50 ${fmt(bodies.health.p50, 2)} ms, p99 ${fmt(bodies.health.p99, 2)} ms, max ${fmt(bodies.health.max)} ms over ${bodies.health.n} polls (${goal(bodies.health.p99 < 1000, 'p99 < 1000 ms')})`,
        );
        const mcp = await benchMcpBatches({ baseUrl: `http://127.0.0.1:${fullPort}`, pid: full.pid!, apiKey: org.apiKey.secret });
        // The issue's goals are for the 100-message batches; batches at the cap are answered, and 8 clients sending
        // them back to back keep the CPU busy as any other heavy request would (compare the previews above).
        const batchLine = (what: string, l: BatchLoad, goals: boolean) => {
          const grown = l.peakRss - mcp.idleRss;
          const statuses = Object.entries(l.statuses)
            .map(([status, n]) => `${fmt(n)}× ${status}`)
            .join(', ');
          const health = `/health p50 ${fmt(l.health.p50, 1)} ms, p99 ${fmt(l.health.p99, 1)} ms, max ${fmt(l.health.max, 1)} ms`;
          return `      8 clients sending ${what} for 3 s: ${statuses} (${fmt(l.batchesPerSecond)} batches/s, largest answer ${fmt(l.answerBytes / 1024, 1)} KiB); peak RSS ${fmt(l.peakRss)} MB (+${fmt(grown)} MB${goals ? `, ${goal(grown < 300, '< +300 MB')}` : ''}); ${health}${goals ? ` (${goal(l.health.p99 < 100, 'p99 < 100 ms')})` : ''}`;
        };
        console.log(`      POST /mcp JSON-RPC batches of tools/list, RSS idle ${fmt(mcp.idleRss)} MB:`);
        console.log(batchLine('100-message batches', mcp.refused, true));
        console.log(batchLine(`${mcp.atCap.messages}-message batches (the cap)`, mcp.atCap, false));
        console.log(`      RSS after: ${fmt(mcp.afterRss)} MB`);
      }
      // The servers above stop before (w): their workers would take those jobs (and refuse the loopback receiver).
      for (const child of [full, base, ...(compare ? [compare] : [])]) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }

    if (parts.has('c')) {
      const doc = loadDocument();
      const all = listOperations(doc);
      const one = all.filter((o) => o.path === '/v1/contacts/{id}/consent');
      const probe = { method: 'get', path: '/v1/contacts/3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b/consent' };
      // Best of 5 trials: the least-disturbed measurement of the same work.
      const perMatch = (match: () => unknown, n: number) => {
        for (let i = 0; i < Math.min(n, 1000); i++) match();
        let best = Infinity;
        for (let trial = 0; trial < 5; trial++) {
          const t0 = process.hrtime.bigint();
          for (let i = 0; i < n; i++) match();
          best = Math.min(best, Number(process.hrtime.bigint() - t0) / n / 1000); // µs
        }
        return best;
      };
      const compiledAll = new CompiledRouter(all as never);
      const compiledOne = new CompiledRouter(one as never);
      const pathsOf = (ops: typeof all) => {
        const paths: Record<string, Record<string, unknown>> = {};
        for (const o of ops) (paths[o.path] ??= {})[o.method] = doc.paths[o.path]![o.method];
        return { ...doc, paths };
      };
      const obAll = new OpenAPIRouter({ definition: pathsOf(all) as never });
      const obOne = new OpenAPIRouter({ definition: pathsOf(one) as never });
      const r = {
        compiledAll: perMatch(() => compiledAll.match(probe.method, probe.path), 200_000),
        compiledOne: perMatch(() => compiledOne.match(probe.method, probe.path), 200_000),
        obAll: perMatch(() => obAll.matchOperation(probe as never), 200),
        obOne: perMatch(() => obOne.matchOperation(probe as never), 20_000),
      };
      console.log(`(c) router match of GET /v1/contacts/{id}/consent`);
      console.log(
        `      compiled router: ${fmt(r.compiledAll, 2)} µs with ${all.length} operations, ${fmt(r.compiledOne, 2)} µs with 1 → ratio ${fmt(r.compiledAll / r.compiledOne, 2)}x`,
      );
      console.log(
        `      openapi-backend: ${fmt(r.obAll, 1)} µs with ${all.length} operations, ${fmt(r.obOne, 1)} µs with 1 → ratio ${fmt(r.obAll / r.obOne, 1)}x`,
      );
      console.log(`      compiled vs. openapi-backend with all operations: ${fmt(r.obAll / r.compiledAll, 0)}x faster`);
    }

    if (parts.has('w')) {
      const wh = await benchWebhookDeliveries(pgServer.url);
      console.log(
        `(w) webhook deliveries to a local keep-alive receiver, ${fmt(wh.deliveries)} events (emitted in batches of 100 in ${fmt(wh.emitMs)} ms)`,
      );
      console.log(`      engine as registered (emitEvents → pg-boss → signed POST → attempt recorded): ${fmt(wh.engine)} deliveries/s`);
      console.log(`      bare signed POSTs, keep-alive agent, 50 in flight, no queue or database:     ${fmt(wh.bare)} deliveries/s`);
      console.log(
        `      ratio engine/bare: ${fmt((wh.engine / wh.bare) * 100, 1)}% (${goal(wh.engine / wh.bare >= 0.5, '≥ 50% (issue 13)')})`,
      );
    }

    if (parts.has('d')) {
      const imp = await benchContactImport(pgServer.url);
      console.log(
        `(d) contact CSV import, ${fmt(imp.bytes / 1024 / 1024, 1)} MB, ${fmt(imp.rows)} rows (${fmt(imp.imported)} created, ${fmt(imp.errors)} rejected rows reported), worker called directly`,
      );
      console.log(
        `      import (stored upload → csv-parse stream → validation → per batch: new contacts, tag links, consent entries COPY'd in; existing ones COPY'd to staging → one merge): ${fmt(imp.importSeconds, 2)} s, ${fmt(imp.rows / imp.importSeconds)} rows/s (${goal(imp.importSeconds < 5, '< 5 s')})`,
      );
      const cost = (c: typeof imp.importCost) =>
        `CPU ${fmt(c.nodeCpuSeconds, 2)} s in this process + ${c.postgresCpuSeconds === null ? 'n/a' : fmt(c.postgresCpuSeconds, 2)} s in PostgreSQL, WAL ${fmt(c.walBytes / imp.rows)} B/row`;
      console.log(
        `        ${cost(imp.importCost)}; load ${loadavg()
          .map((l) => fmt(l, 2))
          .join(' ')}`,
      );
      console.log(
        `      same file again (every row matches an existing contact, nothing to change):                 ${fmt(imp.reimportSeconds, 2)} s, ${fmt(imp.rows / imp.reimportSeconds)} rows/s`,
      );
      console.log(`        ${cost(imp.reimportCost)}`);
      console.log(
        `      plain COPY of what the import stored (${fmt(imp.imported)} contacts, ${fmt(imp.links)} tag links, ${fmt(imp.consentEntries)} consent entries; pg-copy-streams, COPY text built beforehand):`,
      );
      console.log(
        `        into three tables without indexes (scale only): ${fmt(imp.plainSeconds, 2)} s → import/plain speed ${fmt(imp.plainSeconds / imp.importSeconds, 2)}x`,
      );
      const vsIndexed = imp.indexedSeconds / imp.importSeconds;
      console.log(
        `        into contacts, contact_tags, consent_events (their indexes and foreign keys; the goal's reference): ${fmt(imp.indexedSeconds, 2)} s → import/COPY speed ${fmt(vsIndexed, 2)}x (${goal(vsIndexed >= 0.3, '≥ 0.3x')})`,
      );
      await settle();
    }

    if (parts.has('e')) {
      const qs = await benchContactQueries(pgServer.url);
      console.log(
        `(e) queries on ${fmt(qs.contacts)} contacts of one organization (seeded in ${fmt(qs.seedSeconds, 1)} s), median of 5 after a warm-up, page of 20 + total count`,
      );
      for (const [title, rows] of [
        ['listContacts', qs.list],
        ['previewSegment (count + 10 newest + their tags/opt-outs)', qs.segments],
      ] as const) {
        console.log(`      ${title}`);
        for (const t of rows) {
          const access = t.indexOnly ? 'indexes' : 'SEQ SCAN';
          console.log(
            `        ${t.label.padEnd(44)} ${fmt(t.ms, 1).padStart(8)} ms  ${fmt(t.rows).padStart(9)} matching  ${access.padEnd(8)}  ${t.plan}`,
          );
          if (t.scanBecause) console.log(`${' '.repeat(10)}↳ scan: ${t.scanBecause}`);
        }
      }
      const slowest = Math.max(...qs.segments.map((t) => t.ms));
      const unexplained = qs.segments.filter((t) => !t.indexOnly && !t.scanBecause).map((t) => t.label);
      console.log(
        `      segment previews: slowest ${fmt(slowest, 1)} ms (${goal(slowest <= 250, '≤ 250 ms')}); scans without a reason: ${unexplained.join(', ') || 'none'} (${goal(unexplained.length === 0, 'none')})`,
      );
      await settle();
    }

    if (parts.has('m')) {
      const messaging = await runMessagingBench({
        databaseUrl: pgServer.url,
        organizationId: org.organizationId,
        apiKey: org.apiKey.secret,
        env: { ...env, RUN_WORKERS: '0', LOG_LEVEL: 'warn' },
        freePort,
        waitFor,
        children,
        baselineRps: baselineRps!,
        seconds: DURATION,
        connections: CONNECTIONS,
        rounds: ROUNDS,
      });
      for (const line of messaging) console.log(line);
    }

    // Parts that bring their own organization and data: they get the database and the environment of the run.
    const own = { databaseUrl: pgServer.url, env, freePort, waitFor, children, rounds: ROUNDS };
    if (parts.has('s')) {
      for (const line of await benchWorstSegment(own)) console.log(line);
      await settle();
    }
    if (parts.has('l')) {
      for (const line of await benchBlasts(own)) console.log(line);
      await settle();
    }
    if (parts.has('i')) for (const line of await benchDispatchAfterImport(own, settle)) console.log(line);
    if (parts.has('r')) for (const line of await benchAnalytics(own)) console.log(line);
    if (parts.has('x')) {
      const i = process.argv.indexOf('--seconds');
      for (const line of await benchMixed(own, i === -1 ? 60 : Number(process.argv[i + 1]))) console.log(line);
    }
  } finally {
    await cleanUp();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
