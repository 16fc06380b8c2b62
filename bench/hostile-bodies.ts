// (h) What a request body built to be slow to validate costs, against a running full-stack server process: the
// largest array the body limit allows in every array of every JSON request body (test/support/fuzz/huge-arrays.ts,
// the bodies of the fuzz test), sent one after another while /health is polled beside them, plus the two bodies of
// issue 31 (100,000 empty carousel cards: minutes before validation stopped at the first error; 10,000 contact
// ids with a duplicate at the start: 1.6 s of pairwise uniqueItems comparisons).
import { loadDocument } from '../src/contract/document.ts';
import { describeOperations } from '../test/support/fuzz/requests.ts';
import { hugeArrayBodies } from '../test/support/fuzz/huge-arrays.ts';
import type { Doc } from '../test/support/fuzz/schema.ts';

type Timed = { what: string; status: number; ms: number; bytes: number };

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? 0;
};

export async function benchHostileBodies(opts: { baseUrl: string; apiKey: string; senderId: string }) {
  const { baseUrl, apiKey, senderId } = opts;
  const doc = loadDocument() as unknown as Doc;
  // Built before anything is timed: this process's own work would otherwise delay the /health polls it times.
  const requests: Array<{ what: string; method: string; path: string; body: Buffer }> = [];
  for (const op of describeOperations(doc)) {
    const path = op.path.replace(/\{\w+\}/g, '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b');
    for (const b of hugeArrayBodies(doc, op))
      requests.push({
        what: `${op.operationId} ${b.location} (${b.items.toLocaleString('en-US')} × {})`,
        method: op.method,
        path,
        body: b.bytes,
      });
  }
  const uuid = (i: number) => `3f2b8c1e-6d4a-4f7e-9b1a-${String(i).padStart(12, '0')}`;
  const issueBodies = [
    {
      what: 'createBlast, 100,000 empty carousel cards',
      body: {
        name: 'b',
        senderId,
        contactIds: [uuid(1)],
        contentJson: { type: 'carousel', cards: Array.from({ length: 100_000 }, () => ({})) },
      },
    },
    {
      what: 'createBlast, 10,000 contact ids, items 0 and 1 equal',
      body: {
        name: 'b',
        senderId,
        contactIds: Array.from({ length: 10_000 }, (_, i) => uuid(i === 1 ? 0 : i)),
        contentJson: { type: 'text', text: 'hi' },
      },
    },
  ].map((r) => ({ what: r.what, method: 'POST', path: '/v1/blasts', body: Buffer.from(JSON.stringify(r.body)) }));

  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const send = async (r: (typeof requests)[number]): Promise<Timed> => {
    const t0 = performance.now();
    const res = await fetch(`${baseUrl}${r.path}`, { method: r.method, headers, body: r.body });
    await res.arrayBuffer();
    return { what: r.what, status: res.status, ms: performance.now() - t0, bytes: r.body.length };
  };

  // Every body once untimed (the server compiles an operation's validators on first use), then timed.
  for (const r of [...requests, ...issueBodies]) await send(r);
  const health: number[] = [];
  let sending = true;
  const poll = (async () => {
    while (sending) {
      const t0 = performance.now();
      await (await fetch(`${baseUrl}/health`)).arrayBuffer();
      health.push(performance.now() - t0);
    }
  })();
  const sweep: Timed[] = [];
  for (const r of requests) sweep.push(await send(r));
  const issue: Timed[] = [];
  for (const r of issueBodies) issue.push(await send(r));
  sending = false;
  await poll;

  const worst = sweep.reduce((a, b) => (b.ms > a.ms ? b : a));
  const statuses = [...new Set(sweep.map((t) => t.status))].sort();
  return {
    bodies: sweep.length,
    megabytes: sweep.reduce((n, t) => n + t.bytes, 0) / 1e6,
    statuses,
    median: quantile(
      sweep.map((t) => t.ms),
      0.5,
    ),
    worst,
    issue,
    health: { p50: quantile(health, 0.5), p99: quantile(health, 0.99), max: Math.max(...health), n: health.length },
  };
}
