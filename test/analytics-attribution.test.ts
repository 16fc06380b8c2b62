// Every figure tells what happened (issue 34 items 1 and 2), through HTTP, the dispatch worker and the carrier
// simulator: a message records its sender's program, brand and campaign registration when it is stored (and a
// later detach does not rewrite it), the message report shows and filters them, and the analytics filters
// (brandId, campaignId) count exactly those messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

const BRAND = {
  entityType: 'PRIVATE_PROFIT',
  displayName: 'Figures Dental',
  companyName: 'Figures Dental Group LLC',
  taxId: '12-3456789',
  email: 'compliance@figures.example',
  phone: '+14155550100',
  street: '500 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postalCode: '94105',
  country: 'US',
  vertical: 'HEALTHCARE',
};
const CAMPAIGN = {
  useCase: 'ACCOUNT_NOTIFICATION',
  description: 'Appointment reminders, confirmations and rescheduling notices for patients of Figures Dental clinics.',
  messageFlow: 'Patients opt in by ticking the SMS consent box on the online booking form at figures.example/book.',
  sampleMessages: ['Figures Dental: your appointment is tomorrow at 10:00. Reply C to confirm. STOP to opt out.'],
};
const OTHER_ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Attribution org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function contact(): Promise<string> {
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415${String(++seq).padStart(7, '0')}`,
      attributes: '{}',
      rcs_capable: false,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function sendAndWait(contactId: string, senderId: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, senderId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your appointment is tomorrow.' } },
  });
  expect(res.status, res.text).toBe(200);
  const id: string = res.body.data.messageId;
  await until(
    () => srv.context.db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirstOrThrow(),
    (r) => r.status === 'delivered',
  );
  return id;
}

const report = async (q: string) => {
  const res = await call(srv, 'GET', `/v1/reports/messages?kind=mdr&${q}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<Record<string, unknown>>;
};
const sentIn = async (path: string, q: string) => {
  const res = await call(srv, 'GET', `/v1/analytics/${path}?${q}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

describe('a message records its program, brand and campaign', () => {
  let programId: string;
  let brandId: string;
  let campaignId: string;
  let first: string;
  /** A 10DLC sender with a purchased number (the sandbox sender cannot be registered). */
  let tenDlc: string;

  beforeAll(async () => {
    const found = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key,
      body: { inventoryType: 'Local', leadingNumber: '206', provider: 'PROVIDER_A', limit: 1 },
    });
    const row = found.body.data[0];
    const bought = await call(srv, 'POST', '/v1/sender-ids/numbers/purchase', {
      key,
      body: { numberKey: row.numberKey, number: row.number, selectionProof: row.selectionProof, inventoryType: 'Local' },
    });
    expect(bought.status, bought.text).toBe(201);
    tenDlc = bought.body.data.sender.id;
    const enabled = await call(srv, 'POST', `/v1/sender-ids/${tenDlc}/protocols`, { key, body: { type: 'SMS' } });
    expect(enabled.status, enabled.text).toBeLessThan(300);
    const brand = await call(srv, 'POST', `/v1/sender-ids/${tenDlc}/brand/register`, { key, body: BRAND });
    expect(brand.status, brand.text).toBe(200);
    const programs = await call(srv, 'GET', '/v1/programs', { key });
    programId = programs.body.data[0].id;
    await until(
      () => call(srv, 'GET', `/v1/programs/${programId}/status`, { key }),
      (r) => r.body.data.brandStatus === 'REGISTERED',
    );
    const campaign = await call(srv, 'POST', `/v1/sender-ids/${tenDlc}/campaign/register`, { key, body: CAMPAIGN });
    expect(campaign.status, campaign.text).toBe(200);
    await until(
      () => call(srv, 'GET', `/v1/sender-ids/${tenDlc}`, { key }),
      (r) => r.body.data.status === 'ACTIVE',
    );
    // Brand registration attached its own sender to the program it created, as PRIMARY.
    const program = (await call(srv, 'GET', `/v1/programs/${programId}`, { key })).body.data;
    expect(program.senders, JSON.stringify(program)).toEqual([expect.objectContaining({ senderId: tenDlc, role: 'PRIMARY' })]);
    brandId = program.brand.registrationId;
    campaignId = program.campaign.registrationId;
    expect(brandId).toEqual(expect.any(String));
    expect(campaignId).toEqual(expect.any(String));
    first = await sendAndWait(await contact(), tenDlc);
  });

  it('the report shows them and filters by each', async () => {
    for (const q of [`programId=${programId}`, `brand=${brandId}`, `campaign=${campaignId}`]) {
      const rows = await report(q);
      expect(rows.map((r) => r.messageId)).toEqual([first]);
      expect(rows[0]).toMatchObject({ programId, brand: brandId, campaign: campaignId, blastId: null });
    }
    for (const q of [`programId=${OTHER_ID}`, `brand=${OTHER_ID}`, `campaign=not-a-uuid`]) expect(await report(q)).toEqual([]);
  });

  it('brandId and campaignId restrict every message figure to those messages', async () => {
    for (const q of [`brandId=${brandId}`, `campaignId=${campaignId}`, `brandId=${brandId}&campaignId=${campaignId}`]) {
      expect((await sentIn('overview', q)).messages).toMatchObject({ sent: 1, delivered: 1 });
      const protocols = (await sentIn('protocols', q)).protocols;
      // Every channel is listed (zero-filled); the one message went by SMS (a 10DLC number).
      expect(protocols.map((p: { channel: string; metrics: { sent: number } }) => [p.channel, p.metrics.sent])).toEqual([
        ['RCS', 0],
        ['SMS', 1],
        ['MMS', 0],
        ['CHATAPP', 0],
      ]);
      const senders = await sentIn('sender-ids', q);
      expect(senders.map((s: { senderId: string; metrics: { sent: number } }) => [s.senderId, s.metrics.sent])).toEqual([[tenDlc, 1]]);
      const usage = await sentIn('usage', q);
      expect(usage.lines.find((l: { item: string }) => l.item === 'text_segment')?.quantity ?? 0).toBe(1);
    }
    for (const q of [`brandId=${OTHER_ID}`, `campaignId=${OTHER_ID}`, `brandId=${brandId}&campaignId=${OTHER_ID}`]) {
      expect((await sentIn('overview', q)).messages).toMatchObject({ sent: 0, delivered: 0 });
    }
  });

  it('a later detach does not rewrite history: the first message keeps its program; one from outside any program has none', async () => {
    expect((await call(srv, 'DELETE', `/v1/programs/${programId}/senders/${tenDlc}`, { key })).status).toBe(200);
    // A detached PRIMARY stops its 10DLC sender (SENDER_NOT_READY); the sandbox sender belongs to no program.
    const second = await sendAndWait(await contact(), org.senderId);
    expect((await report(`programId=${programId}`)).map((r) => r.messageId)).toEqual([first]);
    const row = (await report('')).find((r) => r.messageId === second);
    expect(row).toMatchObject({ programId: null, brand: null, campaign: null });
    expect((await sentIn('overview', `brandId=${brandId}`)).messages.sent).toBe(1);
    expect((await sentIn('overview', '')).messages.sent).toBe(2);
  });
});

// Item 3: one definition of each figure. The same messages — a blast with a recipient held for quiet hours, a
// direct send, a MARKETING send held for quiet hours, a bot started by an event — counted by the overview, the
// blast's stats and figures and the bot's summary: `sent` is handed to a carrier everywhere, so a held message
// is sent nowhere, and the bot counts what it sent whatever started it.
describe('one definition of sent', () => {
  let n = 0;
  const minute = (offset: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 + offset * 60_000);
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);

  async function person(orgId: string, quiet: boolean): Promise<string> {
    const row = await srv.context.db
      .insertInto('contacts')
      .values({
        organization_id: orgId,
        // RCS-capable sandbox handsets end in 0–4.
        phone: `+1415777${String(++n).padStart(3, '0')}0`,
        attributes: '{}',
        rcs_capable: true,
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

  it('overview, blast stats, blast figures and the bot summary count the same messages the same way', async () => {
    const me = await srv.newOrg('Definitions org 2');
    const k = me.apiKey.secret;
    const orgId = me.organizationId;
    const [a, b, q1, q2, direct, botContact] = [
      await person(orgId, false),
      await person(orgId, false),
      await person(orgId, true),
      await person(orgId, true),
      await person(orgId, false),
      await person(orgId, false),
    ];

    const bot = await call(srv, 'POST', '/v1/bots', {
      key: k,
      body: {
        name: 'Shipping notices',
        channel: 'RCS',
        draftFlow: {
          nodes: [
            { id: 'start', type: 'START' },
            { id: 'shipped', type: 'END', content: { type: 'text', text: 'Your order is on its way.' } },
          ],
          edges: [{ id: 'e1', source: 'start', target: 'shipped' }],
        },
        triggers: [{ eventName: 'order.shipped', messageType: 'TRANSACTIONAL' }],
      },
    });
    expect(bot.status, bot.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key: k })).status).toBe(200);
    const fired = await call(srv, 'POST', '/v1/events', { key: k, body: { event: 'order.shipped', contactId: botContact } });
    expect(fired.status, fired.text).toBeLessThan(300);

    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key: k,
      body: { contactId: direct, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Receipt #1' } },
    });
    expect(sent.status, sent.text).toBe(200);
    const held = await call(srv, 'POST', '/v1/messages/send', {
      key: k,
      body: { contactId: q2, messageType: 'MARKETING', content: { type: 'text', text: 'Sale tonight' } },
    });
    expect(held.status, held.text).toBe(200);
    expect(held.body.data.status).toBe('held');

    const blast = await call(srv, 'POST', '/v1/blasts', {
      key: k,
      body: { name: 'Sale', senderId: me.senderId, contactIds: [a, b, q1], contentJson: { type: 'text', text: 'Sale starts now' } },
    });
    expect(blast.status, blast.text).toBe(201);
    const blastId = blast.body.id as string;
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/launch`, { key: k })).status).toBe(200);

    // Every message that is not held reaches its handset.
    await until(
      () => srv.context.db.selectFrom('messages').select(['status']).where('organization_id', '=', orgId).execute(),
      (rows) => rows.length === 6 && rows.filter((r) => r.status === 'delivered' || r.status === 'read').length === 4,
    );

    const overview = (await call(srv, 'GET', '/v1/analytics/overview', { key: k })).body.data.messages;
    const stats = (await call(srv, 'GET', `/v1/blasts/${blastId}/stats`, { key: k })).body;
    const figures = (await call(srv, 'GET', `/v1/analytics/blasts/${blastId}`, { key: k })).body.data;
    const summary = (await call(srv, 'GET', `/v1/analytics/bots/${bot.body.id}`, { key: k })).body.data;

    // 2 blast messages + 1 direct + 1 bot handed to a carrier; the 2 held messages are accepted, not sent.
    expect(overview).toMatchObject({ sent: 4, delivered: 4, deliveryRate: 1 });
    expect(stats).toMatchObject({ sent: 2, delivered: 2 });
    expect(figures.metrics).toMatchObject({ sent: 2, delivered: 2, deliveryRate: 1 });
    expect(summary.messagesSent).toBe(1);
    expect(overview.sent).toBe(stats.sent + summary.messagesSent + 1);

    // Item 1: the report names the blast of its three messages (the held one included) and filters by it.
    const report = await call(srv, 'GET', `/v1/reports/messages?kind=mdr&blastId=${blastId}`, { key: k });
    expect(report.status, report.text).toBe(200);
    expect(report.body.data).toHaveLength(3);
    expect(new Set(report.body.data.map((r: { contactId: string }) => r.contactId))).toEqual(new Set([a, b, q1]));
    expect(report.body.data.every((r: { blastId: string }) => r.blastId === blastId)).toBe(true);
    const all = await call(srv, 'GET', '/v1/reports/messages?kind=mdr', { key: k });
    expect(all.body.data.filter((r: { blastId: string | null }) => r.blastId === null)).toHaveLength(3);
  });
});
