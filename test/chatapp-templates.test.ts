// Chat-app templates through HTTP (issue 33 item 10): registered for a CHATAPP_BUSINESS sender and reviewed by the
// carrier sandbox through the provider callback route (PENDING → APPROVED, or REJECTED with a reason); the session
// window (a free-form chat-app message only within 24 hours of the contact's last message, else 422
// CHATAPP_SESSION_CLOSED); and a `template` content sent outside the window, rendered with its parameters.
process.env.SANDBOX_REGISTRY_STEP_MS = '100';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleProviders } from '../src/providers/assemble.ts';
import { ProviderError, type Channel, type MessagingProvider } from '../src/providers/provider.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let chat: string;
const CHAT_ADDRESS = '+14155550142';

// The sender's registration is the Sender IDs section's; here the sender is made ACTIVE and send-ready directly.
const activate = (id: string) =>
  srv.context.db.updateTable('sender_ids').set({ status: 'ACTIVE', send_ready: true }).where('id', '=', id).execute();

async function chatSender(name: string, address: string, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/sender-ids', {
    key: k,
    body: { type: 'CHATAPP_BUSINESS', name, address, provider: 'PROVIDER_A' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await activate(res.body.data.id);
  return res.body.data.id as string;
}

const REMINDER = {
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Reminder for {{1}}' },
    { type: 'BODY', text: 'Hi {{1}}, your appointment is on {{2}}.' },
    { type: 'FOOTER', text: 'Reply STOP to opt out' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'QUICK_REPLY', text: 'Confirm' },
        { type: 'URL', text: 'Reschedule', url: 'https://acme.example/appointments/{{1}}' },
      ],
    },
  ],
  variables: [
    { component: 'HEADER', index: 1, example: 'Maria' },
    { component: 'BODY', index: 1, example: 'Maria' },
    { component: 'BODY', index: 2, example: 'Friday at 10:00' },
    { component: 'BUTTONS', index: 2, example: 'A-1042' },
  ],
};

const register = (name: string, senderId = chat, k = key) =>
  call(srv, 'POST', '/v1/chatapp-templates', { key: k, body: { ...REMINDER, senderId, name } });

const settled = (id: string, k = key) =>
  until(
    () => call(srv, 'GET', `/v1/chatapp-templates/${id}`, { key: k }),
    (r) => r.status === 200 && r.body.status !== 'PENDING',
    `template ${id} reviewed`,
  );

async function contact(phone: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const sendChat = (contactId: string, content: unknown, senderId = chat) =>
  call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, senderId, channelType: 'CHATAPP', messageType: 'TRANSACTIONAL', content },
  });

const PARAMETERS = [
  { component: 'HEADER', index: 1, value: 'Ana' },
  { component: 'BODY', index: 1, value: 'Ana' },
  { component: 'BODY', index: 2, value: 'Monday at 9:30' },
  { component: 'BUTTONS', index: 2, value: 'B 77' },
];

let approvedId: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Chat templates org');
  key = org.apiKey.secret;
  chat = await chatSender('Chat templates', CHAT_ADDRESS);
});
afterAll(() => srv.close());

describe('registration and review', () => {
  it('registers PENDING, then the platform approves it: listed by GET /v1/chatapp-templates', async () => {
    const res = await register('appointment_reminder');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      senderId: chat,
      name: 'appointment_reminder',
      status: 'PENDING',
      rejectionReason: null,
      approvedAt: null,
    });
    expect(JSON.stringify(res.body)).not.toContain('SIMTPL');
    approvedId = res.body.id;
    const before = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${chat}`, { key });
    expect(before.body.data.map((t: { id: string }) => t.id)).not.toContain(approvedId);
    const done = await settled(approvedId);
    expect(done.body).toMatchObject({ status: 'APPROVED', rejectionReason: null, approvedAt: expect.any(String) });
    const list = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${chat}`, { key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({
        id: approvedId,
        name: 'appointment_reminder',
        language: 'en_US',
        status: 'APPROVED',
        variables: REMINDER.variables,
      }),
    ]);
    const again = await register('appointment_reminder');
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_EXISTS');
    // The same name in another language is another template; the list is by name, then language.
    const es = await call(srv, 'POST', '/v1/chatapp-templates', {
      key,
      body: { ...REMINDER, senderId: chat, name: 'appointment_reminder', language: 'es' },
    });
    const early = await register('aa_first');
    expect([es.status, early.status]).toEqual([201, 201]);
    await settled(es.body.id);
    await settled(early.body.id);
    const all = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${chat}`, { key });
    expect(all.body.data.map((t: { name: string; language: string }) => `${t.name}/${t.language}`)).toEqual([
      'aa_first/en_US',
      'appointment_reminder/en_US',
      'appointment_reminder/es',
    ]);
  });

  it('a rejected template is not listed, and its reason is readable', async () => {
    const res = await register('promo_reject_me');
    expect(res.status).toBe(201);
    const done = await settled(res.body.id);
    expect(done.body.status).toBe('REJECTED');
    expect(done.body.rejectionReason).toContain('rejected');
    const list = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${chat}`, { key });
    expect(list.body.data.map((t: { name: string }) => t.name)).not.toContain('promo_reject_me');
  });

  it('a template the platform pauses after approval leaves the list and is not sent', async () => {
    const res = await register('flash_pause_me');
    expect(res.status).toBe(201);
    const paused = await until(
      () => call(srv, 'GET', `/v1/chatapp-templates/${res.body.id}`, { key }),
      (r) => r.body.status === 'PAUSED',
      'the template paused',
    );
    expect(paused.body).toMatchObject({ approvedAt: expect.any(String), rejectionReason: expect.stringContaining('paused') });
    const list = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${chat}`, { key });
    expect(list.body.data.map((t: { name: string }) => t.name)).not.toContain('flash_pause_me');
    const c = await contact('+14155550175');
    const sent = await sendChat(c, { type: 'template', templateId: res.body.id, parameters: PARAMETERS });
    expect(sent.status).toBe(422);
    expect(sent.body.code).toBe('TEMPLATE_NOT_APPROVED');
  });

  it("another organization's template id answers 404, its sender 404 naming body.senderId", async () => {
    const other = await srv.newOrg('Other chat templates org');
    const theirs = await chatSender('Their chat', '+14155550143', other.apiKey.secret);
    const res = await register('their_template', theirs, other.apiKey.secret);
    expect(res.status).toBe(201);
    expect((await call(srv, 'GET', `/v1/chatapp-templates/${res.body.id}`, { key })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/chatapp-templates/${res.body.id}`, { key })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/chatapp-templates/${res.body.id}`, { key: other.apiKey.secret })).status).toBe(200);
    const foreign = await register('mine_on_theirs', theirs);
    expect(foreign.status).toBe(404);
    expect(foreign.body.details.map((d: { field: string }) => d.field)).toEqual(['body.senderId']);
  });

  it('refuses a template the platforms would refuse, naming the field; 502 and nothing stored when the platform is unreachable', async () => {
    const bad = await call(srv, 'POST', '/v1/chatapp-templates', {
      key,
      body: { ...REMINDER, senderId: chat, name: 'missing_example', variables: REMINDER.variables.slice(0, 2) },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([
      expect.objectContaining({ field: 'body.variables', message: expect.stringContaining('BODY {{2}}') }),
      expect.objectContaining({ field: 'body.variables', message: expect.stringContaining('button 2') }),
    ]);
    const down = await register('upstream_down');
    expect(down.status).toBe(502);
    expect(down.body.code).toBe('UPSTREAM_ERROR');
    const stored = await srv.context.db.selectFrom('chatapp_templates').select('id').where('name', '=', 'upstream_down').execute();
    expect(stored).toEqual([]);
  });
});

describe('the session window and template sends', () => {
  it('a free-form CHATAPP message outside the session answers 422 CHATAPP_SESSION_CLOSED; inside it (after an inbound message) it is sent', async () => {
    const phone = '+14155550171';
    const c = await contact(phone);
    const closed = await sendChat(c, { type: 'text', text: 'Are you still there?' });
    expect(closed.status, JSON.stringify(closed.body)).toBe(422);
    expect(closed.body.code).toBe('CHATAPP_SESSION_CLOSED');
    expect(closed.body.message).toContain('template');
    await srv.providers.simulator.injectInbound({ from: phone, to: CHAT_ADDRESS, text: 'Hello', channel: 'CHATAPP' });
    await until(
      () =>
        srv.context.db
          .selectFrom('conversations')
          .select(['session_channel', 'last_inbound_at'])
          .where('contact_id', '=', c)
          .executeTakeFirst(),
      (cv) => cv?.session_channel === 'CHATAPP' && cv.last_inbound_at !== null,
      'the inbound chat-app message stored',
    );
    const open = await sendChat(c, { type: 'text', text: 'Yes, how can we help?' });
    expect(open.status, JSON.stringify(open.body)).toBe(200);
    expect(open.body.data).toMatchObject({ plannedChannel: 'CHATAPP', status: 'queued' });
  });

  it("without channelType a chat-app sender's own channel is asked: a direct send goes by chat-app", async () => {
    const phone = '+14155550186';
    const c = await contact(phone);
    await srv.providers.simulator.injectInbound({ from: phone, to: CHAT_ADDRESS, text: 'Hi', channel: 'CHATAPP' });
    await until(
      () => srv.context.db.selectFrom('conversations').select('last_inbound_at').where('contact_id', '=', c).executeTakeFirst(),
      (cv) => cv?.last_inbound_at != null,
      'the inbound chat-app message stored',
    );
    const direct = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c, senderId: chat, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Thanks for writing' } },
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);
    expect(direct.body.data).toMatchObject({ requestedChannel: 'CHATAPP', plannedChannel: 'CHATAPP' });
  });

  it('a template sent outside the session: accepted, rendered with its parameters, priced as its text', async () => {
    const c = await contact('+14155550172');
    const res = await sendChat(c, { type: 'template', templateId: approvedId, parameters: PARAMETERS });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ plannedChannel: 'CHATAPP', segments: 1, estimatedCost: { amount: '0.0039', currency: 'USD' } });
    const id = res.body.data.messageId as string;
    const detail = await call(srv, 'GET', `/v1/messages/${id}`, { key });
    expect(detail.status, JSON.stringify(detail.body)).toBe(200);
    expect((detail.body.data ?? detail.body).content).toMatchObject({
      type: 'template',
      templateId: approvedId,
      title: 'Reminder for Ana',
      text: 'Hi Ana, your appointment is on Monday at 9:30.\nReply STOP to opt out',
      actions: [{ text: 'Reschedule', url: 'https://acme.example/appointments/B%2077' }],
      replies: [{ text: 'Confirm', postback: 'Confirm' }],
    });
    // What the carrier got is the rendered template.
    const sent = await until(
      () => srv.context.db.selectFrom('simulator_messages').select(['body', 'channel']).where('dedupe_key', '=', id).executeTakeFirst(),
      (row) => row !== undefined,
      'the template handed to the carrier',
    );
    expect(sent).toEqual({ body: 'Hi Ana, your appointment is on Monday at 9:30.\nReply STOP to opt out', channel: 'CHATAPP' });
    // In the conversation the template opened (no inbound message, so no session): a template goes by chat-app too.
    const again = await call(srv, 'POST', `/v1/conversations/${res.body.data.conversationId}/messages`, {
      key,
      body: { messageType: 'TRANSACTIONAL', content: { type: 'template', templateId: approvedId, parameters: PARAMETERS } },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ requestedChannel: 'CHATAPP', plannedChannel: 'CHATAPP' });
  });

  it('a preview renders the template as the send would, with the plan outside the session', async () => {
    const c = await contact('+14155550176');
    const res = await call(srv, 'POST', '/v1/messages/preview', {
      key,
      body: {
        contactId: c,
        senderId: chat,
        channelType: 'CHATAPP',
        messageType: 'TRANSACTIONAL',
        content: { type: 'template', templateId: approvedId, parameters: PARAMETERS },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.plannedChannel).toBe('CHATAPP');
    expect(res.body.data.renderings[0]).toMatchObject({
      channel: 'CHATAPP',
      role: 'primary',
      title: 'Reminder for Ana',
      body: 'Hi Ana, your appointment is on Monday at 9:30.\nReply STOP to opt out',
    });
    const text = await call(srv, 'POST', '/v1/messages/preview', {
      key,
      body: { contactId: c, senderId: chat, channelType: 'CHATAPP', messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hi' } },
    });
    expect(text.body.data.plannedChannel).toBeNull();
  });

  it('a missing parameter answers 422 TEMPLATE_PARAMETERS_INVALID naming it; another channel 400', async () => {
    const c = await contact('+14155550173');
    const res = await sendChat(c, { type: 'template', templateId: approvedId, parameters: PARAMETERS.filter((p) => p.index !== 2) });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.code).toBe('TEMPLATE_PARAMETERS_INVALID');
    expect(res.body.details).toEqual([
      expect.objectContaining({ field: 'body.content.parameters', code: 'missing:BODY.2', message: expect.stringContaining('BODY {{2}}') }),
      expect.objectContaining({ field: 'body.content.parameters', code: 'missing:BUTTONS.2' }),
    ]);
    // A value the platform refuses in a body, a placeholder the template lacks, a body filled past 1024 characters.
    const odd = await sendChat(c, {
      type: 'template',
      templateId: approvedId,
      parameters: [
        ...PARAMETERS.slice(0, 2),
        { component: 'BODY', index: 2, value: 'Monday\nat 9:30' },
        PARAMETERS[3],
        { component: 'BODY', index: 3, value: 'x' },
      ],
    });
    expect(odd.status).toBe(422);
    expect(odd.body.details.map((d: { field: string }) => d.field)).toEqual([
      'body.content.parameters.2.value',
      'body.content.parameters.4',
    ]);
    const long = await sendChat(c, {
      type: 'template',
      templateId: approvedId,
      parameters: [...PARAMETERS.slice(0, 2), { component: 'BODY', index: 2, value: 'y'.repeat(1000) }, PARAMETERS[3]],
    });
    expect(long.status).toBe(422);
    expect(long.body).toMatchObject({
      code: 'TEMPLATE_PARAMETERS_INVALID',
      details: [{ field: 'body.content.parameters', code: 'too_long' }],
    });
    const rcs = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c,
        senderId: chat,
        channelType: 'RCS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'template', templateId: approvedId, parameters: PARAMETERS },
      },
    });
    expect(rcs.status).toBe(400);
    expect(rcs.body.details[0].field).toBe('body.content.type');
  });

  it('a template of another sender, or not approved, answers 422 TEMPLATE_NOT_APPROVED', async () => {
    const c = await contact('+14155550174');
    const second = await chatSender('Second chat', '+14155550144');
    const res = await sendChat(c, { type: 'template', templateId: approvedId, parameters: PARAMETERS }, second);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.code).toBe('TEMPLATE_NOT_APPROVED');
    expect(res.body.details[0].field).toBe('body.content.templateId');
    const pending = await register('pending_one');
    expect(pending.status).toBe(201);
    // Asked at once: the review has not answered yet (one registry step).
    const early = await sendChat(c, { type: 'template', templateId: pending.body.id, parameters: PARAMETERS });
    expect(early.status).toBe(422);
    expect(early.body.code).toBe('TEMPLATE_NOT_APPROVED');
    const unknown = await sendChat(c, { type: 'template', templateId: '3e5a7c9b-2d4f-4a6c-8e0b-1f3a5c7e9d2b', parameters: PARAMETERS });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details[0].field).toBe('body.content.templateId');
    // A deleted template is gone: read, listed or sent.
    expect((await call(srv, 'DELETE', `/v1/chatapp-templates/${pending.body.id}`, { key })).status).toBe(204);
    expect((await call(srv, 'GET', `/v1/chatapp-templates/${pending.body.id}`, { key })).status).toBe(404);
    const gone = await sendChat(c, { type: 'template', templateId: pending.body.id, parameters: PARAMETERS });
    expect(gone.status).toBe(404);
  });
});

describe('the session window elsewhere: per recipient', () => {
  it("an event trigger's chat-app bot skips a contact outside the session with CHATAPP_SESSION_CLOSED", async () => {
    const bot = await call(srv, 'POST', '/v1/bots', {
      key,
      body: {
        name: 'Chat notices',
        channel: 'CHATAPP',
        senderId: chat,
        draftFlow: {
          nodes: [
            { id: 'start', type: 'START' },
            { id: 'due', type: 'END', content: { type: 'text', text: 'Your appointment is due.' } },
          ],
          edges: [{ id: 'e1', source: 'start', target: 'due' }],
        },
        triggers: [{ eventName: 'appointment.due', messageType: 'TRANSACTIONAL' }],
      },
    });
    expect(bot.status, JSON.stringify(bot.body)).toBe(201);
    expect((await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key })).status).toBe(200);
    const c = await contact('+14155550177');
    const res = await call(srv, 'POST', '/v1/events', { key, body: { event: 'appointment.due', contactId: c } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const result = res.body.data ?? res.body;
    expect(result.messages).toEqual([]);
    expect(result.skipped.map((x: { reason: string }) => x.reason)).toEqual(['CHATAPP_SESSION_CLOSED']);
  });
});

describe('a provider without chat-app templates', () => {
  /** Sends nothing and implements none of the optional operations (a carrier without a chat-app platform). */
  const sendOnly: MessagingProvider = {
    name: 'PROVIDER_B',
    kind: 'twilio',
    channels: new Set<Channel>(['SMS', 'MMS']),
    send: () => Promise.reject(new ProviderError('not in this test')),
    sendBatch: (messages) => Promise.resolve(messages.map(() => ({ ok: false as const, error: new ProviderError('not in this test') }))),
    parseCallback: () => Promise.resolve({ ok: false, status: 403, reason: 'not in this test' }),
  };

  it('answers 422 PROVIDER_UNSUPPORTED naming body.senderId and stores nothing', async () => {
    const other = await startTestServer({
      providers: ({ db, queue }) => assembleProviders({ db, queue, endpoint: { baseUrl: undefined }, real: { PROVIDER_B: sendOnly } }),
    });
    try {
      const o = await other.newOrg('Unsupported templates org');
      const res = await call(other, 'POST', '/v1/sender-ids', {
        key: o.apiKey.secret,
        body: { type: 'CHATAPP_BUSINESS', name: 'Chat B', address: '+14155550145', provider: 'PROVIDER_B' },
      });
      expect(res.status).toBe(201);
      await other.context.db
        .updateTable('sender_ids')
        .set({ status: 'ACTIVE', send_ready: true })
        .where('id', '=', res.body.data.id)
        .execute();
      const reg = await call(other, 'POST', '/v1/chatapp-templates', {
        key: o.apiKey.secret,
        body: { ...REMINDER, senderId: res.body.data.id, name: 'unsupported' },
      });
      expect(reg.status, JSON.stringify(reg.body)).toBe(422);
      expect(reg.body.code).toBe('PROVIDER_UNSUPPORTED');
      expect(reg.body.details.map((d: { field: string }) => d.field)).toEqual(['body.senderId']);
      const stored = await other.context.db
        .selectFrom('chatapp_templates')
        .select('id')
        .where('organization_id', '=', o.organizationId)
        .execute();
      expect(stored).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
