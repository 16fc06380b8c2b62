// The ledger (issue 34): one known scenario driven through HTTP, the dispatch worker and the carrier sandbox —
// direct sends (RCS read, SMS delivered, refused at send, undeliverable), a MARKETING send held for quiet hours,
// a blast with an opted-out recipient and a tracked link clicked — then every figure checked against the known truth, to the message and the
// cent: the overview, usage, the blast's stats and the message report rows agree with each other and with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Ledger org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

const minute = (offset: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 + offset * 60_000);
const hhmm = (d: Date) => d.toISOString().slice(11, 16);

async function contact(phone: string, quiet = false): Promise<string> {
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      attributes: '{}',
      rcs_capable: null,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      // Quiet now, or a one-minute quiet period three hours away: never the default 21:00–08:00, which
      // held every MARKETING send of a run after 21:00 UTC.
      ...(quiet
        ? { quiet_hours_start: hhmm(minute(-60)), quiet_hours_end: hhmm(minute(120)) }
        : { quiet_hours_start: hhmm(minute(180)), quiet_hours_end: hhmm(minute(181)) }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const send = async (contactId: string, messageType = 'TRANSACTIONAL') => {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, messageType, content: { type: 'text', text: 'Ledger' } },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { messageId: string; status: string };
};

const get = async (path: string) => {
  const res = await call(srv, 'GET', path, { key });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

describe('the ledger', () => {
  it('every figure to the message and the cent', async () => {
    // Sandbox numbers: last digit 0–4 RCS-capable (RCS, read a second after delivery), 5–9 SMS only;
    // …0777 refused at send, …0666 accepted then undeliverable.
    const rcs = await contact('+14155550010');
    const sms = await contact('+14155550015');
    const refused = await contact('+14155550777');
    const lost = await contact('+14155550666');
    const held = await contact('+14155550025', true);
    const [b1, b2, b3] = [await contact('+14155550031'), await contact('+14155550036'), await contact('+14155550046')];
    await srv.context.db
      .insertInto('opt_outs')
      .values({
        organization_id: org.organizationId,
        phone: '+14155550046',
        source: 'KEYWORD',
        keyword: 'STOP',
        opted_out_at: new Date(Date.now() - 86_400_000),
      })
      .execute();

    const direct = [await send(rcs), await send(sms), await send(refused), await send(lost)];
    const hold = await send(held, 'MARKETING');
    expect(hold.status).toBe('held');

    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Ledger blast',
        senderId: org.senderId,
        messageType: 'MARKETING',
        trackLinks: true,
        contactIds: [b1, b2, b3],
        contentJson: { type: 'text', text: 'Ledger https://shop.example.com/sale' },
      },
    });
    expect(blast.status, blast.text).toBe(201);
    const blastId: string = blast.body.id;
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/launch`, { key })).status).toBe(200);

    // Settled: RCS ones read, SMS ones delivered, the refused one failed, the lost one undeliverable.
    const settled = await until(
      () =>
        srv.context.db
          .selectFrom('messages')
          .select(['id', 'status', 'channel', 'cost_units'])
          .where('organization_id', '=', org.organizationId)
          .execute(),
      (rows) =>
        rows.length === 7 &&
        rows.filter((r) => r.status === 'read').length === 2 &&
        rows.filter((r) => r.status === 'delivered').length === 2 &&
        rows.filter((r) => r.status === 'failed' || r.status === 'undeliverable').length === 2,
      'every message settled',
      30_000,
    );
    const statusOf = new Map(settled.map((r) => [r.id, r.status]));
    // One blast recipient clicks its tracked link twice: one message clicked.
    const b1Message = await srv.context.db
      .selectFrom('message_links')
      .select('code')
      .where('contact_id', '=', b1)
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 2; i++) expect((await fetch(`${srv.baseUrl}/l/${b1Message.code}`, { redirect: 'manual' })).status).toBe(302);
    expect(direct.map((d) => statusOf.get(d.messageId))).toEqual(['read', 'delivered', 'failed', 'undeliverable']);

    // The truth: handed to a carrier 2 RCS + 2 SMS + the undeliverable one = 5 (the refused one never was, the
    // held one not yet); delivered 4 (read included), read 2, failed 2 (refused + undeliverable).
    const overview = (await get('/v1/analytics/overview')).data.messages;
    expect(overview).toMatchObject({ sent: 5, delivered: 4, read: 2, failed: 2, deliveryRate: 0.8, readRate: 0.5 });
    // Billed: each of the 5 handed messages one text segment (RCS text is billed per segment too) at 0.0039 USD;
    // the refused and the held one nothing.
    const billed = settled.reduce((s, r) => s + (r.cost_units ?? 0), 0);
    expect(billed).toBe(5 * 39);
    const money = (units: number) => `${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}`;
    expect(overview.cost.amount).toBe('0.0195');

    const usage = (await get('/v1/analytics/usage')).data;
    expect(usage.total.amount).toBe('0.0195');
    const line = (item: string) => usage.lines.find((l: { item: string }) => l.item === item);
    expect(line('text_segment')).toMatchObject({ quantity: 5, unitPrice: { amount: '0.0039' }, cost: { amount: '0.0195' } });
    expect(line('rich_message')).toMatchObject({ quantity: 0 });

    const stats = await get(`/v1/blasts/${blastId}/stats`);
    expect(stats).toMatchObject({ recipients: 2, sent: 2, delivered: 2, read: 1, failed: 0, clicks: 1, cost: { amount: '0.0078' } });
    expect(stats.rates).toMatchObject({ delivery: 1, read: 0.5, click: 0.5 });

    const report = (await get('/v1/reports/messages?kind=mdr&limit=100')).data as Array<{
      messageId: string;
      blastId: string | null;
      status: string;
      cost: { amount: string } | null;
    }>;
    expect(report).toHaveLength(7);
    expect(report.filter((r) => r.blastId === blastId)).toHaveLength(2);
    const reportUnits = report.reduce((s, r) => s + (r.cost ? Math.round(Number(r.cost.amount) * 10_000) : 0), 0);
    expect(money(reportUnits)).toBe(money(billed));
    expect(report.find((r) => r.messageId === hold.messageId)).toMatchObject({ status: 'held', cost: null });
  });
});
