// Scheduled reports by email: the scheduler job (runDueReports, what the pg-boss job runs) sends a due report
// through a real SMTP server started here (the smtp-server package): envelope recipients, To, Subject, the CSV
// attachments byte for byte equal to the synchronous export of the same dataset and period; lastSentAt recorded and
// nextRunAt moved. A refused send records nothing and the report stays due (the retry sends it); a CSV too large to
// attach is linked by a signed download link; without SMTP_URL the message is written as an .eml file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import type { AppContext } from '../src/app-context.ts';
import { ATTACHMENT_LIMIT_BYTES, reportPeriod } from '../src/domain/analytics/report-runs.ts';
import { runDueReports } from '../src/jobs/analytics.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { freePort } from './support/processes.ts';

type Received = { from: string; to: string[]; raw: string };
type Org = Awaited<ReturnType<TestServer['newOrg']>>;

let srv: TestServer;
let smtp: SMTPServer;
let port: number;
const inbox: Received[] = [];
/** When set, the server refuses the message body with this reply. */
let refuse: string | null = null;
const outbox = mkdtempSync(join(tmpdir(), 'reports-outbox-'));

beforeAll(async () => {
  port = await freePort();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuse) return callback(Object.assign(new Error(refuse), { responseCode: 451 }));
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
  srv = await startTestServer({
    config: { mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Reports <reports@example.com>', dir: outbox } },
  });
});
afterAll(async () => {
  await srv.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  rmSync(outbox, { recursive: true, force: true });
});

// ---- a minimal MIME reader (headers, multipart parts, base64 bodies): enough for what nodemailer writes
type Part = { headers: Map<string, string>; body: string };
function parsePart(text: string): Part {
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body: text.slice(split + 4) };
}
function partsOf(raw: string): Part[] {
  const top = parsePart(raw);
  const boundary = /boundary="?([^";]+)"?/.exec(top.headers.get('content-type') ?? '')?.[1];
  if (!boundary) return [top];
  return top.body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((p) => parsePart(p.replace(/^\r\n/, '')));
}
function attachments(raw: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of partsOf(raw)) {
    const name = /filename="?([^";]+)"?/.exec(p.headers.get('content-disposition') ?? '')?.[1];
    if (name) out.set(name, Buffer.from(p.body.replace(/\s+/g, ''), 'base64').toString('utf8'));
  }
  return out;
}
function textOf(raw: string): string {
  const p = partsOf(raw).find((x) => (x.headers.get('content-type') ?? '').startsWith('text/plain'))!;
  const enc = p.headers.get('content-transfer-encoding');
  if (enc === 'base64') return Buffer.from(p.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (enc === 'quoted-printable')
    return p.body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return p.body;
}

const DAY = 86_400_000;
const iso = (d: Date) => d.toISOString().slice(0, 10);

/** Creates a weekly report over HTTP and makes it due (its next run one minute ago). */
async function dueReport(org: Org, body: Record<string, unknown>) {
  const created = await call(srv, 'POST', '/v1/analytics/reports', {
    key: org.apiKey.secret,
    body: { name: 'Weekly summary', frequency: 'weekly', dayOfWeek: 1, recipients: ['ops@example.com', 'cfo@example.com'], ...body },
  });
  expect(created.status, created.text).toBe(201);
  const runAt = new Date(Date.now() - 60_000);
  await srv.context.db.updateTable('analytics_reports').set({ next_run_at: runAt }).where('id', '=', created.body.data.id).execute();
  return { id: created.body.data.id as string, runAt, period: reportPeriod('weekly', runAt) };
}

async function seedMessages(org: Org, n: number, day: string) {
  const db = srv.context.db;
  const contact = await db
    .insertInto('contacts')
    .values({ organization_id: org.organizationId, phone: `+1415555${String(2000 + (n % 7000))}`, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const conv = await db
    .insertInto('conversations')
    .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: org.senderId, source_type: 'api' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await sql`
    insert into messages (organization_id, conversation_id, contact_id, contact_phone, sender_id, direction, status, channel, requested_channel,
      message_type, cost_units, segments, content, origin, created_at, sent_at)
    select ${org.organizationId}, ${conv.id}, ${contact.id}, '+14155550100', ${org.senderId}, 'outbound', case when i % 4 = 0 then 'failed' else 'delivered' end,
      'SMS', 'SMS', 'TRANSACTIONAL', 39, 1, '{"type":"text","text":"hi"}', 'api', ${`${day}T09:00:00Z`}::timestamptz + i * interval '1 millisecond',
      -- every one handed to a carrier (sent, as AnalyticsMessageMetrics defines it); the failures came after
      ${`${day}T09:00:00Z`}::timestamptz + i * interval '1 millisecond'
    from generate_series(1, ${n}) as i`.execute(db);
}

const syncExport = async (org: Org, type: string, p: { startDate: string; endDate: string }) =>
  (
    await call(srv, 'POST', '/v1/analytics/export', {
      key: org.apiKey.secret,
      body: { type, startDate: p.startDate, endDate: p.endDate },
      headers: { accept: 'text/csv' },
    })
  ).text;

const stored = (id: string) => srv.context.db.selectFrom('analytics_reports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('scheduled report email over SMTP', () => {
  it('sends the due report to its recipients with the CSVs attached, records lastSentAt and moves nextRunAt', async () => {
    const org = await srv.newOrg('Reports mail');
    const { id, period } = await dueReport(org, { name: 'Mail summary', datasets: ['overview', 'protocols'] });
    await seedMessages(org, 8, period.startDate);
    const mine = () => inbox.filter((m) => parsePart(m.raw).headers.get('subject')?.startsWith('Mail summary:'));
    await runDueReports(srv.context);
    expect(mine()).toHaveLength(1);
    const mail = mine()[0];
    expect(mail!.to.sort()).toEqual(['cfo@example.com', 'ops@example.com']);
    expect(mail!.from).toBe('reports@example.com');
    const top = parsePart(mail!.raw);
    expect(top.headers.get('to')).toBe('ops@example.com, cfo@example.com');
    expect(top.headers.get('subject')).toBe(`Mail summary: ${period.startDate} to ${period.endDate}`);
    const files = attachments(mail!.raw);
    expect([...files.keys()]).toEqual(['overview.csv', 'protocols.csv']);
    expect(files.get('overview.csv')).toBe(await syncExport(org, 'overview', period));
    expect(files.get('protocols.csv')).toBe(await syncExport(org, 'protocols', period));
    expect(files.get('overview.csv')!.split('\r\n')[1]).toBe(`${period.startDate},8,6,0,2,0,0,0.0312,USD`);
    const text = textOf(mail!.raw);
    expect(text).toContain('Messages sent: 8');
    expect(text).toContain('Cost: 0.0312 USD');

    const row = await stored(id);
    expect(row.last_sent_at).not.toBeNull();
    expect(row.next_run_at!.getTime()).toBeGreaterThan(Date.now());
    const view = (await call(srv, 'GET', '/v1/analytics/reports', { key: org.apiKey.secret })).body.data[0];
    expect(view.lastSentAt).toBe(row.last_sent_at!.toISOString());
    // Not due any more: the next tick sends nothing.
    await runDueReports(srv.context);
    expect(mine()).toHaveLength(1);
  });

  it('a refused send records nothing: the report stays due, the job fails (pg-boss retries), and the retry sends it', async () => {
    const org = await srv.newOrg('Reports refused');
    const { id, runAt } = await dueReport(org, { name: 'Refused summary' });
    const mine = () => inbox.filter((m) => parsePart(m.raw).headers.get('subject')?.startsWith('Refused summary:'));
    refuse = 'mailbox busy, try later';
    try {
      await expect(runDueReports(srv.context)).rejects.toThrow(/scheduled report/);
    } finally {
      refuse = null;
    }
    const after = await stored(id);
    expect(after.last_sent_at).toBeNull();
    expect(after.last_run_at).toBeNull();
    expect(after.next_run_at!.getTime()).toBe(runAt.getTime());
    expect(mine()).toHaveLength(0);
    expect(after.send_failures).toBe(1);
    expect(after.retry_at!.getTime() - Date.now()).toBeGreaterThan(4 * 60_000);
    // Not tried again before its backoff; then sent, and the failures cleared.
    await runDueReports(srv.context);
    expect(mine()).toHaveLength(0);
    await runDueReports(srv.context, new Date(after.retry_at!.getTime() + 1000));
    expect(mine()).toHaveLength(1);
    const sent = await stored(id);
    expect(sent.last_sent_at).not.toBeNull();
    expect([sent.send_failures, sent.retry_at]).toEqual([0, null]);
  });

  it('backs a report off as sends keep being refused (5 minutes doubling, at most 6 hours), and an edit clears the backoff', async () => {
    const org = await srv.newOrg('Reports backoff');
    const { id } = await dueReport(org, { name: 'Backoff summary' });
    refuse = 'mailbox unavailable';
    const waits: number[] = [];
    try {
      let at = new Date();
      for (let i = 0; i < 9; i++) {
        await expect(runDueReports(srv.context, at)).rejects.toThrow(/scheduled report/);
        const row = await stored(id);
        waits.push((row.retry_at!.getTime() - at.getTime()) / 60_000);
        at = new Date(row.retry_at!.getTime() + 1000);
      }
    } finally {
      refuse = null;
    }
    expect(waits).toEqual([5, 10, 20, 40, 80, 160, 320, 360, 360]);
    const edited = await call(srv, 'PATCH', `/v1/analytics/reports/${id}`, {
      key: org.apiKey.secret,
      body: { recipients: ['ops@example.com'] },
    });
    expect(edited.status, edited.text).toBe(200);
    expect([(await stored(id)).send_failures, (await stored(id)).retry_at]).toEqual([0, null]);
  });

  it('links a CSV too large to attach with a signed download link that serves the stored file', async () => {
    const org = await srv.newOrg('Reports large');
    const { period } = await dueReport(org, { name: 'Large summary', datasets: ['overview', 'messages'] });
    // Under 300 bytes per message row: enough rows to pass the attachment limit.
    await seedMessages(org, Math.ceil(ATTACHMENT_LIMIT_BYTES / 200), period.startDate);
    await runDueReports(srv.context);
    const mail = inbox.find((m) => parsePart(m.raw).headers.get('subject')?.startsWith('Large summary:'))!;
    expect([...attachments(mail.raw).keys()]).toEqual(['overview.csv']);
    const text = textOf(mail.raw);
    const link = /messages\.csv \(\d+ rows, too large to attach; link valid 7 days\): (\S+)/.exec(text)?.[1];
    expect(link).toBeDefined();
    const u = new URL(link!);
    const res = await call(srv, 'GET', `${u.pathname}${u.search}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(await syncExport(org, 'messages', period));
    expect(Number(u.searchParams.get('expires')) * 1000 - Date.now()).toBeGreaterThan(6 * DAY);
  });
});

describe('without SMTP_URL', () => {
  it('writes the message as an .eml file under the outbox directory', async () => {
    const org = await srv.newOrg('Reports eml');
    const dir = join(outbox, 'no-smtp');
    const { id, runAt, period } = await dueReport(org, { name: 'Eml summary', recipients: ['team@example.com'] });
    const app: AppContext = {
      ...srv.context,
      config: { ...srv.context.config, mail: { smtpUrl: undefined, from: 'Reports <reports@example.com>', dir } },
    };
    await runDueReports(app);
    expect(inbox.filter((m) => m.to.includes('team@example.com'))).toHaveLength(0);
    const file = `${iso(runAt)}-${id}.eml`;
    expect(readdirSync(dir)).toContain(file);
    const raw = readFileSync(join(dir, file), 'utf8');
    const top = parsePart(raw);
    expect(top.headers.get('to')).toBe('team@example.com');
    expect(top.headers.get('subject')).toBe(`Eml summary: ${period.startDate} to ${period.endDate}`);
    expect(attachments(raw).get('overview.csv')).toBe(await syncExport(org, 'overview', period));
    expect((await stored(id)).last_sent_at).not.toBeNull();
  });
});
