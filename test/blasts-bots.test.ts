// Bot blasts (issue 33 item 2), through HTTP, the pg-boss workers and the carrier sandbox's signed callbacks: a blast
// with `botId` sends the opening of the bot's published flow to every recipient through the blast's batch path; each
// recipient's conversation is the bot's, sourced `blast` with the blast and the bot; a reply with a button label
// continues the flow; estimate, progress and stats count the blast's messages. An unpublished bot and a flow that does
// not open with one message are refused with their codes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let senderNumber: string;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Bot blasts org');
  key = org.apiKey.secret;
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
  for (const value of ['book_demo', 'talk_to_sales'])
    expect((await call(srv, 'POST', '/v1/intents', { key, body: { value } })).status).toBe(201);
  expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'interest', type: 'text' } })).status).toBe(201);
});
afterAll(() => srv.close());

/** An SMS-only contact (last digit 6: the sandbox reads it as not RCS capable) with marketing consent, outside quiet hours. */
async function contact() {
  const phone = `+1415${String(++seq).padStart(6, '0')}6`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      name: `Ann ${seq}`,
      attributes: JSON.stringify({ plan: 'pro' }),
      rcs_capable: false,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

const WELCOME = 'Spring sale! Book a demo or talk to sales?';
const flow = {
  nodes: [
    { id: 'start', type: 'START' },
    {
      id: 'welcome',
      type: 'QUESTION',
      content: { type: 'text', text: WELCOME },
      buttons: [
        { type: 'reply', text: 'Book a demo', intent: 'book_demo' },
        { type: 'reply', text: 'Talk to sales', intent: 'talk_to_sales' },
      ],
      capture: { variable: 'interest', from: 'intent' },
    },
    { id: 'demo', type: 'END', content: { type: 'text', text: 'Great, {{first_name}}! Pick a slot: https://example.com/demo' } },
    { id: 'sales', type: 'HANDOFF', content: { type: 'text', text: 'Connecting you with sales.' } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'welcome' },
    { id: 'e2', source: 'welcome', target: 'demo', intent: 'book_demo' },
    { id: 'e3', source: 'welcome', target: 'sales', intent: 'talk_to_sales' },
  ],
};

async function bot(draftFlow: unknown, publish = true): Promise<string> {
  const res = await call(srv, 'POST', '/v1/bots', { key, body: { name: `Bot ${++seq}`, channel: 'SMS', draftFlow } });
  expect(res.status).toBe(201);
  if (publish) {
    const pub = await call(srv, 'POST', `/v1/bots/${res.body.id}/publish`, { key });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  }
  return res.body.id;
}

async function waitStatus(id: string, statuses: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(srv, 'GET', `/v1/blasts/${id}`, { key });
    if (statuses.includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`blast ${id} is ${res.body.status}, expected ${statuses.join('/')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An inbound SMS from `from` to the organization's sandbox sender, as the carrier delivers it. */
async function deliver(from: string, text: string) {
  const body = JSON.stringify({
    type: 'inbound',
    providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
    from,
    to: senderNumber,
    channel: 'SMS',
    text,
    at: new Date().toISOString(),
  });
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

async function conversationOf(contactId: string) {
  const res = await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key });
  expect(res.status).toBe(200);
  return res.body.data[0] as { id: string; handledBy: string; botId: string | null };
}

async function outboundTexts(conversationId: string): Promise<string[]> {
  const res = await call(srv, 'GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key });
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ direction: string; content: { text?: string }; createdAt: string }>)
    .filter((m) => m.direction === 'outbound')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((m) => m.content.text ?? '');
}

describe('a bot blast starts the flow for each recipient', () => {
  it("3 recipients get the opening; stats count the sends; the conversations are the bot's, sourced blast; a tap continues the flow", async () => {
    const botId = await bot(flow);
    const people = [await contact(), await contact(), await contact()];
    const created = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Bot blast', senderId: org.senderId, botId, contactIds: people.map((p) => p.id) },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ contentSource: 'bot', botId, contentJson: null, variants: null });
    const id = created.body.id as string;

    const est = await call(srv, 'GET', `/v1/blasts/${id}/estimate`, { key });
    expect(est.status).toBe(200);
    expect(est.body.data.audience).toMatchObject({ total: 3, eligible: 3 });
    expect(est.body.data.byChannel).toEqual([expect.objectContaining({ channel: 'SMS', recipients: 3, units: 3 })]);

    // A test send is the opening, and starts no session.
    const tester = await contact();
    const test = await call(srv, 'POST', `/v1/blasts/${id}/test`, { key, body: { contactIds: [tester.id] } });
    expect(test.status).toBe(200);
    expect(test.body.data.results).toEqual([expect.objectContaining({ contactId: tester.id, status: 'queued', error: null })]);
    expect(await outboundTexts((await conversationOf(tester.id)).id)).toEqual([WELCOME]);

    const launch = await call(srv, 'POST', `/v1/blasts/${id}/launch`, { key });
    expect(launch.status).toBe(200);
    expect(launch.body.data).toMatchObject({ status: 'SENDING', recipientCount: null }); // resolved batch by batch as it sends
    await waitStatus(id, ['SENT']);

    const progress = (await call(srv, 'GET', `/v1/blasts/${id}/progress`, { key })).body.data;
    expect(progress).toMatchObject({ totalRecipients: 3, skipped: 0, percentComplete: 100 });
    const stats = await call(srv, 'GET', `/v1/blasts/${id}/stats`, { key });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ recipients: 3, sent: 3, delivered: 3, failed: 0 });

    for (const p of people) {
      const c = await conversationOf(p.id);
      expect(c).toMatchObject({ handledBy: 'bot', botId });
      const source = await call(srv, 'GET', `/v1/conversations/${c.id}/source`, { key });
      expect(source.status).toBe(200);
      expect(source.body.data ?? source.body).toMatchObject({ type: 'blast', blastId: id, botId });
      // The opening, the one message each recipient got.
      expect(await outboundTexts(c.id)).toEqual([WELCOME]);
    }

    // One recipient taps "Book a demo" (typed, as on SMS): the bot answers with the next node.
    await deliver(people[0]!.phone, 'Book a demo');
    const first = await conversationOf(people[0]!.id);
    // The session started with the contact's variables (first_name from its name).
    expect(await outboundTexts(first.id)).toEqual([WELCOME, 'Great, Ann! Pick a slot: https://example.com/demo']);
    // The others are untouched; the bot's reply is not the blast's (stats count the blast's own messages).
    expect(await outboundTexts((await conversationOf(people[1]!.id)).id)).toEqual([WELCOME]);
    expect((await call(srv, 'GET', `/v1/blasts/${id}/stats`, { key })).body).toMatchObject({ recipients: 3, sent: 3, replies: 1 });
  });

  it('an unpublished bot is 422 BOT_NOT_PUBLISHED at estimate and launch; an unknown botId is 404 naming body.botId', async () => {
    const draft = await bot(flow, false);
    const p = await contact();
    const created = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Draft bot blast', senderId: org.senderId, botId: draft, contactIds: [p.id] },
    });
    expect(created.status).toBe(201); // the bot must be published by the time sending starts (createBlast)
    const id = created.body.id as string;
    for (const [method, path, body] of [
      ['GET', `/v1/blasts/${id}/estimate`, undefined],
      ['POST', `/v1/blasts/${id}/test`, { contactIds: [p.id] }],
      ['POST', `/v1/blasts/${id}/launch`, undefined],
    ] as const) {
      const res = await call(srv, method, path, { key, ...(body ? { body } : {}) });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('BOT_NOT_PUBLISHED');
    }
    expect((await call(srv, 'GET', `/v1/blasts/${id}`, { key })).body.status).toBe('DRAFT');

    const unknown = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Nobody', senderId: org.senderId, botId: randomUUID(), contactIds: [p.id] },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'body.botId' })]);
  });

  it('a flow that sends two messages before waiting is 422 BOT_NOT_BLASTABLE, naming the node', async () => {
    const twoMessages = await bot({
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'hello', type: 'MESSAGE', content: { type: 'text', text: 'Hello!' } },
        { ...flow.nodes[1], id: 'ask' },
        flow.nodes[2],
        flow.nodes[3],
      ],
      edges: [
        { id: 'e0', source: 'start', target: 'hello' },
        { id: 'e1', source: 'hello', target: 'ask' },
        { id: 'e2', source: 'ask', target: 'demo', intent: 'book_demo' },
        { id: 'e3', source: 'ask', target: 'sales', intent: 'talk_to_sales' },
      ],
    });
    const p = await contact();
    const id = (
      await call(srv, 'POST', '/v1/blasts', { key, body: { name: 'Two', senderId: org.senderId, botId: twoMessages, contactIds: [p.id] } })
    ).body.id as string;
    const res = await call(srv, 'POST', `/v1/blasts/${id}/send`, { key });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('BOT_NOT_BLASTABLE');
    expect(res.body.message).toContain('"hello"');
  });
});
