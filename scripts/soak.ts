// `npm run soak [-- --minutes N]` (issue 38 item 5; not part of `npm test`): the deployment the README describes, under
// mixed load and faults, for N minutes (10 by default), then checks that nothing was lost or doubled.
//
// It starts the embedded PostgreSQL (a temporary cluster, removed at the end) and, on its one DATABASE_URL, two API
// processes (`src/main.js`, RUN_WORKERS=0 as the README deploys API processes next to workers), two worker processes
// (`src/worker.js`, callbacks to the first API process), and a webhook receiver in this process. Load, smaller than
// bench part x: direct sends spread over both API processes, a blast draining, contact imports, webhook deliveries
// (every message event of the sending organization) and analytics reads. Faults, on a schedule scaled to the run
// (at 10 minutes: exactly the issue's):
//   - every minute one worker (in turn) is killed with SIGKILL, and restarted 2 s later;
//   - the webhook receiver is down from 10 % to 30 % of the run (2 minutes of 10);
//   - the carrier simulator fails 20 % of sends transiently from 40 % to 60 % of the run (`simulator-faults`, README
//     "Carrier sandbox").
// Then the load stops, the faults end, and the soak waits for the work in flight to settle (messages handed over,
// webhook retries made: the retry after 5 minutes is the last one the receiver's outage needs) and checks:
//   - every accepted message was handed to the carrier exactly once: the simulator keeps one row per dedupe key
//     (simulator_messages) with the number of send calls it absorbed; none lost (an accepted id without its row,
//     or still waiting), none twice (two rows for one message, other than an RCS message's SMS fallback);
//   - every webhook event of the subscribed organization reached the receiver at least once, and each resource's
//     events can be put back in their order by the envelope's `createdAt` (the contract says deliveries may arrive
//     out of order: the arrivals out of order are printed as a figure, not counted as a failure);
//   - no blast recipient got the blast twice;
//   - Idempotency-Key honoured across the two API processes: the same key and body sent to both at once gives one
//     message (both answers name it; a 409 IDEMPOTENCY_IN_PROGRESS is retried until it replays);
//   - the memory of each process after a full garbage collection, at the start and at the end: read through the
//     V8 inspector, which the soak opens on a loopback port of each process it starts (`--inspect=127.0.0.1:0`), so
//     the service needs no admin endpoint or signal handler for it.
// Exit code 1 when a check fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { seedContacts } from '../bench/blasts.ts';
import { generateCsv } from '../bench/contacts-import.ts';
import { loadDocument } from '../src/contract/document.ts';
import { createDb, migrateToLatest } from '../src/db/database.ts';
import { startEmbeddedPostgres } from '../src/db/postgres-server.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { setSimulatorFaults } from '../src/providers/simulator-faults.ts';

const USAGE = `npm run soak [-- --minutes N]   (default 10; the fault windows scale with N)`;
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const minutesAt = args.indexOf('--minutes');
const MINUTES = minutesAt === -1 ? 10 : Number(args[minutesAt + 1]);
if (!(MINUTES > 0)) {
  console.error(USAGE);
  process.exit(2);
}
const RUN_MS = MINUTES * 60_000;
const BLAST_RECIPIENTS = 30_000;
const IMPORT_ROWS = 20_000;
const SEND_CONTACTS = 1_000;
const SUBSCRIBED = ['message.queued', 'message.sent', 'message.delivered', 'message.read', 'message.failed'];
/** After the load: how long the soak waits for work in flight (the webhook retry 5 minutes after a failure). */
const SETTLE_MS = 8 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const started = Date.now();
const stamp = () => `[${fmt((Date.now() - started) / 1000, 0).padStart(4)} s]`;
const say = (line: string) => console.log(`${stamp()} ${line}`);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

// --- processes ---

type Proc = { name: string; child: ChildProcess; inspector: Promise<string>; log: WriteStream };

/** A node process of the service with its output in `<logs>/<name>.log` and its inspector on a loopback port. */
function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, logs: string): Proc {
  const log = createWriteStream(join(logs, `${name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log, { end: false });
  const inspector = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      text += chunk.toString();
      const url = /Debugger listening on (ws:\/\/\S+)/.exec(text)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', () => reject(new Error(`${name} exited before its inspector answered`)));
  });
  inspector.catch(() => undefined);
  return { name, child, inspector, log };
}

async function stopProcess(p: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.kill(signal);
    await Promise.race([exited, sleep(10_000)]);
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  }
}

/** RSS and heap (MB) of a process right after a full collection, through its inspector (Chrome DevTools Protocol). */
async function memoryAfterGc(p: Proc): Promise<{ rss: number; heapUsed: number }> {
  const ws = new WebSocket(await p.inspector);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const pending = new Map<number, (value: any) => void>();
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send('HeapProfiler.collectGarbage');
    const result = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    const usage = JSON.parse(result.result.value) as { rss: number; heapUsed: number };
    return { rss: usage.rss / 2 ** 20, heapUsed: usage.heapUsed / 2 ** 20 };
  } finally {
    ws.close();
  }
}

// --- the webhook receiver: records every arrival; can be taken down and brought back on the same port ---

type Arrival = { id: string; type: string; createdAt: string; resource: string; seq: number };

function webhookReceiver(port: number) {
  const arrivals: Arrival[] = [];
  let server: Server | undefined;
  let refusedWhileUp = 0;
  const up = () =>
    new Promise<void>((resolve) => {
      server = createHttpServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          try {
            const event = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; type: string; createdAt: string; data: any };
            const resource = String(event.data?.messageId ?? event.data?.id ?? event.id);
            arrivals.push({ id: event.id, type: event.type, createdAt: event.createdAt, resource, seq: arrivals.length });
            res.writeHead(204).end();
          } catch {
            refusedWhileUp++;
            res.writeHead(400).end();
          }
        });
      });
      server.keepAliveTimeout = 60_000;
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const down = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  };
  return { url: `http://127.0.0.1:${port}/hooks`, arrivals, up, down, refused: () => refusedWhileUp };
}

// --- load ---

type Org = Awaited<ReturnType<typeof createOrganization>>;

async function call(base: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json };
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'msa-soak-'));
  const logs = mkdtempSync(join(tmpdir(), 'msa-soak-logs-'));
  const pg = await startEmbeddedPostgres({ dataDir: dir, port: await freePort() });
  const procs: Proc[] = [];
  let cleaning = false;
  const cleanUp = async () => {
    if (cleaning) return;
    cleaning = true;
    await Promise.all(procs.map((p) => stopProcess(p, 'SIGKILL')));
    await pg.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    if (process.env.SOAK_KEEP_LOGS) console.log(`logs kept in ${logs}`);
    else rmSync(logs, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void cleanUp().then(() => process.exit(130));
    });
  const { db } = createDb(pg.url, 4);
  try {
    await migrateToLatest(db as never);
    const document = loadDocument();
    const sendsOrg = await createOrganization(db, document, 'Soak sends');
    const blastOrg = await createOrganization(db, document, 'Soak blast');
    const importOrgs = [await createOrganization(db, document, 'Soak import 1'), await createOrganization(db, document, 'Soak import 2')];
    await seedContacts(db, blastOrg.organizationId, BLAST_RECIPIENTS);
    // Sending contacts: RCS capable or not, consent given, no sandbox magic suffix (…0333, …0503, …0666, …0777, …9999).
    await sql`insert into contacts (organization_id, phone, attributes, rcs_capable, consent_type)
      select ${sendsOrg.organizationId}::uuid, '+1628' || (400000 + g)::text || case when g % 2 = 0 then '1' else '8' end, '{}', g % 2 = 0, 'MARKETING'
      from generate_series(0, ${SEND_CONTACTS - 1}) g`.execute(db);
    const contactIds = (await db.selectFrom('contacts').select('id').where('organization_id', '=', sendsOrg.organizationId).execute()).map(
      (r) => r.id,
    );
    const csv = generateCsv(IMPORT_ROWS);

    const receiver = webhookReceiver(await freePort());
    await receiver.up();
    const env = { ...process.env, DATABASE_URL: pg.url, NODE_ENV: 'production', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1' };
    const apiPorts = [await freePort(), await freePort()];
    const bases = apiPorts.map((p) => `http://127.0.0.1:${p}`);
    // The first start creates pg-boss's schema: one API process first, then the rest.
    for (const [i, port] of apiPorts.entries()) {
      procs.push(startProcess(`api${i + 1}`, 'src/main.js', { ...env, PORT: String(port), RUN_WORKERS: '0' }, logs));
      for (let t = 0; ; t++) {
        if ((await fetch(`${bases[i]}/health`).catch(() => undefined))?.status === 200) break;
        if (t > 600) throw new Error(`api${i + 1} did not start`);
        await sleep(50);
      }
    }
    const workerEnv = { ...env, CALLBACK_BASE_URL: bases[0] };
    const workers = [0, 1].map((i) => startProcess(`worker${i + 1}`, 'src/worker.js', workerEnv, logs));
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.inspector));

    const endpoint = await call(bases[0]!, sendsOrg.apiKey.secret, 'POST', '/v1/webhook-endpoints', {
      url: receiver.url,
      events: SUBSCRIBED,
    });
    if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    say(
      `soak for ${MINUTES} min: 2 API processes (${apiPorts.join(', ')}), 2 workers, PostgreSQL ${new URL(pg.url).port}; load average ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
    );

    // --- load loops, until `stopAt` ---
    const loadStart = Date.now();
    const stopAt = loadStart + RUN_MS;
    const running = () => Date.now() < stopAt;
    const accepted = new Set<string>();
    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    let n = 0;
    const sendLoop = async (base: string) => {
      while (running()) {
        const contactId = contactIds[n++ % contactIds.length]!;
        const res = await call(base, sendsOrg.apiKey.secret, 'POST', '/v1/messages/send', {
          contactId,
          messageType: 'TRANSACTIONAL',
          content: { type: 'text', text: `Soak message ${n}` },
        }).catch(() => ({ status: 0, body: undefined }));
        count(`send ${res.status}`);
        if (res.status === 200) accepted.add(res.body.data.messageId);
        await sleep(res.status === 429 ? 1000 : 20);
      }
    };
    const readLoop = async (base: string) => {
      const today = new Date().toISOString().slice(0, 10);
      while (running()) {
        const res = await call(
          base,
          sendsOrg.apiKey.secret,
          'GET',
          `/v1/analytics/overview?granularity=hour&startDate=${today}&endDate=${today}`,
        ).catch(() => ({ status: 0 }));
        count(`analytics ${res.status}`);
        await sleep(250);
      }
    };
    const probes: Array<{ key: string; contactId: string; ids: string[]; statuses: number[] }> = [];
    const probeContacts = (
      await sql<{ id: string }>`insert into contacts (organization_id, phone, attributes, rcs_capable, consent_type)
        select ${sendsOrg.organizationId}::uuid, '+1629' || (500000 + g)::text || '1', '{}', true, 'MARKETING' from generate_series(0, 199) g returning id`.execute(
        db,
      )
    ).rows.map((r) => r.id);
    const idempotencyLoop = async () => {
      while (running() && probes.length < probeContacts.length) {
        const probe = { key: randomUUID(), contactId: probeContacts[probes.length]!, ids: [] as string[], statuses: [] as number[] };
        probes.push(probe);
        const body = {
          contactId: probe.contactId,
          messageType: 'TRANSACTIONAL',
          content: { type: 'text', text: 'Idempotent soak message' },
        };
        // The same key and body to both API processes at once; a 409 IDEMPOTENCY_IN_PROGRESS is retried until it replays.
        await Promise.all(
          bases.map(async (base) => {
            for (let t = 0; t < 50; t++) {
              const res = await call(base, sendsOrg.apiKey.secret, 'POST', '/v1/messages/send', body, {
                'idempotency-key': probe.key,
              }).catch(() => ({
                status: 0,
                body: undefined,
              }));
              probe.statuses.push(res.status);
              if (res.status === 200) {
                probe.ids.push(res.body.data.messageId);
                accepted.add(res.body.data.messageId);
                return;
              }
              await sleep(200);
            }
          }),
        );
        await sleep(5_000);
      }
    };
    const importLoop = async () => {
      for (const [i, org] of importOrgs.entries()) {
        await sleep(i === 0 ? 5_000 : RUN_MS / 2);
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(csv)], { type: 'text/csv' }), 'soak.csv');
        const t0 = Date.now();
        const res = await fetch(`${bases[i % 2]}/v1/contacts/import`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.apiKey.secret}` },
          body: form,
        });
        const job = (await res.json()) as { jobId: string };
        say(`import ${i + 1}: ${fmt(IMPORT_ROWS)} rows uploaded (${res.status})`);
        imports.push({ org, jobId: job.jobId, t0 });
      }
    };
    const imports: Array<{ org: Org; jobId: string; t0: number }> = [];
    const blastLoop = async () => {
      await sleep(10_000);
      const key = blastOrg.apiKey.secret;
      const segment = await call(bases[1]!, key, 'POST', '/v1/segments/resolve', {
        conditions: [{ type: 'attribute', attribute: 'cohort', op: 'eq', value: 'bench' }],
      });
      const created = await call(bases[1]!, key, 'POST', '/v1/blasts', {
        name: 'Soak',
        senderId: blastOrg.senderId,
        messageType: 'MARKETING',
        contentJson: { type: 'text', text: 'Winter sale: 30% off every jacket this weekend. Reply STOP to opt out.' },
        segmentId: segment.body.data.segmentId,
      });
      const launched = await call(bases[1]!, key, 'POST', `/v1/blasts/${created.body.id}/launch`, {});
      say(`blast of ${fmt(BLAST_RECIPIENTS)} recipients launched (${launched.status})`);
      return created.body.id as string;
    };

    // --- faults ---
    const faults: Array<Promise<void>> = [];
    const at = (fraction: number) => loadStart + fraction * RUN_MS;
    const until = async (t: number) => {
      while (Date.now() < t) await sleep(Math.min(1000, t - Date.now()));
    };
    let kills = 0;
    const restarted = new Set<string>();
    faults.push(
      (async () => {
        for (let minute = 1; loadStart + minute * 60_000 < stopAt; minute++) {
          await until(loadStart + minute * 60_000);
          const i = kills % 2;
          const victim = workers[i]!;
          victim.child.kill('SIGKILL');
          kills++;
          say(`worker${i + 1} killed with SIGKILL (pid ${victim.child.pid})`);
          await sleep(2_000);
          workers[i] = startProcess(`worker${i + 1}`, 'src/worker.js', workerEnv, logs);
          restarted.add(`worker${i + 1}`);
          procs.push(workers[i]!);
          say(`worker${i + 1} restarted (pid ${workers[i]!.child.pid})`);
        }
      })(),
      (async () => {
        await until(at(0.1));
        await receiver.down();
        say('webhook receiver down');
        await until(at(0.3));
        await receiver.up();
        say('webhook receiver up');
      })(),
      (async () => {
        await until(at(0.4));
        await setSimulatorFaults(db, 0.2);
        say('carrier simulator: 20 % of sends fail transiently');
        await until(at(0.6));
        await setSimulatorFaults(db, 0);
        say('carrier simulator: faults off');
      })(),
    );

    // Memory at the start, once every process has served some load.
    const memoryStart = new Map<string, { rss: number; heapUsed: number }>();
    const blastId = blastLoop();
    const loads = [
      ...bases.flatMap((b) => [sendLoop(b), sendLoop(b), readLoop(b)]),
      idempotencyLoop(),
      importLoop(),
      (async () => {
        await sleep(Math.min(30_000, RUN_MS / 4));
        for (const p of [procs[0]!, procs[1]!, ...workers])
          memoryStart.set(p.name, await memoryAfterGc(p).catch(() => ({ rss: NaN, heapUsed: NaN })));
      })(),
      (async () => {
        while (running()) {
          await sleep(30_000);
          if (!running()) break;
          say(
            `load: ${[...statuses.entries()].map(([k, v]) => `${k} ×${fmt(v)}`).join(', ')}; ${fmt(receiver.arrivals.length)} webhook arrivals`,
          );
        }
      })(),
    ];
    await Promise.all([...loads, ...faults, blastId]);
    say(`load stopped: ${[...statuses.entries()].map(([k, v]) => `${k} ×${fmt(v)}`).join(', ')}`);

    // --- settle: every accepted message handed over or final, every delivery done, the imports finished ---
    const orgIds = [sendsOrg.organizationId, blastOrg.organizationId];
    const settleUntil = Date.now() + SETTLE_MS;
    for (;;) {
      const { rows } = await sql<{ waiting: string; deliveries: string; importing: string }>`
        select (select count(*) from messages where organization_id = any(${orgIds}::uuid[]) and direction = 'outbound' and status in ('queued', 'sending')) as waiting,
               (select count(*) from webhook_deliveries where organization_id = ${sendsOrg.organizationId}::uuid and status = 'pending') as deliveries,
               (select count(*) from contact_import_jobs where status not in ('completed', 'failed')) as importing`
        .execute(db)
        .catch(async () => ({ rows: [{ waiting: '?', deliveries: '?', importing: '0' }] }));
      const r = rows[0]!;
      if ((r.waiting === '0' && r.deliveries === '0' && r.importing === '0') || Date.now() > settleUntil) {
        say(`settled: ${r.waiting} messages waiting, ${r.deliveries} webhook deliveries pending, ${r.importing} imports running`);
        break;
      }
      say(`settling: ${r.waiting} messages waiting, ${r.deliveries} webhook deliveries pending, ${r.importing} imports running`);
      await sleep(15_000);
    }
    await sleep(3_000); // the last receipts' callbacks and their events

    // --- checks ---
    const failures: string[] = [];
    const check = (ok: boolean, line: string) => {
      console.log(`  ${ok ? '✓' : '✗'} ${line}`);
      if (!ok) failures.push(line);
    };
    console.log(
      `\nsoak ${MINUTES} min: ${kills} workers killed; load average ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
    );

    // Exactly once.
    const { rows: handed } = await sql<{ id: string; status: string; rows: string; calls: string; fallback: string }>`
      select m.id, m.status, count(s.dedupe_key) as rows, coalesce(sum(s.send_calls), 0) as calls,
             count(*) filter (where s.dedupe_key like '%:fallback') as fallback
      from messages m left join simulator_messages s on s.dedupe_key in (m.id::text, m.id::text || ':fallback')
      where m.organization_id = any(${orgIds}::uuid[]) and m.direction = 'outbound'
      group by m.id, m.status`.execute(db);
    const byId = new Map(handed.map((r) => [r.id, r]));
    const missingRows = [...accepted].filter((id) => !byId.has(id)).length;
    const sentStatuses = new Set(['sent', 'delivered', 'read', 'undeliverable']);
    const lost = handed.filter((r) => sentStatuses.has(r.status) && Number(r.rows) === 0).length;
    const waiting = handed.filter((r) => ['queued', 'sending'].includes(r.status)).length;
    const twice = handed.filter((r) => Number(r.rows) - Number(r.fallback) > 1).length;
    const absorbed = handed.filter((r) => Number(r.calls) > Number(r.rows)).length;
    const failed = handed.filter((r) => r.status === 'failed');
    const byStatus = Map.groupBy(handed, (r) => r.status);
    const { rows: orphans } = await sql<{ n: string }>`
      select count(*) as n from simulator_messages s where s.organization_id = any(${orgIds}::uuid[])
        and not exists (select from messages m where m.id::text = split_part(s.dedupe_key, ':', 1))`.execute(db);
    check(
      missingRows === 0 && lost === 0 && waiting === 0 && twice === 0 && Number(orphans[0]!.n) === 0,
      `messages handed to the carrier exactly once: ${fmt(handed.length)} accepted (${fmt(accepted.size)} answered 200 to the soak, the rest the blast's), ${[
        ...byStatus.entries(),
      ]
        .map(([s, rs]) => `${s} ${fmt(rs.length)}`)
        .join(
          ', ',
        )}; lost ${missingRows + lost}, still waiting ${waiting}, twice ${twice}, carrier rows without a message ${orphans[0]!.n}; ${fmt(absorbed)} messages were offered to the carrier more than once and its dedupe key kept them to one handset delivery`,
    );
    if (failed.length) {
      const { rows: reasons } = await sql<{ reason: string | null; n: string }>`
        select error_code as reason, count(*) as n from messages where id = any(${failed.map((r) => r.id)}::uuid[]) group by 1`.execute(db);
      console.log(`      failed (not lost: final, with a reason): ${reasons.map((r) => `${r.reason ?? 'no reason'} ${r.n}`).join(', ')}`);
    }

    // Webhooks: at least once, order recoverable.
    const { rows: events } = await sql<{ id: string; type: string; created_at: Date; body: string }>`
      select e.id, e.type, e.created_at, e.body from webhook_events e
      where e.organization_id = ${sendsOrg.organizationId}::uuid and not e.test order by e.created_at, e.id`.execute(db);
    const received = new Map<string, Arrival>();
    let repeats = 0;
    for (const a of receiver.arrivals) {
      if (received.has(a.id)) repeats++;
      else received.set(a.id, a);
    }
    const undelivered = events.filter((e) => !received.has(e.id));
    const byResource = Map.groupBy(events, (e) => {
      const data = (JSON.parse(e.body) as { data: { messageId?: string; id?: string } }).data;
      return String(data.messageId ?? data.id ?? e.id);
    });
    let arrivedOutOfOrder = 0;
    let unrecoverable = 0;
    for (const list of byResource.values()) {
      const firsts = list.map((e) => received.get(e.id)).filter((a): a is Arrival => a !== undefined);
      if (firsts.some((a, i) => i > 0 && a.seq < firsts[i - 1]!.seq)) arrivedOutOfOrder++;
      if (firsts.some((a, i) => i > 0 && Date.parse(a.createdAt) < Date.parse(firsts[i - 1]!.createdAt))) unrecoverable++;
    }
    check(
      undelivered.length === 0 && unrecoverable === 0 && receiver.refused() === 0,
      `webhook events delivered at least once: ${fmt(events.length)} events of ${fmt(byResource.size)} resources, ${fmt(received.size)} received (${fmt(repeats)} repeated arrivals), ${fmt(undelivered.length)} never received; resources whose order the envelope's createdAt cannot restore: ${unrecoverable}`,
    );
    console.log(
      `      resources whose events arrived out of order (retries after the receiver's outage; allowed by the contract, ordered by createdAt): ${fmt(arrivedOutOfOrder)}`,
    );
    if (undelivered.length) {
      const { rows: states } = await sql<{ status: string; n: string }>`
        select d.status, count(*) as n from webhook_deliveries d where d.event_id = any(${undelivered.map((e) => e.id)}::text[]::uuid[]) group by 1`
        .execute(db)
        .catch(() => ({ rows: [] as Array<{ status: string; n: string }> }));
      console.log(`      their deliveries: ${states.map((s) => `${s.status} ${s.n}`).join(', ') || 'none'}`);
    }

    // Blast recipients.
    const id = await blastId;
    const { rows: blast } = await sql<{ recipients: string; messages: string; twice: string; handset_twice: string }>`
      select (select count(*) from blast_recipients where blast_id = ${id}::uuid) as recipients,
             (select count(*) from messages where organization_id = ${blastOrg.organizationId}::uuid and origin = 'blast') as messages,
             (select count(*) from (select contact_id from messages where organization_id = ${blastOrg.organizationId}::uuid and origin = 'blast'
                group by contact_id having count(*) > 1) t) as twice,
             (select count(*) from (select to_phone from simulator_messages where organization_id = ${blastOrg.organizationId}::uuid
                and dedupe_key not like '%:fallback' group by to_phone having count(*) > 1) t) as handset_twice`.execute(db);
    const b = blast[0]!;
    check(
      b.twice === '0' && b.handset_twice === '0' && Number(b.messages) > 0,
      `blast: ${fmt(Number(b.recipients))} recipients, ${fmt(Number(b.messages))} messages; recipients with two messages ${b.twice}, handsets that got it twice ${b.handset_twice}`,
    );

    // Idempotency across the API processes.
    const split = probes.filter((p) => new Set(p.ids).size !== 1 || p.ids.length !== 2);
    const { rows: perContact } = await sql<{ n: string }>`
      select count(*) as n from (select contact_id from messages where contact_id = any(${probes.map((p) => p.contactId)}::uuid[])
        group by contact_id having count(*) > 1) t`.execute(db);
    const inProgress = probes.reduce((s, p) => s + p.statuses.filter((x) => x === 409).length, 0);
    check(
      split.length === 0 && perContact[0]!.n === '0' && probes.length > 0,
      `Idempotency-Key across the two API processes: ${probes.length} keys each sent to both at once; one message per key ${split.length === 0 && perContact[0]!.n === '0' ? 'for every key' : `MISSED for ${split.length} keys, ${perContact[0]!.n} contacts with two messages`} (${inProgress} answers 409 IDEMPOTENCY_IN_PROGRESS, retried until replayed)`,
    );

    // Imports.
    for (const [i, imp] of imports.entries()) {
      const { rows } = await sql<{ status: string; processed_rows: number; completed_at: Date | null }>`
        select status, processed_rows, completed_at from contact_import_jobs where id = ${imp.jobId}::uuid`.execute(db);
      const r = rows[0];
      check(
        r?.status === 'completed' && r.processed_rows === IMPORT_ROWS,
        `import ${i + 1}: ${r?.status ?? 'missing'}, ${fmt(r?.processed_rows ?? 0)} of ${fmt(IMPORT_ROWS)} rows${r?.completed_at ? ` in ${fmt((new Date(r.completed_at).getTime() - imp.t0) / 1000, 1)} s` : ''}`,
      );
    }

    // Memory.
    console.log('  memory after a full GC (RSS / heap used, MB), start → end:');
    for (const p of [procs[0]!, procs[1]!, ...workers]) {
      const end = await memoryAfterGc(p).catch(() => ({ rss: NaN, heapUsed: NaN }));
      const start = memoryStart.get(p.name);
      const note = restarted.has(p.name) ? ' (end: the process started after its last kill; start: its first one)' : '';
      console.log(
        `      ${p.name.padEnd(8)} ${start ? `${fmt(start.rss)} / ${fmt(start.heapUsed, 1)}` : '—'} → ${fmt(end.rss)} / ${fmt(end.heapUsed, 1)}${note}`,
      );
    }
    console.log(failures.length ? `\n✗ ${failures.length} check(s) failed` : '\n✓ every check passed');
    return failures.length ? 1 : 0;
  } finally {
    await db.destroy().catch(() => undefined);
    await cleanUp();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
