// Bots that answer the people who write to them (issue 33 items 1, 3, 4), through HTTP and the carrier sandbox's
// signed callbacks: a keyword trigger and the sender's default bot greet, a human-held conversation is left alone,
// "Yes" reaches a bot while START still resubscribes an opted-out contact, and SMS buttons read as a numbered list.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

// SMS-only handsets (last digit 5–9): the sandbox reads them as not RCS capable.
const phone = () => `+1415557${String(1000 + ++seq * 10 + 5).padStart(4, '0')}`;

type Org = { key: string; senderId: string; senderNumber: string };

/** A fresh organization (its own sandbox sender, so one default bot each) with the intents and variables used. */
async function org(): Promise<Org> {
  const o = await srv.newOrg(`Inbound bots ${++seq}`);
  const key = o.apiKey.secret;
  const senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', o.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
  for (const value of ['book_demo', 'talk_to_sales', 'yes', 'no'])
    expect((await call(srv, 'POST', '/v1/intents', { key, body: { value } })).status).toBe(201);
  for (const name of ['interest'])
    expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name, type: 'text' } })).status).toBe(201);
  return { key, senderId: o.senderId, senderNumber };
}

const flow = (welcome = 'Hi! Book a demo or talk to sales?') => ({
  nodes: [
    { id: 'start', type: 'START' },
    {
      id: 'welcome',
      type: 'QUESTION',
      content: { type: 'text', text: welcome },
      buttons: [
        { type: 'reply', text: 'Book a demo', intent: 'book_demo' },
        { type: 'reply', text: 'Talk to sales', intent: 'talk_to_sales' },
      ],
      capture: { variable: 'interest', from: 'intent' },
    },
    { id: 'demo', type: 'END', content: { type: 'text', text: 'Great! Pick a slot: https://example.com/demo' } },
    { id: 'sales', type: 'HANDOFF', content: { type: 'text', text: 'Connecting you with sales.' } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'welcome' },
    { id: 'e2', source: 'welcome', target: 'demo', intent: 'book_demo' },
    { id: 'e3', source: 'welcome', target: 'sales', intent: 'talk_to_sales' },
  ],
});

async function publishedBot(o: Org, body: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>> {
  const res = await call(srv, 'POST', '/v1/bots', {
    key: o.key,
    body: { name: `Bot ${++seq}`, channel: 'SMS', draftFlow: flow(), ...body },
  });
  expect(res.status).toBe(201);
  const pub = await call(srv, 'POST', `/v1/bots/${res.body.id}/publish`, { key: o.key });
  expect(pub.status).toBe(200);
  return res.body;
}

async function deliver(o: Org, from: string, text: string | null, postback?: string) {
  const body = JSON.stringify({
    type: 'inbound',
    providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
    from,
    to: o.senderNumber,
    channel: postback ? 'RCS' : 'SMS',
    text,
    ...(postback ? { postback } : {}),
    at: new Date().toISOString(),
  });
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

async function conversationOf(o: Org, p: string): Promise<{ id: string; handledBy: string; botId: string | null; contactId: string }> {
  const contactId = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key: o.key })).body.data[0].id as string;
  return (await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key: o.key })).body.data[0];
}

async function outboundTexts(o: Org, conversationId: string): Promise<string[]> {
  const res = await call(srv, 'GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key: o.key });
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ direction: string; content: { text?: string }; createdAt: string }>)
    .filter((m) => m.direction === 'outbound')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((m) => m.content.text ?? '');
}

describe('inbound triggers', () => {
  it('a keyword starts the flow for a new number ("demo!" matches DEMO); the conversation is the bot\'s', async () => {
    const o = await org();
    const b = await publishedBot(o, {
      senderId: o.senderId,
      inboundTriggers: [{ name: 'Demo keyword', type: 'keyword', keywords: ['demo'] }],
    });
    expect(b.inboundTriggers).toMatchObject([{ name: 'Demo keyword', type: 'keyword', keywords: ['DEMO'], active: true }]);
    const p = phone();
    await deliver(o, p, 'hello'); // no trigger matches: an ordinary message
    const c0 = await conversationOf(o, p);
    expect(await outboundTexts(o, c0.id)).toEqual([]);
    await deliver(o, p, 'demo!');
    const c = await conversationOf(o, p);
    expect(c).toMatchObject({ handledBy: 'bot', botId: b.id });
    expect(await outboundTexts(o, c.id)).toEqual(['Hi! Book a demo or talk to sales?']);
    await deliver(o, p, '1'); // the number of the first button
    expect((await outboundTexts(o, c.id)).at(-1)).toBe('Great! Pick a slot: https://example.com/demo');
  });

  it("the sender's default bot greets whoever writes; a second default for the sender is 409; one without a sender 400", async () => {
    const o = await org();
    const b = await publishedBot(o, { senderId: o.senderId, defaultForSender: true });
    expect(b.defaultForSender).toBe(true);
    const second = await call(srv, 'POST', '/v1/bots', {
      key: o.key,
      body: { name: 'x', channel: 'SMS', senderId: o.senderId, defaultForSender: true },
    });
    expect(second.status).toBe(409);
    const noSender = await call(srv, 'POST', '/v1/bots', { key: o.key, body: { name: 'x', channel: 'SMS', defaultForSender: true } });
    expect(noSender.status).toBe(400);
    expect(noSender.body.details[0].field).toBe('body.defaultForSender');
    const p = phone();
    await deliver(o, p, 'hi');
    const c = await conversationOf(o, p);
    expect(c).toMatchObject({ handledBy: 'bot', botId: b.id });
    expect((await outboundTexts(o, c.id))[0]).toMatch(/^Hi! Book a demo or talk to sales\?/);
  });

  it('a conversation handed to a human stays human: neither the default bot nor a keyword takes it', async () => {
    const o = await org();
    const b = await publishedBot(o, {
      senderId: o.senderId,
      defaultForSender: true,
      inboundTriggers: [{ type: 'keyword', keywords: ['DEMO'] }],
    });
    const p = phone();
    await deliver(o, p, 'hi');
    await deliver(o, p, 'Talk to sales'); // → HANDOFF
    const c = await conversationOf(o, p);
    expect(c).toMatchObject({ handledBy: 'human', botId: b.id });
    expect(await outboundTexts(o, c.id)).toHaveLength(2);
    await deliver(o, p, 'hello?');
    await deliver(o, p, 'DEMO');
    expect(await outboundTexts(o, c.id)).toHaveLength(2);
    expect(await conversationOf(o, p)).toMatchObject({ handledBy: 'human' });
  });
});

describe('opt-in keywords are replies unless the contact is opted out', () => {
  it('"Yes" reaches the bot (no "subscribed again", no consent change); START still resubscribes an opted-out contact', async () => {
    const o = await org();
    await publishedBot(o, {
      senderId: o.senderId,
      defaultForSender: true,
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          {
            id: 'ask',
            type: 'MESSAGE',
            content: { type: 'text', text: 'Want our newsletter?' },
            buttons: [
              { type: 'reply', text: 'Yes', intent: 'yes' },
              { type: 'reply', text: 'No', intent: 'no' },
            ],
          },
          { id: 'thanks', type: 'END', content: { type: 'text', text: 'Thanks, noted.' } },
          { id: 'bye', type: 'END', content: { type: 'text', text: 'Fine.' } },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'ask' },
          { id: 'e2', source: 'ask', target: 'thanks', intent: 'yes' },
          { id: 'e3', source: 'ask', target: 'bye', intent: 'no' },
        ],
      },
    });
    const p = phone();
    await deliver(o, p, 'hello');
    await deliver(o, p, 'Yes');
    const c = await conversationOf(o, p);
    expect(await outboundTexts(o, c.id)).toEqual(['Want our newsletter?', 'Thanks, noted.']);
    const consent = await call(srv, 'GET', `/v1/contacts/${c.contactId}/consent`, { key: o.key });
    expect(JSON.stringify(consent.body)).not.toContain('OPT_IN');

    const q = phone();
    await deliver(o, q, 'STOP');
    await deliver(o, q, 'START');
    const d = await conversationOf(o, q);
    const texts = await outboundTexts(o, d.id);
    expect(texts).toHaveLength(2); // the STOP confirmation and the START reply; no bot greeting for either
    expect(texts.join(' ')).not.toContain('newsletter');
    const history = await call(srv, 'GET', `/v1/contacts/${d.contactId}/consent`, { key: o.key });
    expect(JSON.stringify(history.body)).toContain('OPT_IN');
  });
});

describe('numbered SMS buttons', () => {
  it('the SMS rendering numbers the replies (preview), and a bot takes the number as the tap', async () => {
    const o = await org();
    const res = await call(srv, 'POST', '/v1/messages/preview', {
      key: o.key,
      body: {
        channelType: 'SMS',
        content: {
          type: 'text',
          text: 'Pick one',
          replies: [
            { text: 'Book a demo', postback: 'book_demo' },
            { text: 'Talk to sales', postback: 'talk_to_sales' },
          ],
        },
      },
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain('Pick one\\nReply 1 for Book a demo, 2 for Talk to sales');
    await publishedBot(o, { senderId: o.senderId, defaultForSender: true });
    const p = phone();
    await deliver(o, p, 'hi');
    await deliver(o, p, '2');
    const c = await conversationOf(o, p);
    expect((await outboundTexts(o, c.id)).at(-1)).toBe('Connecting you with sales.');
  });
});
