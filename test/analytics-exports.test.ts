// exportAnalytics and downloadAnalyticsExport through HTTP: the synchronous CSV checked against direct SQL, the
// asynchronous lifecycle (pending → 409 EXPORT_PENDING → the job → complete → the CSV with a neutralised `=cell`;
// 404 EXPORT_EXPIRED after expiry; 500 EXPORT_FAILED), 429 TOO_MANY_EXPORTS beyond 3 per organization and process,
// tenancy and 403. The server runs without workers: the test runs the export job itself (runExport), so every
// state is observed deterministically.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { resetExportSlots, runExport } from '../src/domain/analytics/exports.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;

let srv: TestServer;
let orgA: Org;
let orgB: Org;
let evilSender: string;
const day = '2026-10-05';
const at = (h: number) => new Date(Date.parse(`${day}T00:00:00Z`) + h * 3_600_000);

async function seed(org: Org, senderId: string, n: number, status: string) {
  const db = srv.context.db;
  const contact = await db.insertInto('contacts').values({ organization_id: org.organizationId, phone: `+1415555${String(1000 + n)}`, attributes: '{}' }).returning('id').executeTakeFirstOrThrow();
  const conv = await db.insertInto('conversations').values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: senderId, source_type: 'api' }).returning('id').executeTakeFirstOrThrow();
  for (let i = 0; i < n; i++) {
    await db.insertInto('messages').values({
      organization_id: org.organizationId, conversation_id: conv.id, contact_id: contact.id, contact_phone: '+14155550100', sender_id: senderId,
      direction: 'outbound', status, channel: 'SMS', requested_channel: 'SMS', message_type: 'TRANSACTIONAL', cost_units: 39, segments: 1,
      content: JSON.stringify({ type: 'text', text: 'hi' }), origin: 'api', created_at: at(i + 1),
    }).execute();
  }
}

beforeAll(async () => {
  srv = await startTestServer();
  [orgA, orgB] = await Promise.all([srv.newOrg('Exports A'), srv.newOrg('Exports B')]);
  evilSender = (await srv.context.db.insertInto('sender_ids')
    .values({ organization_id: orgA.organizationId, name: '=HYPERLINK("http://evil")', type: 'RCS_AGENT', status: 'ACTIVE', provider: 'PROVIDER_B', phone_number: null, is_sandbox: true, updated_at: new Date() })
    .returning('id').executeTakeFirstOrThrow()).id;
  await seed(orgA, orgA.senderId, 3, 'delivered');
  await seed(orgA, evilSender, 2, 'failed');
  await seed(orgB, orgB.senderId, 4, 'delivered');
});
beforeEach(() => resetExportSlots());
afterAll(() => srv.close());

const post = (org: Org, body: unknown, csv = false) => call(srv, 'POST', '/v1/analytics/export', { key: org.apiKey.secret, body, headers: csv ? { accept: 'text/csv' } : {} });

describe('synchronous export (Accept: text/csv)', () => {
  it('returns the overview CSV of the range, equal to direct SQL, with its file name', async () => {
    const res = await post(orgA, { type: 'overview', startDate: day, endDate: '2026-10-06' }, true);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="analytics-overview-${day}-2026-10-06.csv"`);
    const ref = (await sql<{ sent: string; delivered: string; failed: string; cost: string }>`
      select count(*) as sent, count(*) filter (where status in ('delivered', 'read')) as delivered, count(*) filter (where status in ('failed', 'undeliverable')) as failed, sum(cost_units) as cost
      from messages where organization_id = ${orgA.organizationId} and created_at >= ${at(0)} and created_at < ${at(24)}`.execute(srv.context.db)).rows[0]!;
    expect(res.text).toBe([
      'date,sent,delivered,read,failed,received,fallback,cost,currency',
      `${day},${ref.sent},${ref.delivered},0,${ref.failed},0,0,${(Number(ref.cost) / 10_000).toFixed(4)},USD`,
      '2026-10-06,0,0,0,0,0,0,0.0000,USD',
      '',
    ].join('\r\n'));
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
    expect(e).toMatchObject({ type: 'sender-ids', status: 'pending', downloadUrl: expect.stringMatching(new RegExp(`/v1/analytics/export/${e.exportId}/download$`)) });
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
    const row = (await sql<{ status: string }>`select status from analytics_exports where id = ${e.exportId}`.execute(srv.context.db)).rows[0]!;
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
    expect((await call(srv, 'GET', '/v1/analytics/export/00000000-0000-4000-8000-000000000000/download', { key: orgA.apiKey.secret })).body.code).toBe('NOT_FOUND');
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

  it('needs analytics:create to export (403)', async () => {
    const key = await srv.newKey(orgA.organizationId, ['analytics:read']);
    const denied = await call(srv, 'POST', '/v1/analytics/export', { key: key.secret, body: { type: 'overview' } });
    expect(denied.status).toBe(403);
  });
});
