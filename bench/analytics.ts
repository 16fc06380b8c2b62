// Part (r) of `npm run bench` (bench/run.ts): analytics over 10,000,000 messages of one organization.
// 1. Seed: BENCH_ANALYTICS_MESSAGES (10,000,000) messages spread evenly over the last 365 days, set-based (INSERT …
//    SELECT FROM generate_series in 1,000,000-row statements) with a realistic mix: 20 senders, 1,000
//    conversations, 10 % inbound, RCS/SMS/MMS with fallbacks, delivered/read/failed/sent, text and rich prices.
//    Like a bulk load by an operator, the load runs with messages' indexes and the rollup trigger off, then
//    rebuilds the indexes, marks the session openers and builds both rollup levels with the statements of migration
//    0028's backfill, and
//    ANALYZE. The answers are then checked equal to the raw table (so the rollup is exact, not just fast).
// 2. Timings through the HTTP API of a separate server process (median of 5 after a warm-up, goal < 200 ms):
//    overview by hour over 7 days, by day over 365 days, usage by day over 365 days, the sender list over 365
//    days; beside each, the same figures computed from the raw messages table (PostgreSQL, same process as the
//    bench), and the ratio.
// 3. Export: synchronous CSV exports of ≥ 100,000 and then ≥ 1,000,000 messages streamed through HTTP by the same
//    server process: rows per second, and the process's RSS high-water mark (VmHWM) after each (memory must not
//    follow the size).
// Lines are printed as they are measured. The figures of an overview call that takes minutes are reported from
// the calls that fit a 90 s budget.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { createDb } from '../src/db/database.ts';
import { bindTenant, loadTenantTables } from '../src/db/tenant.ts';
import { rollupSessions, rollupTimeline } from '../src/db/queries/analytics/rollups.ts';
import { createOrganization } from '../src/domain/organizations.ts';
import { markSessionOpenersSql } from '../src/db/migrations/0028_analytics_sessions_daily.ts';
import { dailyRollupBackfillSql, hourlyRollupBackfillSql } from '../src/db/migrations/0044_message_attribution.ts';
import { loadDocument } from '../src/contract/document.ts';
import type { OwnDataBench } from './own-data.ts';

const TOTAL = Number(process.env.BENCH_ANALYTICS_MESSAGES ?? 10_000_000);
const CHUNK = 1_000_000;
const SENDERS = 20;
/** Programs (each with its brand and campaign registration) the senders belong to: 5 of 20 senders each. */
const PROGRAMS = 4;
/** The first brand of the seeded organization: the filtered overview's brandId. */
const brandOf = new Map<string, string>();
const CONVERSATIONS = 1_000;
const RUNS = 5;
/** The raw-table baseline takes seconds per call at 10M rows: median of 3 after a warm-up. */
const RAW_RUNS = 3;
/** Longest time spent on one figure (warm-up and runs). */
const BUDGET_MS = 90_000;
const GOAL_MS = 200;
const EXPORT_ROWS = 1_000_000;
const DAY = 86_400_000;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const iso = (d: Date) => d.toISOString().slice(0, 10);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const goal = (ms: number) => (ms < GOAL_MS ? `goal < ${GOAL_MS} ms ✓` : `✗ MISSED goal < ${GOAL_MS} ms`);
const runsNote = (t: { runs: number }, wanted: number) =>
  t.runs === wanted
    ? ''
    : t.runs === 0
      ? ' (warm-up only: over the time budget)'
      : ` (${t.runs} run${t.runs === 1 ? '' : 's'}: over the time budget)`;

/**
 * Median of up to `runs` timed calls after one warm-up call, within `budgetMs` (warm-up included): a figure that
 * takes minutes per call is reported from the calls that fitted (at least the warm-up) instead of stalling the run.
 */
async function timed<T>(fn: () => Promise<T>, runs = RUNS, budgetMs = BUDGET_MS): Promise<{ ms: number; runs: number; value: T }> {
  const began = performance.now();
  let value = await fn();
  const warmUp = performance.now() - began;
  const times: number[] = [];
  while (times.length < runs && performance.now() - began < budgetMs) {
    const t0 = performance.now();
    value = await fn();
    times.push(performance.now() - t0);
  }
  return times.length ? { ms: median(times), runs: times.length, value } : { ms: warmUp, runs: 0, value };
}

/** Peak and current RSS of a process, in MB (Linux /proc). */
function rssOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

async function seed(pool: pg.Pool, orgId: string, start: Date): Promise<{ seconds: number; indexSeconds: number; rollupSeconds: number }> {
  const q = (text: string, values: unknown[] = []) => pool.query(text, values);
  const senders = (
    await q(
      `insert into sender_ids (organization_id, name, type, status, provider, phone_number, is_sandbox, updated_at)
     select $1, 'Bench sender ' || g, 'RCS_AGENT', 'ACTIVE', 'PROVIDER_A', null, true, now() from generate_series(1, ${SENDERS}) g returning id`,
      [orgId],
    )
  ).rows.map((r: { id: string }) => r.id);
  const contacts = (
    await q(
      `insert into contacts (organization_id, phone, attributes)
     select $1, '+1415' || lpad(g::text, 7, '0'), '{}' from generate_series(1, ${CONVERSATIONS}) g returning id, phone`,
      [orgId],
    )
  ).rows as Array<{ id: string; phone: string }>;
  const conversations = (
    await q(
      `insert into conversations (organization_id, contact_id, sender_id, source_type)
     select $1, c, ($2::uuid[])[1 + (o - 1) % ${SENDERS}], 'api' from unnest($3::uuid[]) with ordinality as t(c, o) returning id, contact_id, sender_id`,
      [orgId, senders, contacts.map((c) => c.id)],
    )
  ).rows as Array<{ id: string; contact_id: string; sender_id: string }>;
  const phoneOf = new Map(contacts.map((c) => [c.id, c.phone]));
  // Attribution ids as a message records them (migration 0043); the messages' columns hold the ids, the figures read them.
  const ids = () => Array.from({ length: PROGRAMS }, () => randomUUID());
  const attribution = { programs: ids(), brands: ids(), campaigns: ids() };
  brandOf.set(orgId, attribution.brands[0]!);

  const t0 = performance.now();
  // Like an operator's bulk load: indexes and the per-row rollup trigger off during the load, rebuilt after.
  const indexes = (await q(`select indexname, indexdef from pg_indexes where tablename = 'messages' and indexname <> 'messages_pkey'`))
    .rows as Array<{ indexname: string; indexdef: string }>;
  for (const i of indexes) await q(`drop index ${i.indexname}`);
  await q('alter table messages drop constraint messages_pkey');
  // The rollup and session-mark triggers too (per-row work against dropped indexes); the load then marks the session
  // openers and builds both rollup levels with migration 0028's backfill statements, as production's migration does.
  const triggers = [
    'messages_analytics_rollup_insert',
    'messages_analytics_rollup_update',
    'messages_analytics_rollup_delete',
    'messages_session_mark',
    'messages_session_followers_insert',
    'messages_session_followers_update',
    'messages_session_followers_delete',
  ];
  for (const t of triggers) await q(`alter table messages disable trigger ${t}`);
  const stepMs = (365 * DAY) / TOTAL;
  try {
    for (let lo = 0; lo < TOTAL; lo += CHUNK) {
      const hi = Math.min(TOTAL, lo + CHUNK);
      await q(
        `
        insert into messages (organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, requested_channel, channel,
          fallback_used, fallback_reason, message_type, status, content, segments, cost_units, origin, created_at, updated_at, sent_at,
          program_id, brand_registration_id, campaign_registration_id)
        select $1, ($2::uuid[])[k], ($3::uuid[])[k], ($4::text[])[k], ($5::uuid[])[k], m.direction, m.requested, m.channel,
          m.fallback, case when m.fallback then 'RCS_NOT_SUPPORTED' end, m.type, m.status, '{"type":"text","text":"Bench message"}', m.segments,
          case when m.direction = 'inbound' then null when m.channel = 'MMS' or (m.channel = 'RCS' and i % 4 = 0) then 150 else m.segments * 39 end,
          'api', m.at, m.at, case when m.direction = 'outbound' and m.status <> 'failed' then m.at end,
          ($7::uuid[])[p], ($8::uuid[])[p], ($9::uuid[])[p]
        from generate_series(${lo}, ${hi - 1}) as g(i)
        cross join lateral (select 1 + (i % ${CONVERSATIONS}) as k) kk
        -- Each sender belongs to one of ${PROGRAMS} programs (its brand and campaign with it), as its conversations do.
        cross join lateral (select 1 + ((kk.k - 1) % ${SENDERS}) % ${PROGRAMS} as p) pp
        cross join lateral (
          select
            case when i % 10 = 9 then 'inbound' else 'outbound' end as direction,
            case when i % 10 = 9 then null when i % 3 = 0 then 'RCS' when i % 3 = 1 then 'SMS' else 'MMS' end as requested,
            case when i % 10 = 9 then 'SMS' when i % 3 = 0 then (case when i % 7 = 0 then 'SMS' else 'RCS' end) when i % 3 = 1 then 'SMS' else 'MMS' end as channel,
            (i % 10 <> 9 and i % 3 = 0 and i % 7 = 0) as fallback,
            case when i % 2 = 0 then 'TRANSACTIONAL' else 'MARKETING' end as type,
            case when i % 10 = 9 then 'received' when i % 20 = 0 then 'failed' when i % 20 = 1 then 'sent'
                 when i % 3 = 0 and i % 20 < 10 then 'read' else 'delivered' end as status,
            1 + (i % 5 = 0)::int as segments,
            $6::timestamptz + (i::float8 * ${stepMs}) * interval '1 millisecond' as at
        ) m`,
        [
          orgId,
          conversations.map((c) => c.id),
          conversations.map((c) => c.contact_id),
          conversations.map((c) => phoneOf.get(c.contact_id)!),
          conversations.map((c) => c.sender_id),
          start,
          attribution.programs,
          attribution.brands,
          attribution.campaigns,
        ],
      );
      process.stdout.write(`\r      seeding messages: ${fmt(hi)} of ${fmt(TOTAL)}`);
    }
    process.stdout.write('\n');
    await q(markSessionOpenersSql('organization_id = $1'), [orgId]);
  } finally {
    for (const t of triggers) await q(`alter table messages enable trigger ${t}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await q(`set maintenance_work_mem = '256MB'`);
  await q('alter table messages add primary key (id)');
  for (const i of indexes) await q(i.indexdef);
  const indexSeconds = (performance.now() - t1) / 1000;
  const t2 = performance.now();
  // The rollup of the loaded rows: the backfill statements of migration 0028 (same keys and sums as the trigger;
  // the hourly level, then the daily one from it).
  await q(hourlyRollupBackfillSql('organization_id = $1'), [orgId]);
  await q(dailyRollupBackfillSql('organization_id = $1'), [orgId]);
  await q('vacuum analyze messages');
  await q('analyze analytics_message_rollups');
  await q('analyze analytics_message_rollups_daily');
  return { seconds, indexSeconds, rollupSeconds: (performance.now() - t2) / 1000 };
}

// The same figures from the raw table (what a rollup-less service would run), with AnalyticsMessageMetrics' terms.
const ACCEPTED = `direction = 'outbound' and status <> 'revoked'`;
const SENT = `${ACCEPTED} and sent_at is not null`;
const RAW_METRICS = `count(*) filter (where ${SENT}) as sent,
  count(*) filter (where ${ACCEPTED} and status in ('delivered', 'read')) as delivered,
  count(*) filter (where ${ACCEPTED} and status = 'read') as read,
  count(*) filter (where ${ACCEPTED} and status in ('failed', 'undeliverable')) as failed,
  count(*) filter (where direction = 'inbound') as received,
  count(*) filter (where ${SENT} and requested_channel = 'RCS' and channel in ('SMS', 'MMS')) as fallback,
  coalesce(sum(cost_units) filter (where ${ACCEPTED}), 0) as cost_units`;
const RAW = {
  overview: (unit: 'hour' | 'day', brand?: string) => `select date_trunc('${unit}', created_at at time zone 'UTC') as bucket, ${RAW_METRICS}
    from messages where organization_id = $1 and created_at >= $2 and created_at < $3${brand ? ` and brand_registration_id = '${brand}'` : ''}
    group by 1 order by 1`,
  usage: `select date_trunc('day', created_at at time zone 'UTC') as day,
      coalesce(sum(segments) filter (where cost_units = segments * 39), 0) as text_segments, count(*) filter (where cost_units = 150) as rich, coalesce(sum(cost_units), 0) as cost_units
    from messages where organization_id = $1 and created_at >= $2 and created_at < $3 and cost_units is not null group by 1 order by 1`,
  senders: `select sender_id, ${RAW_METRICS} from messages where organization_id = $1 and created_at >= $2 and created_at < $3 group by 1`,
};

type RawRow = { sent: string; delivered: string; read: string; failed: string; received: string; fallback: string; cost_units: string };
const sumRaw = (rows: RawRow[]) =>
  rows.reduce(
    (a, r) => ({
      sent: a.sent + Number(r.sent),
      delivered: a.delivered + Number(r.delivered),
      failed: a.failed + Number(r.failed),
      costUnits: a.costUnits + Number(r.cost_units),
    }),
    { sent: 0, delivered: 0, failed: 0, costUnits: 0 },
  );

/** Lines are printed as they are measured (the part takes minutes); nothing is left to return. */
export async function benchAnalytics(ctx: OwnDataBench): Promise<string[]> {
  const out = { push: (line: string) => console.log(line) };
  const { db } = createDb(ctx.databaseUrl, 2);
  const org = await createOrganization(db, loadDocument(), 'Analytics bench org');
  await db.destroy();
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 2 });
  pool.on('error', () => {}); // the run's database stops under an idle client when the run ends
  const today = new Date(`${iso(new Date())}T00:00:00Z`);
  const start = new Date(today.getTime() - 364 * DAY); // 365 days, today included
  const seeded = await seed(pool, org.organizationId, start);
  out.push(`(r) analytics over ${fmt(TOTAL)} messages of one organization over 365 days (20 senders, 1,000 conversations)`);
  const rollupRows = await rollupRowsOf(pool, org.organizationId);
  out.push(
    `      seeded set-based in ${fmt(seeded.seconds, 1)} s (${fmt(TOTAL / seeded.seconds)} rows/s) + indexes rebuilt in ${fmt(seeded.indexSeconds, 1)} s + rollup built in ${fmt(seeded.rollupSeconds, 1)} s (migration 0028's backfill statements, then VACUUM ANALYZE): ${fmt(rollupRows)} hourly rollup rows (${fmt(TOTAL / rollupRows, 1)} messages per row), ${fmt(await dailyRowsOf(pool, org.organizationId))} daily`,
  );
  try {
    await measureAnalytics(ctx, pool, { organizationId: org.organizationId, apiKey: org.apiKey.secret }, start, today);
  } finally {
    await pool.end();
  }
  return [];
}

const dailyRowsOf = async (pool: pg.Pool, orgId: string) =>
  Number((await pool.query('select count(*) as n from analytics_message_rollups_daily where organization_id = $1', [orgId])).rows[0].n);
const rollupRowsOf = async (pool: pg.Pool, orgId: string) =>
  Number((await pool.query('select count(*) as n from analytics_message_rollups where organization_id = $1', [orgId])).rows[0].n);

/** The timings and the export, against an organization already seeded (by benchAnalytics) from `start` to `today`. */
async function measureAnalytics(
  ctx: Pick<OwnDataBench, 'databaseUrl' | 'env' | 'freePort' | 'waitFor' | 'children'>,
  pool: pg.Pool,
  org: { organizationId: string; apiKey: string },
  start: Date,
  today: Date,
  parts: { timings: boolean } = { timings: true },
): Promise<void> {
  const out = { push: (line: string) => console.log(line) };
  const port = await ctx.freePort();
  const child = spawn(process.execPath, ['src/main.js'], {
    env: { ...ctx.env, PORT: String(port), RUN_WORKERS: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  ctx.children.push({ kill: () => child.kill('SIGKILL') });
  try {
    const base = `http://127.0.0.1:${port}`;
    await ctx.waitFor(`${base}/health`);
    const headers = { authorization: `Bearer ${org.apiKey}` };
    const api = async (path: string) => {
      const res = await fetch(base + path, { headers });
      const body = (await res.json()) as { data: any };
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      return body.data;
    };
    const raw = async (text: string, from: Date, to: Date) => (await pool.query(text, [org.organizationId, from, to])).rows as RawRow[];

    if (parts.timings) {
      const year = { startDate: iso(start), endDate: iso(today) };
      const week = { startDate: iso(new Date(today.getTime() - 6 * DAY)), endDate: iso(today) };
      const end = new Date(today.getTime() + DAY);
      const cases = [
        {
          label: 'overview, hour over 7 days',
          path: `/v1/analytics/overview?granularity=hour&startDate=${week.startDate}&endDate=${week.endDate}`,
          raw: RAW.overview('hour'),
          from: new Date(today.getTime() - 6 * DAY),
          totals: (d: any) => d.messages,
        },
        {
          label: 'overview, day over 365 days',
          path: `/v1/analytics/overview?granularity=day&startDate=${year.startDate}&endDate=${year.endDate}`,
          raw: RAW.overview('day'),
          from: start,
          totals: (d: any) => d.messages,
        },
        {
          label: 'overview, day, 365 d, brandId',
          path: `/v1/analytics/overview?granularity=day&startDate=${year.startDate}&endDate=${year.endDate}&brandId=${brandOf.get(org.organizationId) ?? ''}`,
          raw: RAW.overview('day', brandOf.get(org.organizationId)),
          from: start,
          totals: (d: any) => d.messages,
        },
        {
          label: 'usage, day over 365 days',
          path: `/v1/analytics/usage?granularity=day&startDate=${year.startDate}&endDate=${year.endDate}`,
          raw: RAW.usage,
          from: start,
          totals: null,
        },
        {
          label: 'sender list over 365 days',
          path: `/v1/analytics/sender-ids?startDate=${year.startDate}&endDate=${year.endDate}`,
          raw: RAW.senders,
          from: start,
          totals: null,
        },
      ];
      out.push(
        `      through HTTP (server process), median of ${RUNS} after a warm-up; beside it the same figures from the raw messages table (median of ${RAW_RUNS} after a warm-up)`,
      );
      let exact = true;
      for (const c of cases) {
        let viaApi: Awaited<ReturnType<typeof timed<any>>>;
        try {
          viaApi = await timed(() => api(c.path));
        } catch (err) {
          out.push(
            `        ${c.label.padEnd(30)} ✗ FAILED: ${(err as Error).message} (${(err as { cause?: Error }).cause?.message ?? ''})`,
          );
          exact = false;
          continue;
        }
        const viaRaw = await timed(() => raw(c.raw, c.from, end), RAW_RUNS);
        if (c.totals) {
          const t = c.totals(viaApi.value);
          const r = sumRaw(viaRaw.value);
          const same =
            t.sent === r.sent &&
            t.delivered === r.delivered &&
            t.failed === r.failed &&
            Math.round(Number(t.cost.amount) * 10_000) === r.costUnits;
          exact &&= same;
          if (!same) out.push(`      ✗ ${c.label}: API ${JSON.stringify(t)} ≠ raw ${JSON.stringify(r)}`);
        }
        out.push(
          `        ${c.label.padEnd(30)} ${fmt(viaApi.ms, 1).padStart(10)} ms  (${goal(viaApi.ms)})${runsNote(viaApi, RUNS)}   raw table ${fmt(viaRaw.ms, 0).padStart(7)} ms${runsNote(viaRaw, RAW_RUNS)}   raw/API ${fmt(viaRaw.ms / viaApi.ms, 1)}x`,
        );
      }
      // Where the overview's time goes: its message figures alone (rollup plus pending deltas, in-process, no HTTP).
      const { db: systemDb } = createDb(ctx.databaseUrl, 2);
      const qdb = bindTenant(systemDb, org.organizationId, await loadTenantTables(systemDb)); // as a request's queries run
      const span = { from: start, to: end };
      const dailyRows = await dailyRowsOf(pool, org.organizationId);
      const rollupOnly = await timed(() =>
        Promise.all([rollupTimeline(qdb, org.organizationId, span, 'day'), rollupSessions(qdb, org.organizationId, span.from, span.to)]),
      );
      await systemDb.destroy();
      out.push(
        `        of which the message figures and sessions (daily timeline, totals summed from it, and the session count, from ${fmt(dailyRows)} daily rollup rows) ${fmt(rollupOnly.ms, 1)} ms (${goal(rollupOnly.ms)}); the rest is the organization-wide counts (src/db/queries/analytics/activity.ts: conversations, contacts, opt-outs, read from their tables)`,
      );
      out.push(`      overview totals equal to the raw table's (sent, delivered, failed, cost to the unit): ${exact ? '✓' : '✗ MISMATCH'}`);
    }

    // Exports of the most recent days holding at least a tenth of EXPORT_ROWS, then EXPORT_ROWS messages, in the same
    // server: the process's RSS high-water mark after each shows whether memory follows the size (it must not).
    const perDay = (
      await pool.query(
        `select date_trunc('day', created_at at time zone 'UTC') as d, count(*) as n from messages where organization_id = $1 group by 1 order by 1 desc`,
        [org.organizationId],
      )
    ).rows as Array<{ d: Date; n: string }>;
    const rangeOf = (wanted: number) => {
      let rows = 0;
      let firstDay = today;
      for (const r of perDay) {
        rows += Number(r.n);
        firstDay = new Date(Date.UTC(r.d.getFullYear(), r.d.getMonth(), r.d.getDate()));
        if (rows >= wanted) break;
      }
      return { rows, firstDay };
    };
    const exportOf = async (wanted: number) => {
      const { rows, firstDay } = rangeOf(wanted);
      const before = rssOf(child.pid!);
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/analytics/export`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'text/csv' },
        body: JSON.stringify({ type: 'messages', startDate: iso(firstDay), endDate: iso(today) }),
      });
      if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
      let lines = 0;
      let bytes = 0;
      for await (const chunk of res.body) {
        bytes += chunk.length;
        for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
      }
      const seconds = (performance.now() - t0) / 1000;
      const after = rssOf(child.pid!);
      const exported = lines - 1;
      out.push(
        `      export of ${fmt(exported)} messages (${iso(firstDay)} … ${iso(today)}, synchronous CSV streamed over HTTP, ${fmt(bytes / 1e6, 0)} MB): ${fmt(seconds, 1)} s, ${fmt(exported / seconds)} rows/s${exported === rows ? '' : ` ✗ expected ${fmt(rows)} rows`}; server RSS high-water mark ${fmt(before.peak)} → ${fmt(after.peak)} MB`,
      );
    };
    out.push(`      server RSS before the exports: ${fmt(rssOf(child.pid!).now)} MB`);
    await exportOf(EXPORT_ROWS / 10);
    await exportOf(EXPORT_ROWS);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}
