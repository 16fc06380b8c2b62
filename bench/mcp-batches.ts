// (h, MCP) What JSON-RPC batches on POST /mcp cost a running server (issue 31: 100 tools/list in one 6 KB batch
// built a 139 MB answer; eight such requests at once took 3.85 GB of heap and stalled /health for seconds):
//   - 8 clients each sending a 100-message tools/list batch over and over (refused: more than 10 messages);
//   - 8 clients each sending a batch at the cap (MAX_BATCH_MESSAGES tools/list) over and over;
// each for a few seconds, with the server's RSS sampled every 50 ms (the peak is reported) and /health timed.
import { readFileSync } from 'node:fs';
import { MAX_BATCH_MESSAGES } from '../src/mcp-server/batches.ts';

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

type Latency = { p50: number; p99: number; max: number; n: number };

async function healthLatencies(baseUrl: string, ms: number): Promise<Latency> {
  const samples: number[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const t0 = performance.now();
    await (await fetch(`${baseUrl}/health`)).arrayBuffer();
    samples.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 10));
  }
  samples.sort((a, b) => a - b);
  return {
    p50: samples[Math.floor(samples.length / 2)]!,
    p99: samples[Math.floor(samples.length * 0.99)]!,
    max: samples.at(-1)!,
    n: samples.length,
  };
}

export type BatchLoad = {
  messages: number;
  statuses: Record<number, number>;
  answerBytes: number;
  peakRss: number;
  health: Latency;
  batchesPerSecond: number;
};

export async function benchMcpBatches(opts: {
  baseUrl: string;
  pid: number;
  apiKey: string;
  seconds?: number;
}): Promise<{ idleRss: number; afterRss: number; refused: BatchLoad; atCap: BatchLoad }> {
  const { baseUrl, pid, apiKey } = opts;
  const ms = (opts.seconds ?? 3) * 1000;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  const load = async (messages: number): Promise<BatchLoad> => {
    const body = JSON.stringify(Array.from({ length: messages }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })));
    const statuses: Record<number, number> = {};
    let answerBytes = 0;
    let batches = 0;
    let stop = false;
    let peakRss = rssMb(pid);
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 50);
    const client = async () => {
      while (!stop) {
        const res = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers, body });
        const bytes = (await res.arrayBuffer()).byteLength;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        answerBytes = Math.max(answerBytes, bytes);
        batches++;
      }
    };
    const t0 = performance.now();
    const clients = Array.from({ length: 8 }, client);
    const health = await healthLatencies(baseUrl, ms);
    stop = true;
    await Promise.all(clients);
    clearInterval(sampler);
    return { messages, statuses, answerBytes, peakRss, health, batchesPerSecond: batches / ((performance.now() - t0) / 1000) };
  };

  await new Promise((r) => setTimeout(r, 500));
  const idleRss = rssMb(pid);
  const refused = await load(100);
  const atCap = await load(MAX_BATCH_MESSAGES);
  await new Promise((r) => setTimeout(r, 1_000));
  return { idleRss, afterRss: rssMb(pid), refused, atCap };
}
