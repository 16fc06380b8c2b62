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
    s.write(
      `POST /v1/contacts/import HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: 10380902\r\n\r\n`,
    );
    for (let j = 0; j < 150; j++) s.write(chunk); // 9.4 MB offered, then nothing more
    sockets.push(s);
  }
  await new Promise((r) => setTimeout(r, 3_000));
  const stalledRss = rssMb(pid);
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 1_000));
  const afterRss = rssMb(pid);

  // /health under 100 concurrent previews (with a contact, so content rules run), without and then with a
  // polynomial regex rule: the difference is what the rule costs everyone else.
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const contact = (await (
    await fetch(`${baseUrl}/v1/contacts`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ phone: `+1415555${String(Date.now()).slice(-4)}` }),
    })
  ).json()) as { id: string };
  const idleHealth = await healthLatencies(baseUrl, 1_500);
  const text = 'a'.repeat(1_600);
  const underPreviews = async () => {
    let stop = false;
    let previews = 0;
    const loop = async () => {
      while (!stop) {
        await (
          await fetch(`${baseUrl}/v1/messages/preview`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ contactId: contact.id, content: { type: 'text', text } }),
          })
        ).arrayBuffer();
        previews++;
      }
    };
    const loops = Array.from({ length: 100 }, loop);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const health = await healthLatencies(baseUrl, 3_000);
    const seconds = (performance.now() - t0) / 1000;
    stop = true;
    await Promise.all(loops);
    return { health, previewsPerSecond: previews / (seconds + 0.3) };
  };
  const withoutRule = await underPreviews();
  const rule = await fetch(`${baseUrl}/v1/content-rules`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: `bench polynomial ${Date.now()}`, pattern: '(\\w*)*y', patternType: 'regex', action: 'flag' }),
  });
  const ruleAccepted = rule.status === 201;
  const ruleId = ruleAccepted ? ((await rule.json()) as { data: { id: string } }).data.id : undefined;
  const withRule = await underPreviews();
  if (ruleId) await fetch(`${baseUrl}/v1/content-rules/${ruleId}`, { method: 'DELETE', headers: auth });

  return { idleRss, stalledRss, afterRss, ruleAccepted, idleHealth, withoutRule, withRule };
}
