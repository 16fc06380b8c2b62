// Every stored message knows its origin with the ids (issue 34): the message report names the blast, the bot, the
// event trigger that started the bot and the acquisition campaign of each message; a direct send names none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Origins org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function contact(): Promise<string> {
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415444${String(++seq).padStart(4, '0')}`,
      attributes: '{}',
      rcs_capable: false,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

type Row = {
  messageId: string;
  contactId: string;
  blastId: string | null;
  botId: string | null;
  eventTriggerId: string | null;
  acquisitionCampaignId: string | null;
};
const rows = async () => {
  const res = await call(srv, 'GET', '/v1/reports/messages?kind=mdr&limit=100', { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Row[];
};
const origin = (r: Row | undefined) =>
  r && { blastId: r.blastId, botId: r.botId, eventTriggerId: r.eventTriggerId, acquisitionCampaignId: r.acquisitionCampaignId };
const NONE = { blastId: null, botId: null, eventTriggerId: null, acquisitionCampaignId: null };

describe('origin ids in the message report', () => {
  it('direct, blast, bot started by an event trigger, acquisition welcome', async () => {
    // Direct.
    const direct = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: await contact(), messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Receipt #1' } },
    });
    expect(direct.status, direct.text).toBe(200);

    // A bot started by an event trigger.
    const bot = await call(srv, 'POST', '/v1/bots', {
      key,
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
    const triggerId: string = bot.body.triggers[0].id;
    expect((await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key })).status).toBe(200);
    const botContact = await contact();
    const fired = await call(srv, 'POST', '/v1/events', { key, body: { event: 'order.shipped', contactId: botContact } });
    expect(fired.status, fired.text).toBeLessThan(300);

    // An acquisition campaign's welcome.
    const list = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'VIP list' } })).body.data.id;
    const campaign = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'Holiday VIP', type: 'QR_CODE', listId: list, status: 'ACTIVE', welcomeMessage: 'Welcome! Reply STOP to opt out.' },
    });
    expect(campaign.status, campaign.text).toBe(201);
    const enrolled = await call(srv, 'POST', `/v1/acquisition/${campaign.body.id}/enroll`, {
      key,
      body: { phone: '+14155559001', consent: true },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    const welcomeId: string = enrolled.body.data.welcomeMessageId;
    expect(welcomeId).toEqual(expect.any(String));

    // A blast.
    const blastContact = await contact();
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Sale',
        senderId: org.senderId,
        messageType: 'TRANSACTIONAL',
        contactIds: [blastContact],
        contentJson: { type: 'text', text: 'Sale' },
      },
    });
    expect(blast.status, blast.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/blasts/${blast.body.id}/launch`, { key })).status).toBe(200);
    await until(rows, (r) => r.some((x) => x.contactId === blastContact));

    const report = await rows();
    const byMessage = new Map(report.map((r) => [r.messageId, r]));
    expect(origin(byMessage.get(direct.body.data.messageId))).toEqual(NONE);
    const botRows = report.filter((r) => r.contactId === botContact);
    expect(botRows).toHaveLength(1);
    expect(origin(botRows[0])).toEqual({ ...NONE, botId: bot.body.id, eventTriggerId: triggerId });
    expect(origin(byMessage.get(welcomeId))).toEqual({ ...NONE, acquisitionCampaignId: campaign.body.id });
    expect(origin(report.find((r) => r.contactId === blastContact))).toEqual({ ...NONE, blastId: blast.body.id });
  });
});
