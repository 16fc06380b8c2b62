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

describe('flows that keep their word (issue 33 items 5, 6, 7, 9)', () => {
  it('a cycle that never waits is LOOP_WITHOUT_WAIT at validate and publish', async () => {
    const o = await org();
    const loop = {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'm1', type: 'MESSAGE', content: { type: 'text', text: 'one' } },
        { id: 'm2', type: 'MESSAGE', content: { type: 'text', text: 'two' } },
      ],
      edges: [
        { id: 'e1', source: 'start', target: 'm1' },
        { id: 'e2', source: 'm1', target: 'm2' },
        { id: 'e3', source: 'm2', target: 'm1' },
      ],
    };
    const b = await call(srv, 'POST', '/v1/bots', { key: o.key, body: { name: 'Loop', channel: 'SMS', draftFlow: loop } });
    const v = await call(srv, 'POST', `/v1/bots/${b.body.id}/validate`, { key: o.key });
    expect(v.body.data.errors).toEqual([{ code: 'LOOP_WITHOUT_WAIT', message: expect.stringContaining('"m1" → "m2"'), nodeId: 'm1' }]);
    const pub = await call(srv, 'POST', `/v1/bots/${b.body.id}/publish`, { key: o.key });
    expect(pub.status).toBe(400);
    expect(pub.body.validationErrors.map((e: { code: string }) => e.code)).toEqual(['LOOP_WITHOUT_WAIT']);
  });

  it('an unmatched reply is re-prompted; after maxMisses the fallback text is sent and a human holds the conversation', async () => {
    const o = await org();
    const f = flow();
    (f.nodes[1] as Record<string, unknown>).reprompt = 'Please reply 1 or 2.';
    const b = await publishedBot(o, {
      senderId: o.senderId,
      defaultForSender: true,
      draftFlow: { ...f, fallback: { text: 'Getting a person.', maxMisses: 2 } },
    });
    expect((await call(srv, 'POST', `/v1/bots/${b.id}/validate`, { key: o.key })).body.data.warnings).toEqual([]);
    const p = phone();
    await deliver(o, p, 'hi');
    await deliver(o, p, 'banana');
    await deliver(o, p, 'kiwi');
    const c = await conversationOf(o, p);
    expect(await outboundTexts(o, c.id)).toEqual(['Hi! Book a demo or talk to sales?', 'Please reply 1 or 2.', 'Getting a person.']);
    expect(c).toMatchObject({ handledBy: 'human', botId: b.id });
    await deliver(o, p, 'hello?');
    expect(await outboundTexts(o, c.id)).toHaveLength(3);
    // Without a fallback text the same node is a NO_WAY_OUT warning (publishing is not blocked).
    const bare = await call(srv, 'POST', '/v1/bots', { key: o.key, body: { name: 'Bare', channel: 'SMS', draftFlow: flow() } });
    const v = await call(srv, 'POST', `/v1/bots/${bare.body.id}/validate`, { key: o.key });
    expect(v.body.data).toMatchObject({ valid: true, warnings: [{ code: 'NO_WAY_OUT', nodeId: 'welcome' }] });
  });

  it('a refusal in the middle of a turn does not send the first message again on the next reply', async () => {
    const o = await org();
    await publishedBot(o, {
      senderId: o.senderId,
      defaultForSender: true,
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'ask', type: 'QUESTION', content: { type: 'text', text: 'Tell me.' }, capture: { variable: 'interest' } },
          { id: 'm1', type: 'MESSAGE', content: { type: 'text', text: 'First part.' } },
          { id: 'm2', type: 'MESSAGE', content: { type: 'text', text: 'Second part: zorblax.' } },
          { id: 'end', type: 'END', content: { type: 'text', text: 'Done.' } },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'ask' },
          { id: 'e2', source: 'ask', target: 'm1' },
          { id: 'e3', source: 'm1', target: 'm2' },
          { id: 'e4', source: 'm2', target: 'end' },
        ],
      },
    });
    const rule = await call(srv, 'POST', '/v1/content-rules', {
      key: o.key,
      body: { name: 'No zorblax', pattern: 'zorblax', patternType: 'keyword', action: 'block' },
    });
    expect(rule.status).toBe(201);
    const p = phone();
    await deliver(o, p, 'hi');
    await deliver(o, p, 'x'); // m1 sent, m2 refused
    await deliver(o, p, 'y'); // m2 refused again: m1 is not sent twice
    const c = await conversationOf(o, p);
    expect(await outboundTexts(o, c.id)).toEqual(['Tell me.', 'First part.']);
    expect((await call(srv, 'DELETE', `/v1/content-rules/${rule.body.data?.id ?? rule.body.id}`, { key: o.key })).status).toBe(200);
    await deliver(o, p, 'z');
    const texts = await outboundTexts(o, c.id);
    expect(texts.slice(0, 2)).toEqual(['Tell me.', 'First part.']);
    expect(texts.slice(2).sort()).toEqual(['Done.', 'Second part: zorblax.']); // one turn: one timestamp
  });

  it('a list variable refuses an unlisted value (re-prompt) and stores a listed one as defined', async () => {
    const o = await org();
    const def = await call(srv, 'POST', '/v1/variable-definitions', {
      key: o.key,
      body: { name: 'plan', type: 'list', items: ['Basic', 'Pro'] },
    });
    expect(def.status).toBe(201);
    await publishedBot(o, {
      senderId: o.senderId,
      defaultForSender: true,
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'ask', type: 'QUESTION', content: { type: 'text', text: 'Basic or Pro?' }, capture: { variable: 'plan' } },
          { id: 'end', type: 'END', content: { type: 'text', text: 'You chose {{plan}}.' } },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'ask' },
          { id: 'e2', source: 'ask', target: 'end' },
        ],
      },
    });
    const p = phone();
    await deliver(o, p, 'hi');
    await deliver(o, p, 'Gold');
    await deliver(o, p, 'pro');
    const c = await conversationOf(o, p);
    expect(await outboundTexts(o, c.id)).toEqual(['Basic or Pro?', 'Basic or Pro?', 'You chose Pro.']);
  });
});

describe('events keep their word (issue 33 item 11)', () => {
  const eventFlow = (text: string) => ({
    nodes: [
      { id: 'start', type: 'START' },
      { id: 'note', type: 'END', content: { type: 'text', text } },
    ],
    edges: [{ id: 'e1', source: 'start', target: 'note' }],
  });
  const fire = async (o: Org, body: Record<string, unknown>) => {
    const res = await call(srv, 'POST', '/v1/events', { key: o.key, body });
    expect(res.status, res.text).toBe(200);
    return res.body.data ?? res.body;
  };
  const contactWithout = async (o: Org, consentType?: string) => {
    const res = await call(srv, 'POST', '/v1/contacts', {
      key: o.key,
      body: { phone: phone(), name: 'Dana', ...(consentType ? { consentType } : {}) },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  it('the stricter class of request and trigger applies: a MARKETING event under a TRANSACTIONAL trigger needs consent', async () => {
    const o = await org();
    await publishedBot(o, {
      draftFlow: eventFlow('Your order shipped.'),
      triggers: [{ name: 'Shipping update', eventName: 'order.shipped', messageType: 'TRANSACTIONAL' }],
    });
    const contactId = await contactWithout(o);
    const marketing = await fire(o, { event: 'order.shipped', contactId, messageType: 'MARKETING' });
    expect(marketing.matchedTriggers).toEqual([{ triggerId: expect.any(String), name: 'Shipping update' }]);
    expect(marketing.skipped).toMatchObject([{ reason: 'NO_CONSENT' }]);
    // Without messageType the trigger's class applies; SERVICE is looser than the trigger's TRANSACTIONAL.
    expect((await fire(o, { event: 'order.shipped', contactId })).messages).toHaveLength(1);
    expect((await fire(o, { event: 'order.shipped', contactId, messageType: 'SERVICE' })).messages).toHaveLength(1);
  });

  it('the cool-down runs on server time: an event dated two hours ahead does not escape it', async () => {
    const o = await org();
    await publishedBot(o, {
      draftFlow: eventFlow('Your order shipped.'),
      triggers: [{ eventName: 'order.shipped', messageType: 'TRANSACTIONAL', cooldownSeconds: 3600 }],
    });
    const contactId = await contactWithout(o);
    expect((await fire(o, { event: 'order.shipped', contactId, messageType: 'TRANSACTIONAL' })).messages).toHaveLength(1);
    const later = new Date(Date.now() + 2 * 3600_000).toISOString();
    expect((await fire(o, { event: 'order.shipped', contactId, occurredAt: later, messageType: 'TRANSACTIONAL' })).skipped).toMatchObject([
      { reason: 'FREQUENCY_CAPPED' },
    ]);
  });

  it('a placeholder the event does not fill is MISSING_PROPERTY, not an empty text', async () => {
    const o = await org();
    await publishedBot(o, {
      draftFlow: eventFlow('Order {{event.order_id}} shipped.'),
      triggers: [{ eventName: 'order.shipped', messageType: 'TRANSACTIONAL' }],
    });
    const contactId = await contactWithout(o);
    const missing = await fire(o, { event: 'order.shipped', contactId, messageType: 'TRANSACTIONAL' });
    expect(missing).toMatchObject({
      messages: [],
      skipped: [{ reason: 'MISSING_PROPERTY', message: expect.stringContaining('{{event.order_id}}') }],
    });
    const filled = await fire(o, { event: 'order.shipped', contactId, messageType: 'TRANSACTIONAL', properties: { order_id: 'A-1' } });
    expect(filled.messages).toHaveLength(1);
    const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key: o.key })).body.data[0].id as string;
    expect(await outboundTexts(o, conversationId)).toEqual(['Order A-1 shipped.']);
  });

  it('a keyword sign-up of a new number counts as a new contact; the welcome conversation is acquisition-sourced', async () => {
    const o = await org();
    const tag = (await call(srv, 'POST', '/v1/tags', { key: o.key, body: { name: 'VIP' } })).body.data.id as string;
    const made = await call(srv, 'POST', '/acquisition-campaigns', {
      key: o.key,
      body: {
        name: 'Join',
        type: 'KEYWORD',
        listId: tag,
        status: 'ACTIVE',
        keyword: 'JOIN',
        shortcode: o.senderNumber,
        welcomeMessage: 'Welcome!',
      },
    });
    expect(made.status, made.text).toBe(201);
    await deliver(o, phone(), 'join');
    const got = await call(srv, 'GET', `/acquisition-campaigns/${made.body.id}`, { key: o.key });
    expect(got.body.stats).toMatchObject({ enrolledCount: 1, newContactCount: 1 });
    // The server-side enrollment's welcome message opens an acquisition conversation naming the campaign.
    const api = await call(srv, 'POST', '/acquisition-campaigns', {
      key: o.key,
      body: { name: 'Api', type: 'QR_CODE', listId: tag, status: 'ACTIVE', welcomeMessage: 'Hello there.' },
    });
    const p = phone();
    expect(
      (await call(srv, 'POST', `/v1/acquisition/${api.body.id}/enroll`, { key: o.key, body: { phone: p, consent: true } })).status,
    ).toBe(200);
    const c = await conversationOf(o, p);
    expect(c).toMatchObject({ source: 'acquisition' }); // already so on main (checked, not redone)
  });
});

describe('dictionaries (issue 33 item 9)', () => {
  it('deactivating an intent a published flow uses does not break republishing; a new flow still may not use it', async () => {
    const o = await org();
    const b = await publishedBot(o, {});
    const intents = await call(srv, 'GET', '/v1/intents', { key: o.key });
    const sales = (intents.body.data as Array<{ id: string; value: string }>).find((i) => i.value === 'talk_to_sales')!;
    const off = await call(srv, 'PATCH', `/v1/intents/${sales.id}`, { key: o.key, body: { active: false } });
    expect(off.status, off.text).toBe(200);
    const again = await call(srv, 'POST', `/v1/bots/${b.id}/publish`, { key: o.key });
    expect(again.status, again.text).toBe(200);
    const fresh = await call(srv, 'POST', '/v1/bots', { key: o.key, body: { name: 'Fresh', channel: 'SMS', draftFlow: flow() } });
    const v = await call(srv, 'POST', `/v1/bots/${fresh.body.id}/validate`, { key: o.key });
    expect(v.body.data.errors.map((e: { code: string }) => e.code)).toContain('UNKNOWN_INTENT');
  });
});
