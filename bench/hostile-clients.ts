// (h) What hostile clients cost everyone else, against a running full-stack server process:
//   - its RSS idle vs. while 100 unauthenticated clients each start a 9.9 MB multipart upload and stall
//     (before authentication came first, each held its body: RSS rose by about 1 GB);
//   - /health latency idle vs. while 100 message previews are matched against a polynomial content-rule regex
//     (`(\w*)*y` on a 1,600-character text: milliseconds of backtracking each before the linear-time engine).
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function healthLatencies(baseUrl: string, ms: number): Promise<{ p50: number; p99: number; n: number }> {
  const samples: number[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const t0 = performance.now();
    await (await fetch(`${baseUrl}/health`)).arrayBuffer();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, p99: samples[Math.floor(samples.length * 0.99)]!, n: samples.length };
}

export async function benchHostileClients(opts: { baseUrl: string; pid: number; apiKey: string }) {
  const { baseUrl, pid, apiKey } = opts;
  const port = Number(new URL(baseUrl).port);

  // Stalled unauthenticated uploads.
  await new Promise((r) => setTimeout(r, 500));
  const idleRss = rssMb(pid);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const sockets: Socket[] = [];
  for (let i = 0; i < 100; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => {});
    s.write(`POST /v1/contacts/import HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: 10380902\r\n\r\n`);
    for (let j = 0; j < 150; j++) s.write(chunk); // 9.4 MB offered, then nothing more
    sockets.push(s);
  }
  await new Promise((r) => setTimeout(r, 3_000));
  const stalledRss = rssMb(pid);
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 1_000));
  const afterRss = rssMb(pid);

  // Polynomial content rule vs. /health.
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const rule = await fetch(`${baseUrl}/v1/content-rules`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: `bench polynomial ${Date.now()}`, pattern: '(\\w*)*y', patternType: 'regex', action: 'flag' }),
  });
  const ruleAccepted = rule.status === 201;
  const ruleId = ruleAccepted ? ((await rule.json()) as { data: { id: string } }).data.id : undefined;
  const idleHealth = await healthLatencies(baseUrl, 1_500);
  let stop = false;
  let previews = 0;
  const text = 'a'.repeat(1_600);
  const previewLoop = async () => {
    while (!stop) {
      await (await fetch(`${baseUrl}/v1/messages/preview`, { method: 'POST', headers: auth, body: JSON.stringify({ content: { type: 'text', text } }) })).arrayBuffer();
      previews++;
    }
  };
  const loops = Array.from({ length: 100 }, previewLoop);
  await new Promise((r) => setTimeout(r, 300));
  const busyHealth = await healthLatencies(baseUrl, 3_000);
  stop = true;
  await Promise.all(loops);
  if (ruleId) await fetch(`${baseUrl}/v1/content-rules/${ruleId}`, { method: 'DELETE', headers: auth });

  return { idleRss, stalledRss, afterRss, ruleAccepted, idleHealth, busyHealth, previewsPerSecond: previews / 3.3 };
}
