// exportAnalytics and downloadAnalyticsExport through HTTP: the synchronous CSV checked against direct SQL, the
// asynchronous lifecycle (pending → 409 EXPORT_PENDING → the job → complete → the CSV with a neutralised `=cell`;
// 404 EXPORT_EXPIRED after expiry; 500 EXPORT_FAILED), 429 TOO_MANY_EXPORTS beyond 3 per organization and process,
// tenancy and 403; the signed downloadUrl (works without a key, 403 when altered, 404 LINK_EXPIRED past expiry);
// a messages export larger than one keyset batch, with ties on created_at, streamed whole and exactly once. The
// server runs without workers: the test runs the export job itself (runExport), so every state is observed
// deterministically.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { exportNow, resetExportSlots, runExport, type ExportType } from '../src/domain/analytics/exports.ts';
import { BATCH_ROWS } from '../src/domain/analytics/datasets.ts';
import { ApiError } from '../src/domain/errors.ts';
import { signUrl } from '../src/lib/signed-urls.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import type { MessageStatus } from '../src/db/tables/enums.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;

let srv: TestServer;
let orgA: Org;
let orgB: Org;
let evilSender: string;
const day = '2026-10-05';
const at = (h: number) => new Date(Date.parse(`${day}T00:00:00Z`) + h * 3_600_000);

async function seed(org: Org, senderId: string, n: number, status: MessageStatus) {
  const db = srv.context.db;
  const contact = await db
    .insertInto('contacts')
    .values({ organization_id: org.organizationId, phone: `+1415555${String(1000 + n)}`, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const conv = await db
    .insertInto('conversations')
    .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: senderId, source_type: 'api' })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let i = 0; i < n; i++) {
    await db
      .insertInto('messages')
      .values({
        organization_id: org.organizationId,
        conversation_id: conv.id,
        contact_id: contact.id,
        contact_phone: '+14155550100',
        sender_id: senderId,
        direction: 'outbound',
        status,
        channel: 'SMS',
        requested_channel: 'SMS',
        message_type: 'TRANSACTIONAL',
        cost_units: 39,
        segments: 1,
        content: JSON.stringify({ type: 'text', text: 'hi' }),
        origin: 'api',
        created_at: at(i + 1),
        sent_at: at(i + 1), // handed to a carrier: `sent` (AnalyticsMessageMetrics)
      })
      .execute();
  }
}

beforeAll(async () => {
  srv = await startTestServer({ config: { webhookAllowPrivate: true } });
  [orgA, orgB] = await Promise.all([srv.newOrg('Exports A'), srv.newOrg('Exports B')]);
  evilSender = (
    await srv.context.db
      .insertInto('sender_ids')
      .values({
        organization_id: orgA.organizationId,
        name: '=HYPERLINK("http://evil")',
        type: 'RCS_AGENT',
        status: 'ACTIVE',
        provider: 'PROVIDER_B',
        phone_number: null,
        is_sandbox: true,
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  await seed(orgA, orgA.senderId, 3, 'delivered');
  await seed(orgA, evilSender, 2, 'failed');
  await seed(orgB, orgB.senderId, 4, 'delivered');
});
beforeEach(() => resetExportSlots());
afterAll(() => srv.close());

const post = (org: Org, body: unknown, csv = false) =>
  call(srv, 'POST', '/v1/analytics/export', { key: org.apiKey.secret, body, headers: csv ? { accept: 'text/csv' } : {} });

describe('synchronous export (Accept: text/csv)', () => {
  it('returns the overview CSV of the range, equal to direct SQL, with its file name', async () => {
    const res = await post(orgA, { type: 'overview', startDate: day, endDate: '2026-10-06' }, true);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="analytics-overview-${day}-2026-10-06.csv"`);
    const ref = (
      await sql<{ sent: string; delivered: string; failed: string; cost: string }>`
      select count(*) filter (where sent_at is not null) as sent, count(*) filter (where status in ('delivered', 'read')) as delivered, count(*) filter (where status in ('failed', 'undeliverable')) as failed, sum(cost_units) as cost
      from messages where organization_id = ${orgA.organizationId} and created_at >= ${at(0)} and created_at < ${at(24)}`.execute(
        srv.context.db,
      )
    ).rows[0]!;
    expect(res.text).toBe(
      [
        'date,sent,delivered,read,failed,received,fallback,cost,currency',
        `${day},${ref.sent},${ref.delivered},0,${ref.failed},0,0,${(Number(ref.cost) / 10_000).toFixed(4)},USD`,
        '2026-10-06,0,0,0,0,0,0,0.0000,USD',
        '',
      ].join('\r\n'),
    );
  });

  it('exports the messages with the report’s columns, 400 beyond 366 days or for startDate after endDate', async () => {
    const res = await post(orgA, { type: 'messages', startDate: day, endDate: day, filters: { senderId: evilSender } }, true);
    expect(res.status, res.text).toBe(200);
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines[0]!.startsWith('messageId,kind,direction,createdAt')).toBe(true);
    expect(lines).toHaveLength(3);
    expect((await post(orgA, { type: 'overview', startDate: '2025-01-01', endDate: '2026-10-06' }, true)).status).toBe(400);
    expect((await post(orgA, { type: 'overview', startDate: '2026-10-07', endDate: '2026-10-06' }, true)).status).toBe(400);
  });
});

describe('asynchronous export', () => {
  it('goes pending (409) → complete (the CSV, `=` cells neutralised) → expired (404)', async () => {
    const res = await post(orgA, { type: 'sender-ids', startDate: day, endDate: day });
    expect(res.status, res.text).toBe(200);
    const e = res.body.data;
    expect(e).toMatchObject({
      type: 'sender-ids',
      status: 'pending',
      downloadUrl: expect.stringMatching(
        new RegExp(`/v1/analytics/export/${e.exportId}/download\\?org=${orgA.organizationId}&expires=\\d+&signature=[\\w-]{43}$`),
      ),
    });
    expect(Number(new URL(e.downloadUrl).searchParams.get('expires'))).toBe(Math.floor(Date.parse(e.expiresAt) / 1000));
    expect(Date.parse(e.expiresAt) - Date.parse(e.createdAt)).toBe(3_600_000);
    const pending = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgA.apiKey.secret });
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('EXPORT_PENDING');
    expect(pending.headers.get('retry-after')).toBe('5');
    // Another organization does not see it.
    const other = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgB.apiKey.secret });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('NOT_FOUND');

    await runExport(await tenantFor(srv.context, orgA.organizationId), srv.context, e.exportId);
    const row = (await sql<{ status: string }>`select status from analytics_exports where id = ${e.exportId}`.execute(srv.context.db))
      .rows[0]!;
    expect(row.status).toBe('complete');
    const done = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgA.apiKey.secret });
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get('content-disposition')).toBe(`attachment; filename="analytics-sender-ids-${day}-${day}.csv"`);
    const lines = done.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('senderId,name,sent,delivered,read,failed,received,fallback,cost,currency');
    expect(lines).toContain(`${evilSender},"'=HYPERLINK(""http://evil"")",2,0,0,2,0,0,0.0078,USD`);
    expect(lines.some((l) => l.startsWith(`${orgA.senderId},`) && l.includes(',3,3,0,0,0,0,0.0117,USD'))).toBe(true);
    // Downloadable again until expiry, then 404 EXPORT_EXPIRED.
    expect((await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgA.apiKey.secret })).status).toBe(200);
    await sql`update analytics_exports set expires_at = now() - interval '1 second' where id = ${e.exportId}`.execute(srv.context.db);
    const expired = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgA.apiKey.secret });
    expect(expired.status).toBe(404);
    expect(expired.body.code).toBe('EXPORT_EXPIRED');
    expect(
      (await call(srv, 'GET', '/v1/analytics/export/00000000-0000-4000-8000-000000000000/download', { key: orgA.apiKey.secret })).body.code,
    ).toBe('NOT_FOUND');
  });

  it('records a failed generation: the download answers 500 EXPORT_FAILED', async () => {
    const res = await post(orgA, { type: 'overview', startDate: day, endDate: day });
    const id = res.body.data.exportId as string;
    await sql`update analytics_exports set type = 'no-such-dataset' where id = ${id}`.execute(srv.context.db);
    await runExport(await tenantFor(srv.context, orgA.organizationId), srv.context, id);
    const failed = await call(srv, 'GET', `/v1/analytics/export/${id}/download`, { key: orgA.apiKey.secret });
    expect(failed.status).toBe(500);
    expect(failed.body.code).toBe('EXPORT_FAILED');
  });

  it('allows 3 concurrent exports per organization in this process: the 4th answers 429 (either mode), others unaffected', async () => {
    const org = await srv.newOrg('Exports limit');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(org, { type: 'protocols' });
      expect(r.status, r.text).toBe(200);
      ids.push(r.body.data.exportId);
    }
    const fourth = await post(org, { type: 'protocols' });
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe('TOO_MANY_EXPORTS');
    expect(fourth.headers.get('retry-after')).toBe('5');
    expect((await post(org, { type: 'protocols' }, true)).status).toBe(429);
    expect((await post(orgB, { type: 'protocols' }, true)).status).toBe(200);
    // One finishes: a slot is free again.
    await runExport(await tenantFor(srv.context, org.organizationId), srv.context, ids[0]!);
    expect((await post(org, { type: 'protocols' }, true)).status).toBe(200);
  });

  it('accepts 3 of 20 parallel asynchronous exports of one organization; the other 17 answer 429', async () => {
    const org = await srv.newOrg('Exports race');
    const started = await Promise.all(Array.from({ length: 20 }, () => post(org, { type: 'protocols' })));
    expect(started.filter((r) => r.status === 200)).toHaveLength(3); // pending until their jobs run (no workers here)
    expect(started.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.code}`)).toEqual(
      Array(17).fill('429 TOO_MANY_EXPORTS'),
    );
    const rows = await srv.context.db
      .selectFrom('analytics_exports')
      .select('id')
      .where('organization_id', '=', org.organizationId)
      .execute();
    expect(rows).toHaveLength(3);
  });

  it('needs analytics:create to export (403)', async () => {
    const key = await srv.newKey(orgA.organizationId, ['analytics:read']);
    const denied = await call(srv, 'POST', '/v1/analytics/export', { key: key.secret, body: { type: 'overview' } });
    expect(denied.status).toBe(403);
  });
});

/** The path and query of a link (the test server listens elsewhere than ASSET_BASE_URL). */
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
const withParam = (url: string, name: string, value: string) => {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return pathOf(u.toString());
};

describe('signed downloadUrl', () => {
  it('downloads without an API key; an altered signature, org, expiry or path answers 403; the key path and tenancy still hold', async () => {
    const hook = await call(srv, 'POST', '/v1/webhook-endpoints', {
      key: orgA.apiKey.secret,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['analytics_export.completed'] },
    });
    expect(hook.status, hook.text).toBe(201);
    const res = await post(orgA, { type: 'protocols', startDate: day, endDate: day });
    const e = res.body.data;
    // Pending: the link is authentic, the export not ready.
    const early = await call(srv, 'GET', pathOf(e.downloadUrl));
    expect(early.status, early.text).toBe(409);
    expect(early.body.code).toBe('EXPORT_PENDING');
    await runExport(await tenantFor(srv.context, orgA.organizationId), srv.context, e.exportId);

    const viaLink = await call(srv, 'GET', pathOf(e.downloadUrl));
    expect(viaLink.status, viaLink.text).toBe(200);
    expect(viaLink.text.split('\r\n')[0]).toBe('channel,sent,delivered,read,failed,received,fallback,cost,currency');
    const viaKey = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgA.apiKey.secret });
    expect(viaKey.status).toBe(200);
    expect(viaKey.text).toBe(viaLink.text);

    const sig = new URL(e.downloadUrl).searchParams.get('signature')!;
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    const expires = Number(new URL(e.downloadUrl).searchParams.get('expires'));
    for (const altered of [
      withParam(e.downloadUrl, 'signature', flipped),
      withParam(e.downloadUrl, 'org', orgB.organizationId),
      withParam(e.downloadUrl, 'expires', String(expires + 3600)),
      pathOf(e.downloadUrl).replace(e.exportId, '00000000-0000-4000-8000-000000000000'),
    ]) {
      const r = await call(srv, 'GET', altered);
      expect(r.status, altered).toBe(403);
      expect(r.body.code).toBe('INVALID_SIGNATURE');
    }
    // A link signed for another organization names that organization: its tenant does not hold the export.
    const foreign = signUrl('http://x', `/v1/analytics/export/${e.exportId}/download`, orgB.organizationId, new Date(Date.now() + 60_000));
    expect((await call(srv, 'GET', pathOf(foreign))).status).toBe(404);
    // Another organization's key: 404.
    const other = await call(srv, 'GET', `/v1/analytics/export/${e.exportId}/download`, { key: orgB.apiKey.secret });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('NOT_FOUND');
    // An authentic link past its expiry: 404 LINK_EXPIRED.
    const past = signUrl('http://x', `/v1/analytics/export/${e.exportId}/download`, orgA.organizationId, new Date(Date.now() - 1000));
    const gone = await call(srv, 'GET', pathOf(past));
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('LINK_EXPIRED');

    // The analytics_export.completed event carries the same kind of link.
    const event = await srv.context.db
      .selectFrom('webhook_events')
      .select('body')
      .where('organization_id', '=', orgA.organizationId)
      .where('type', '=', 'analytics_export.completed')
      .executeTakeFirstOrThrow();
    const data = JSON.parse(event.body).data;
    expect(data).toMatchObject({ exportId: e.exportId, status: 'complete', rowCount: 4 });
    const fromEvent = await call(srv, 'GET', pathOf(data.downloadUrl));
    expect(fromEvent.status).toBe(200);
    expect(fromEvent.text).toBe(viaLink.text);
  });
});

describe('messages export larger than one batch', () => {
  const N = BATCH_ROWS * 2 + 7;
  const big = '2026-09-01';
  let org: Org;
  beforeAll(async () => {
    org = await srv.newOrg('Exports big');
    const db = srv.context.db;
    const contact = await db
      .insertInto('contacts')
      .values({ organization_id: org.organizationId, phone: '+14155557001', attributes: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const conv = await db
      .insertInto('conversations')
      .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: org.senderId, source_type: 'api' })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Three messages per microsecond: batches end inside ties, below a JS Date's millisecond.
    await sql`
      insert into messages (organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, status, channel, requested_channel,
        message_type, cost_units, segments, content, origin, created_at, error_code)
      select ${org.organizationId}, ${conv.id}, ${contact.id}, '+14155557001', ${org.senderId}, 'outbound', 'delivered', 'SMS', 'SMS',
        'TRANSACTIONAL', 39, 1, '{"type":"text","text":"hi"}', 'api',
        ${`${big}T10:00:00Z`}::timestamptz + (i / 3) * interval '1 microsecond', case when i % 1000 = 0 then '=1+2' end
      from generate_series(0, ${N - 1}) as i`.execute(db);
  });

  it('streams every message exactly once, oldest first, synchronously and through the store, formulas neutralised', async () => {
    const res = await post(org, { type: 'messages', startDate: big, endDate: big }, true);
    expect(res.status).toBe(200);
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(N + 1);
    const ids = lines.slice(1).map((l) => l.split(',')[0]!);
    expect(new Set(ids).size).toBe(N);
    const expected = (
      await sql<{ id: string }>`select id from messages where organization_id = ${org.organizationId} order by created_at, id`.execute(
        srv.context.db,
      )
    ).rows.map((r) => r.id);
    expect(ids).toEqual(expected);
    expect(lines.filter((l) => l.includes(",'=1+2,"))).toHaveLength(Math.ceil(N / 1000));

    const started = await post(org, { type: 'messages', startDate: big, endDate: big });
    await runExport(await tenantFor(srv.context, org.organizationId), srv.context, started.body.data.exportId);
    const stored = await call(srv, 'GET', pathOf(started.body.data.downloadUrl));
    expect(stored.status).toBe(200);
    expect(stored.text).toBe(res.text);
  });

  it('a failure after the first chunk errors the stream (src/app.ts then cuts the connection) and frees the slot', async () => {
    const tenant = await tenantFor(srv.context, org.organizationId);
    for (let attempt = 0; attempt < 4; attempt++) {
      let reads = 0;
      // The database goes away after the first batch.
      const db = new Proxy(tenant.db, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target) as unknown;
          if (prop === 'selectFrom' && ++reads > 1) throw new Error('database went away');
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const { body } = await exportNow({ ...tenant, db }, { type: 'messages', startDate: big, endDate: big });
      let text = '';
      await expect(
        (async () => {
          for await (const chunk of body) text += String(chunk);
        })(),
      ).rejects.toThrow('database went away');
      expect(text.trimEnd().split('\r\n')).toHaveLength(BATCH_ROWS + 1);
      expect(body.destroyed).toBe(true);
    }
    expect((await post(org, { type: 'protocols' }, true)).status).toBe(200);
  });

  it('a synchronous failure before the first byte answers 500 EXPORT_FAILED and frees its slot', async () => {
    const tenant = await tenantFor(srv.context, org.organizationId);
    for (let i = 0; i < 4; i++) {
      const err = await exportNow(tenant, { type: 'no-such-dataset' as ExportType, startDate: big, endDate: big }).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(500);
      expect((err as ApiError).code).toBe('EXPORT_FAILED');
    }
    expect((await post(org, { type: 'protocols' }, true)).status).toBe(200);
  });
});
