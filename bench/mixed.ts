// Part (x) of `npm run bench` (bench/run.ts, issue 38 item 2): the loads a deployment carries at once.
// One API process (RUN_WORKERS=0) and one worker process, as the README deploys them, carry five loads, each in an
// organization of its own (so one sender's throughput limit does not throttle another load):
//   sends      POST /v1/messages/send, autocannon, SEND_CONNECTIONS connections (accepted sends/s)
//   blast      a 100,000-recipient blast launched through the API and drained by the worker (messages handed to the
//              carrier per second, launch to the last one handed over or the end of the window)
//   import     a 150,000-row CSV uploaded to POST /v1/contacts/import, run by the worker (rows/s, upload to completed)
//   webhooks   events emitted in batches of 100 (as a receipt worker does), delivered by the worker to a local
//              keep-alive receiver (deliveries received/s)
//   analytics  GET /v1/analytics/overview of the sending organization, autocannon, READ_CONNECTIONS connections
// First each load alone for ALONE seconds (the blast and the import: their whole run, up to the window), then all
// five at once for `seconds` (60 by default, `--seconds N`). Each mixed rate is printed next to its figure alone
// with the ratio (goal ≥ 50 %), and GET /health is polled every 50 ms during the mixed phase (goal p99 < 100 ms) from a
// process of its own (bench/health-poller.ts), while the API process reports its event-loop delay (bench/loop-delay.ts).
// pg_stat_activity is sampled every second of the mixed phase: the most frequent wait events of active sessions
// show where the time goes when a goal is missed. The service's CPU use (API, worker, PostgreSQL and the load
// generators, from /proc) is measured over each load alone and over the mixed phase, as a share of the machine:
// a mixed phase that leaves CPU idle is limited by something else (the sampled waits say what).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { loadDocument } from '../src/contract/document.ts';
import { createDb, type Db } from '../src/db/database.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { emitEvents } from '../src/domain/webhooks/events.ts';
import { startQueue, type JobQueue } from '../src/jobs/queue.ts';
import { seedContacts } from './blasts.ts';
import { generateCsv } from './contacts-import.ts';
import type { OwnDataBench } from './own-data.ts';
import type { PollerReport } from './health-poller.ts';
import type { LoopDelayReport } from './loop-delay.ts';
import { watchMachine } from './machine-pressure.ts';
import { postmasterOf } from './process-cpu.ts';
import { startReceiver } from './webhooks-delivery.ts';

const BLAST_RECIPIENTS = Number(process.env.BENCH_MIXED_RECIPIENTS ?? 100_000);
const IMPORT_ROWS = Number(process.env.BENCH_MIXED_IMPORT_ROWS ?? 150_000);
const SEND_CONNECTIONS = 10;
const READ_CONNECTIONS = 4;
/** Undelivered events the feeder keeps ahead of the receiver: enough that the worker never waits for work. */
const WEBHOOK_BACKLOG = 2_000;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

type Org = Awaited<ReturnType<typeof createOrganization>>;
type Rates = { sends: number; blast: number; import: number; webhooks: number; analytics: number };

async function api<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The loads, each against the organization it was given; every function runs for about `seconds` and returns its rate. */
function loads(base: string, db: Db, queue: JobQueue, orgs: { sends: Org; webhooks: Org }, contactIds: string[]) {
  const sends = async (seconds: number) => {
    let n = 0;
    const result = await autocannon({
      url: `${base}/v1/messages/send`,
      method: 'POST',
      connections: SEND_CONNECTIONS,
      duration: seconds,
      headers: { authorization: `Bearer ${orgs.sends.apiKey.secret}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              contactId: contactIds[n++ % contactIds.length],
              messageType: 'TRANSACTIONAL',
              content: { type: 'text', text: 'Your order has shipped and arrives Thursday.' },
            }),
          }),
        },
      ],
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`sends: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result.requests.average;
  };

  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const analytics = async (seconds: number) => {
    const result = await autocannon({
      url: `${base}/v1/analytics/overview?granularity=day&startDate=${monthAgo}&endDate=${today}`,
      connections: READ_CONNECTIONS,
      duration: seconds,
      headers: { authorization: `Bearer ${orgs.sends.apiKey.secret}` },
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`analytics: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result.requests.average;
  };

  const webhooks = async (seconds: number, received: () => number) => {
    const example = (loadDocument() as any).components.schemas.MessageDeliveredWebhookEvent.examples[0].data;
    const start = received();
    let emitted = 0;
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    while (performance.now() < end) {
      if (emitted - (received() - start) < WEBHOOK_BACKLOG) {
        await emitEvents(
          db,
          queue,
          Array.from({ length: 100 }, () => ({
            organizationId: orgs.webhooks.organizationId,
            type: 'message.delivered' as const,
            data: { ...example, messageId: crypto.randomUUID() },
          })),
        );
        emitted += 100;
      } else await sleep(20);
    }
    return (received() - start) / ((performance.now() - t0) / 1000);
  };

  /** A blast to every contact of `org` (seeded beforehand); rate = handed to the carrier / (launch → last one, capped). */
  const blast = async (org: Org, seconds: number) => {
    const key = org.apiKey.secret;
    const segment = await api<{ data: { segmentId: string } }>(base, key, 'POST', '/v1/segments/resolve', {
      conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: 'bench' }],
    });
    const created = await api<{ id: string }>(base, key, 'POST', '/v1/blasts', {
      name: 'Mixed load',
      senderId: org.senderId,
      messageType: 'MARKETING',
      contentJson: { type: 'text', text: 'Winter sale: 30% off every jacket this weekend. Reply STOP to opt out.' },
      segmentId: segment.data.segmentId,
    });
    const launchedAt = new Date();
    await api(base, key, 'POST', `/v1/blasts/${created.id}/launch`, {});
    const end = Date.now() + seconds * 1000;
    const counts = async () =>
      (
        await sql<{ sent: string; left: string; last: Date | null }>`
          select count(*) filter (where sent_at is not null) as sent,
                 count(*) filter (where status in ('queued', 'sending')) as left,
                 max(sent_at) as last
          from messages where organization_id = ${org.organizationId}::uuid and origin = 'blast'`.execute(db)
      ).rows[0]!;
    const pending = async () =>
      (
        await sql<{ left: boolean }>`select (select audience_done_at is null from blasts where id = ${created.id}::uuid)
            or (select 1 from blast_recipients where blast_id = ${created.id}::uuid and status = 'pending' order by batch desc limit 1) is not null as left`.execute(
          db,
        )
      ).rows[0]!.left;
    let c = await counts();
    // Polled every 2 s, as part l polls (newest batches first): counting 100,000 rows every 250 ms cost the database a
    // quarter of a session, measured here in the mixed phase.
    while (Date.now() < end && ((await pending()) || Number(c.left) > 0)) {
      await sleep(Math.min(2000, Math.max(0, end - Date.now())));
      c = await counts();
    }
    const last = c.last ? Math.min(new Date(c.last).getTime(), end) : Date.now();
    const rate = Number(c.sent) / ((last - launchedAt.getTime()) / 1000);
    // What the window left is cancelled by the caller once the phase is measured, and the cancel waited for: its
    // revocations belong to neither phase.
    const cancel = async () => {
      if (!((await pending()) || Number(c.left) > 0)) return;
      await api(base, key, 'POST', `/v1/blasts/${created.id}/cancel`, {}).catch(() => undefined);
      for (let i = 0; i < 600 && ((await pending()) || Number((c = await counts()).left) > 0); i++) await sleep(250);
    };
    return { rate, cancel };
  };

  /** One CSV upload into `org` through the API, polled until its job ends. */
  const importFile = async (org: Org, csv: Buffer, deadline: number) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(csv)], { type: 'text/csv' }), 'mixed.csv');
    const res = await fetch(`${base}/v1/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey.secret}` },
      body: form,
    });
    const job = (await res.json()) as { jobId: string };
    if (res.status !== 202) throw new Error(`import: ${res.status} ${JSON.stringify(job)}`);
    for (;;) {
      const state = await api<{ status: string }>(base, org.apiKey.secret, 'GET', `/v1/contacts/import/${job.jobId}`);
      if (state.status === 'completed') return;
      if (state.status === 'failed' || Date.now() > deadline) throw new Error(`import job ${job.jobId} is ${state.status}`);
      await sleep(100);
    }
  };
  /** The import's files uploaded at once into `org`; rate = their rows / (upload → every job completed). */
  const importRows = async (org: Org, files: Buffer[], seconds: number) => {
    const t0 = performance.now();
    const deadline = Date.now() + Math.max(seconds, 120) * 1000;
    await Promise.all(files.map((f) => importFile(org, f, deadline)));
    const taken = (performance.now() - t0) / 1000;
    return { rate: IMPORT_ROWS / taken, seconds: taken };
  };
  return { sends, analytics, webhooks, blast, importRows };
}

/** Sessions the database has opened so far (pg_stat_database.sessions, PostgreSQL 14 and later). */
async function sessionsOpened(db: Db): Promise<number> {
  const { rows } = await sql<{ n: string }>`select sessions::text as n from pg_stat_database where datname = current_database()`.execute(
    db,
  );
  return Number(rows[0]?.n ?? 0);
}

/** The commonest (state, wait event) of active sessions other than this sampler, over the samples. */
function sampleActivity(db: Db) {
  const seen = new Map<string, number>();
  let samples = 0;
  const timer = setInterval(() => {
    void sql<{ what: string; n: string }>`
      select coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait)') || ' — ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as what,
             count(*) as n
      from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'
      group by 1`
      .execute(db)
      .then(({ rows }) => {
        samples++;
        for (const r of rows) seen.set(r.what, (seen.get(r.what) ?? 0) + Number(r.n));
      })
      .catch(() => undefined);
  }, 1000);
  return {
    stop: () => clearInterval(timer),
    top: (n: number) =>
      [...seen.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([what, count]) => `${fmt(count / Math.max(1, samples), 2)} sessions avg  ${what}`),
  };
}

/** GET /health every 50 ms from a process of its own (bench/health-poller.ts) until stopped. */
function pollHealth(base: string) {
  const child = fork(new URL('./health-poller.ts', import.meta.url), [base], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const report = new Promise<PollerReport>((resolve, reject) => {
    child.once('message', (m) => resolve(m as PollerReport));
    child.once('exit', (code) => reject(new Error(`the /health poller exited (${code}) without its report`)));
  });
  return {
    child,
    stop: async () => {
      child.send('stop');
      return report;
    },
  };
}

/** The API process's event-loop delay over a window, read from bench/loop-delay.ts loaded into it. */
function loopDelayOf(child: ChildProcess) {
  return {
    reset: () => child.send('loop-delay:reset'),
    read: () =>
      new Promise<LoopDelayReport>((resolve) => {
        child.once('message', (m) => resolve(m as LoopDelayReport));
        child.send('loop-delay:read');
      }),
  };
}

export async function benchMixed(ctx: OwnDataBench, seconds: number): Promise<string[]> {
  const { db } = createDb(ctx.databaseUrl, 4);
  const lines: string[] = [];
  const stop: ChildProcess[] = [];
  const receiver = await startReceiver();
  let queue: JobQueue | undefined;
  try {
    const document = loadDocument();
    const org = (name: string) => createOrganization(db, document, name);
    const [sendsOrg, webhooksOrg, blastAlone, blastMixed, importAlone, importMixed] = [
      await org('Mixed sends'),
      await org('Mixed webhooks'),
      await org('Mixed blast alone'),
      await org('Mixed blast'),
      await org('Mixed import alone'),
      await org('Mixed import'),
    ];
    const seedStart = performance.now();
    await seedContacts(db, blastAlone.organizationId, BLAST_RECIPIENTS);
    await seedContacts(db, blastMixed.organizationId, BLAST_RECIPIENTS);
    // The sending organization: 2,000 contacts with consent (no sandbox magic suffix), as part m seeds them.
    await sql`insert into contacts (organization_id, phone, attributes, rcs_capable, consent_type)
      select ${sendsOrg.organizationId}::uuid, '+1628' || (300000 + g)::text || case when g % 2 = 0 then '1' else '8' end, '{}', g % 2 = 0, 'MARKETING'
      from generate_series(0, 1999) g`.execute(db);
    const contactIds = (await db.selectFrom('contacts').select('id').where('organization_id', '=', sendsOrg.organizationId).execute()).map(
      (r) => r.id,
    );
    // The 150,000-row file is 10.1 MB, over the import's 10 MB upload limit: it goes as two files of half the rows
    // each (the same rows, each file with the header), uploaded at once, as an operator splitting it would.
    const [header, ...csvRows] = generateCsv(IMPORT_ROWS).toString().trimEnd().split('\n');
    const half = Math.ceil(csvRows.length / 2);
    const files = [csvRows.slice(0, half), csvRows.slice(half)].map((part) => Buffer.from([header, ...part].join('\n') + '\n'));

    const port = await ctx.freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { ...ctx.env, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1' };
    // bench/loop-delay.ts loaded into the API process: its event-loop delay over the mixed phase, read over IPC.
    const apiProcess = spawn(process.execPath, ['--import', './bench/loop-delay.ts', 'src/main.js'], {
      env: { ...env, PORT: String(port), RUN_WORKERS: '0' },
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const apiLoop = loopDelayOf(apiProcess);
    stop.push(apiProcess);
    ctx.children.push(apiProcess);
    await ctx.waitFor(`${base}/health`);
    const worker = spawn(process.execPath, ['src/worker.js'], { env: { ...env, CALLBACK_BASE_URL: base }, stdio: 'ignore' });
    stop.push(worker);
    ctx.children.push(worker);
    await api(base, webhooksOrg.apiKey.secret, 'POST', '/v1/webhook-endpoints', { url: receiver.url, events: ['message.delivered'] });
    queue = await startQueue(ctx.databaseUrl, { workers: false });
    const load = loads(base, db, queue, { sends: sendsOrg, webhooks: webhooksOrg }, contactIds);
    const seedSeconds = (performance.now() - seedStart) / 1000;

    // Alone, one after the other; a short warm-up of the two autocannon loads first (connections, JIT, plans).
    const alone = Math.max(5, Math.min(15, Math.round(seconds / 4)));
    await load.sends(2);
    await load.analytics(2);
    const load0 = loadavg()[0]!;
    const postmaster = await postmasterOf(db);
    const roles = { API: apiProcess.pid!, worker: worker.pid!, bench: process.pid };
    const cpuAlone: Partial<Record<keyof Rates, number | null>> = {};
    const machineAlone: Partial<Record<keyof Rates, string[]>> = {};
    const measured = async (k: keyof Rates, work: () => Promise<number>) => {
      const machine = watchMachine(roles, postmaster, cpus().length);
      const value = await work();
      const { share, lines: watched } = machine.report();
      machineAlone[k] = watched;
      cpuAlone[k] = share;
      return value;
    };
    const single: Rates = {
      sends: await measured('sends', () => load.sends(alone)),
      analytics: await measured('analytics', () => load.analytics(alone)),
      webhooks: await measured('webhooks', () => load.webhooks(alone, receiver.count)),
      import: await measured('import', async () => (await load.importRows(importAlone, files, seconds)).rate),
      blast: await measured('blast', () => load.blast(blastAlone, seconds).then(async (b) => (await b.cancel(), b.rate))),
    };
    await sql`checkpoint`.execute(db);

    // All at once.
    const health = pollHealth(base);
    ctx.children.push(health.child);
    apiLoop.reset();
    const activity = sampleActivity(db);
    const sessions0 = await sessionsOpened(db);
    const machine = watchMachine(roles, postmaster, cpus().length);
    const t0 = performance.now();
    const [sends, analytics, webhooks, imported, blasted] = await Promise.all([
      load.sends(seconds),
      load.analytics(seconds),
      load.webhooks(seconds, receiver.count),
      load.importRows(importMixed, files, seconds),
      load.blast(blastMixed, seconds),
    ]);
    const mixedSeconds = (performance.now() - t0) / 1000;
    const loopMixed = await apiLoop.read();
    const polled = await health.stop();
    const healthTimes = polled.times;
    activity.stop();
    const sessionsMixed = (await sessionsOpened(db)) - sessions0;
    const { share: cpuMixed, lines: machineLines } = machine.report();
    await blasted.cancel();
    const mixed: Rates = { sends, analytics, webhooks, import: imported.rate, blast: blasted.rate };
    const load1 = loadavg()[0]!;

    lines.push(
      `(x) mixed load: one API process, one worker process; ${fmt(BLAST_RECIPIENTS)}-recipient blasts seeded in ${fmt(seedSeconds, 1)} s; each load alone (${alone} s; blast and import: their run), then all five at once for ${seconds} s (took ${fmt(mixedSeconds, 1)} s); load average ${fmt(load0, 2)} before, ${fmt(load1, 2)} after`,
    );
    const rows: Array<[keyof Rates, string, string]> = [
      ['sends', `POST /v1/messages/send, ${SEND_CONNECTIONS} connections`, 'sends/s'],
      ['blast', `${fmt(BLAST_RECIPIENTS)}-recipient blast draining (handed to the carrier)`, 'messages/s'],
      [
        'import',
        `${fmt(IMPORT_ROWS)}-row CSV import (${files.map((f) => fmt(f.length / 1e6, 1)).join(' + ')} MB files), upload → completed`,
        'rows/s',
      ],
      ['webhooks', 'webhook deliveries to a local receiver', 'deliveries/s'],
      ['analytics', `GET /v1/analytics/overview (30 days by day), ${READ_CONNECTIONS} connections`, 'req/s'],
    ];
    let worst = Infinity;
    for (const [k, label, unit] of rows) {
      const ratio = mixed[k] / single[k];
      worst = Math.min(worst, ratio);
      const share = cpuAlone[k];
      lines.push(
        `      ${label.padEnd(72)} mixed ${fmt(mixed[k]).padStart(7)} ${unit}, alone ${fmt(single[k]).padStart(7)} → ${fmt(ratio * 100, 1).padStart(5)}% (${ratio >= 0.5 ? 'goal ≥ 50% ✓' : '✗ MISSED goal ≥ 50%'})${share == null ? '' : `; alone it used ${fmt(share * 100)}% of the machine`}`,
      );
      for (const line of machineAlone[k] ?? []) lines.push(`          alone: ${line}`);
    }
    const shares = Object.values(cpuAlone).filter((v): v is number => typeof v === 'number');
    if (shares.length === rows.length && cpuMixed != null) {
      const sum = shares.reduce((a, b) => a + b, 0);
      // A reading, not a bound: a load alone also spends CPU on its own pace (polling, a generator's spin), and
      // mixed work batches better (group commit), so the shares alone do not add up to what the mix needs. What
      // it does say: a mixed phase that leaves the machine idle is limited elsewhere (the waits printed below).
      lines.push(
        `      CPU (${cpus().length} cores): the loads alone used ${fmt(sum * 100)}% of the machine in all; mixed, ${fmt(cpuMixed * 100)}%.` +
          (cpuMixed < 0.9 ? ' The mixed phase left CPU idle: what limits it is not the processor (see the waits below).' : ''),
      );
    }
    const p99 = percentile(healthTimes, 99);
    lines.push(
      `      GET /health during the mixed phase: p50 ${fmt(percentile(healthTimes, 50), 1)} ms, p99 ${fmt(p99, 1)} ms, max ${fmt(Math.max(...healthTimes), 1)} ms over ${fmt(healthTimes.length)} polls (${p99 < 100 ? 'goal p99 < 100 ms ✓' : '✗ MISSED goal p99 < 100 ms'})`,
    );
    lines.push(
      `      (polled from a process of its own: its own event-loop delay p99 ${fmt(polled.ownLoop.p99, 1)} ms, max ${fmt(polled.ownLoop.max, 1)} ms; the probe query's round trip in the answers p50 ${fmt(percentile(polled.databaseMs, 50))} ms, p99 ${fmt(percentile(polled.databaseMs, 99))} ms, max ${fmt(Math.max(...polled.databaseMs))} ms)`,
    );
    lines.push(
      `      the API process's event loop during the mixed phase: delay p50 ${fmt(loopMixed.p50, 1)} ms, p99 ${fmt(loopMixed.p99, 1)} ms, max ${fmt(loopMixed.max, 1)} ms; garbage collection ${fmt(loopMixed.gcCount)} pauses, ${fmt(loopMixed.gcMs)} ms in all, longest ${fmt(loopMixed.gcMaxMs, 1)} ms`,
    );
    for (const line of machineLines) lines.push(`      ${line}`);
    lines.push(
      `      database sessions opened during the mixed phase: ${fmt(sessionsMixed)} (a new session forks a backend and authenticates)`,
    );
    lines.push(`      where the database's time went (active sessions sampled each second of the mixed phase, commonest first):`);
    for (const line of activity.top(worst >= 0.5 && p99 < 100 ? 3 : 8)) lines.push(`        ${line}`);
    return lines;
  } finally {
    await queue?.stop({ graceful: false }).catch(() => undefined);
    for (const child of stop) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
    await db.destroy();
  }
}
