// Part (s) of `npm run bench` (bench/run.ts): the largest segment the document allows (SegmentQueryRequest: 20
// conditions, each `tags` with 50 ids) on 1,000,000 contacts, through POST /v1/segments/preview of a separate API
// process with its default limits (STATEMENT_TIMEOUT_SECONDS 30).
// 1. Seed: bench part e's 1,000,000 contacts and 20 tags (800,000 links: 60% of the contacts carry one of six tags,
//    20% one of ten), plus 30 tags nobody carries, so each condition names 50 tags that exist and every condition
//    reads every link of the organization: the most a tags condition can cost on this data.
// 2. Each shape (op all/any/none × match all/any), once: the answer's status (200, or 504 QUERY_TIMEOUT when a
//    statement passed the limit), its time, and GET /health's p99 while it ran; then how long until the service has
//    no statement running (the limit stopped it, nothing ran on). Beside them, the baseline: 20 passes over the
//    organization's links (the least a plan evaluating each condition by itself reads).
// 3. A client that gives up after 1 s: how long until its statements are gone from pg_stat_activity.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createDb, type Db } from '../src/db/database.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { loadDocument } from '../src/contract/document.ts';
import { seedContacts } from './contacts-queries.ts';
import type { OwnDataBench } from './own-data.ts';

const CONTACTS = 1_000_000;
const CONDITIONS = 20;
const IDS = 50;
const APP = 'messaging-service-api';

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))] ?? NaN;

/** Statements of the API process running now (its pool's application_name), other than idle ones. */
async function running(db: Db): Promise<number> {
  const { rows } = await sql<{
    n: string;
  }>`select count(*) as n from pg_stat_activity where application_name = ${APP} and state = 'active'`.execute(db);
  return Number(rows[0]!.n);
}

/** Milliseconds until nothing of the API process runs (checked every 20 ms, up to `capMs`). */
async function untilIdle(db: Db, capMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < capMs) {
    if ((await running(db)) === 0) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

export async function benchWorstSegment(ctx: OwnDataBench): Promise<string[]> {
  // The bench's own connections are named otherwise, so they never count as the API's statements.
  const { db } = createDb(`${ctx.databaseUrl}${ctx.databaseUrl.includes('?') ? '&' : '?'}application_name=bench-segments`, 4);
  const lines: string[] = [];
  let server: ChildProcess | undefined;
  try {
    const org = await createOrganization(db, loadDocument(), 'Worst segment bench');
    const orgId = org.organizationId;
    const t0 = performance.now();
    const linked = await seedContacts(db, orgId, CONTACTS);
    const unlinked = (
      await sql<{
        id: string;
      }>`insert into tags (organization_id, name) select ${orgId}, 'unused-' || g from generate_series(1, ${IDS - linked.length}) g returning id`.execute(
        db,
      )
    ).rows.map((r) => r.id);
    const tags = [...linked, ...unlinked];
    const links = Number(
      (await sql<{ n: string }>`select count(*) as n from contact_tags where organization_id = ${orgId}`.execute(db)).rows[0]!.n,
    );
    const seedSeconds = (performance.now() - t0) / 1000;

    // Baseline: one index-only pass over the organization's links, best of 3, times the conditions.
    let pass = Infinity;
    for (let i = 0; i < 3; i++) {
      const s = performance.now();
      await sql`select count(*) from contact_tags where organization_id = ${orgId} and tag_id = any(${tags}::uuid[])`.execute(db);
      pass = Math.min(pass, performance.now() - s);
    }

    const port = await ctx.freePort();
    const log = join(tmpdir(), `bench-segments-${port}.log`);
    server = spawn(process.execPath, ['src/main.js'], {
      env: { ...ctx.env, PORT: String(port), RUN_WORKERS: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', openSync(log, 'w'), openSync(log, 'a')],
    });
    ctx.children.push(server);
    const base = `http://127.0.0.1:${port}`;
    await ctx.waitFor(`${base}/health`);
    const timeoutSeconds = Number(ctx.env.STATEMENT_TIMEOUT_SECONDS ?? 30);

    const largest = (op: 'all' | 'any' | 'none', match: 'all' | 'any') => ({
      match,
      conditions: Array.from({ length: CONDITIONS }, (_, i) => ({
        type: 'tags',
        op,
        tagIds: [...tags.slice(i), ...tags.slice(0, i)].slice(0, IDS),
      })),
    });
    const preview = (body: unknown, signal?: AbortSignal) =>
      fetch(`${base}/v1/segments/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });

    lines.push(
      `(s) the largest segment the document allows (${CONDITIONS} conditions × tags with ${IDS} ids, each naming every tag of the organization) on ${fmt(CONTACTS)} contacts, ${fmt(links)} tag links (seeded in ${fmt(seedSeconds, 1)} s); POST /v1/segments/preview (count + 10 newest) of an API process with STATEMENT_TIMEOUT_SECONDS=${timeoutSeconds}`,
    );
    lines.push(
      `      baseline: ${CONDITIONS} index-only passes over the organization's links ${fmt(pass * CONDITIONS)} ms (${fmt(pass, 1)} ms each)`,
    );
    let worstEnd = 0;
    let worstIdle = 0;
    for (const [op, match] of [
      ['all', 'all'],
      ['all', 'any'],
      ['any', 'all'],
      ['any', 'any'],
      ['none', 'all'],
      ['none', 'any'],
    ] as const) {
      const health: number[] = [];
      let answered = false;
      const sampler = (async () => {
        while (!answered) {
          const s = performance.now();
          await fetch(`${base}/health`).then((r) => r.arrayBuffer());
          health.push(performance.now() - s);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const s = performance.now();
      const res = await preview(largest(op, match));
      const body = (await res.json()) as { data?: { count: number }; code?: string };
      const ms = performance.now() - s;
      answered = true;
      await sampler;
      const idle = await untilIdle(db, 10_000);
      worstEnd = Math.max(worstEnd, ms);
      worstIdle = Math.max(worstIdle, idle);
      const outcome = res.status === 200 ? `200, ${fmt(body.data!.count)} matching` : `${res.status} ${body.code ?? ''}`;
      lines.push(
        `      tags ${op.padEnd(4)} × ${CONDITIONS}, match ${match.padEnd(3)}: ${outcome.padEnd(22)} in ${fmt(ms / 1000, 2).padStart(6)} s (${fmt(ms / (pass * CONDITIONS), 1)}x the baseline); /health p99 ${fmt(p99(health), 1)} ms meanwhile; nothing running ${fmt(idle)} ms after`,
      );
    }
    const bound = timeoutSeconds * 1000 + 2000;
    lines.push(
      `      every shape answered or refused within ${fmt(worstEnd / 1000, 1)} s (goal ≤ the statement timeout + 2 s: ${worstEnd <= bound ? 'goal ✓' : '✗ MISSED goal'}); the database free ${fmt(worstIdle)} ms after the answer at most (${worstIdle <= 1000 ? 'goal ≤ 1 s ✓' : '✗ MISSED goal ≤ 1 s'})`,
    );

    // A client that gives up: the heaviest shape, abandoned after 1 s.
    const gone = new AbortController();
    const abandoned = preview(largest('any', 'any'), gone.signal).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    const before = await running(db);
    gone.abort();
    await abandoned;
    const cancelled = await untilIdle(db, 30_000);
    lines.push(
      `      a client that gives up after 1 s (tags any, match any): ${before} statement(s) running then, none ${fmt(cancelled)} ms after it left (${cancelled <= 1000 ? 'goal ≤ 1 s ✓' : '✗ MISSED goal ≤ 1 s'})`,
    );
    return lines;
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await db.destroy();
  }
}
