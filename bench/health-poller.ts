// Part (x)'s /health poller (bench/mixed.ts), a process of its own: polled from the process that drives the five
// loads, /health's latency included that process's own event loop (autocannon, the webhook feeder, the blast's
// counts), so the figure was partly the bench's. Started with the API's base URL as its argument and an IPC channel;
// polls GET /health every 50 ms until the parent sends 'stop', then sends back what it saw and exits:
//   times      each poll's latency in ms (Infinity for a refused or failed poll: it must not pass for a fast answer)
//   databaseMs the body's database.latencyMs of each answered poll (the probe query's round trip, src/db/probe.ts)
//   ownLoop    this poller's own event-loop delay (p99, max in ms): a poller that was itself held says so
import { monitorEventLoopDelay } from 'node:perf_hooks';

export type PollerReport = { times: number[]; databaseMs: number[]; ownLoop: { p99: number; max: number } };

const base = process.argv[2];
if (!base || !process.send) throw new Error('usage: fork bench/health-poller.ts <base URL> (with an IPC channel)');

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const times: number[] = [];
const databaseMs: number[] = [];
let running = true;
process.on('message', (m) => {
  if (m === 'stop') running = false;
});

while (running) {
  const t0 = performance.now();
  const body = await fetch(`${base}/health`)
    .then(async (r) =>
      r.status === 200 ? ((await r.json()) as { database: { latencyMs: number | null } }) : (await r.arrayBuffer(), null),
    )
    .catch(() => null);
  times.push(body ? performance.now() - t0 : Infinity);
  if (body?.database.latencyMs != null) databaseMs.push(body.database.latencyMs);
  await new Promise((r) => setTimeout(r, 50));
}
loop.disable();
const report: PollerReport = { times, databaseMs, ownLoop: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 } };
process.send(report, () => process.exit(0));
