// Chat-app blasts (issue 33): a blast from a chat-app business sender (CHATAPP_BUSINESS) goes on CHATAPP, the
// sender's own channel, through the one send path. An approved template (`type: template` in BlastMessageContent)
// reaches every recipient whatever their session, rendered with its parameters and priced as its text, the same in
// the estimate, the messages and usage; free-form content reaches only the recipients inside their 24-hour session,
// the others skipped with CHATAPP_SESSION_CLOSED (the estimate's `excluded.sessionClosed`). A template that is not
// APPROVED for the blast's sender is refused when the content is saved, naming the field; variants carry templates.
process.env.SANDBOX_REGISTRY_STEP_MS = '100';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let seq = 0;

type Org = { organizationId: string; key: string; chat: string; address: string; sandbox: string };

const REMINDER = {
  language: 'en_US',
  category: 'MARKETING',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Offer for {{1}}' },
    { type: 'BODY', text: 'Hi {{1}}, our {{2}} starts today.' },
    { type: 'FOOTER', text: 'Reply STOP to opt out' },
  ],
  variables: [
    { component: 'HEADER', index: 1, example: 'Maria' },
    { component: 'BODY', index: 1, example: 'Maria' },
    { component: 'BODY', index: 2, example: 'winter sale' },
  ],
};
const PARAMETERS = [
  { component: 'HEADER', index: 1, value: 'you' },
  { component: 'BODY', index: 1, value: 'there' },
  { component: 'BODY', index: 2, value: 'winter sale' },
];
const RENDERED = 'Hi there, our winter sale starts today.\nReply STOP to opt out';

/** A new organization with an ACTIVE, send-ready chat-app business sender (its registration is the Sender IDs section's). */
async function chatOrg(name: string): Promise<Org> {
  const org = await srv.newOrg(name);
  const key = org.apiKey.secret;
  const address = `+1415555${String(9000 + ++seq).padStart(4, '0')}`;
  const res = await call(srv, 'POST', '/v1/sender-ids', {
    key,
    body: { type: 'CHATAPP_BUSINESS', name: `${name} chat`, address, provider: 'PROVIDER_A' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await srv.context.db.updateTable('sender_ids').set({ status: 'ACTIVE', send_ready: true }).where('id', '=', res.body.data.id).execute();
  return { organizationId: org.organizationId, key, chat: res.body.data.id, address, sandbox: org.senderId };
}

/** A template registered for the sender, once the platform's review has answered (APPROVED unless its name says otherwise). */
async function template(org: Org, name: string, senderId = org.chat): Promise<{ id: string; status: string }> {
  const res = await call(srv, 'POST', '/v1/chatapp-templates', { key: org.key, body: { ...REMINDER, senderId, name } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const done = await until(
    () => call(srv, 'GET', `/v1/chatapp-templates/${res.body.id}`, { key: org.key }),
    (r) => r.status === 200 && r.body.status !== 'PENDING',
    `template ${name} reviewed`,
  );
  return { id: res.body.id, status: done.body.status };
}

/** A contact with marketing consent, never inside quiet hours (23:59–00:00 UTC). */
async function contact(org: Org): Promise<{ id: string; phone: string }> {
  const phone = `+1415${String(++seq).padStart(6, '0')}3`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      attributes: JSON.stringify({}),
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

/** The contact writes to the chat-app sender: its 24-hour session opens. */
async function openSession(org: Org, c: { id: string; phone: string }): Promise<void> {
  await srv.providers.simulator.injectInbound({ from: c.phone, to: org.address, text: 'Hello', channel: 'CHATAPP' });
  await until(
    () =>
      srv.context.db
        .selectFrom('conversations')
        .select(['session_channel', 'last_inbound_at'])
        .where('contact_id', '=', c.id)
        .where('sender_id', '=', org.chat)
        .executeTakeFirst(),
    (cv) => cv?.session_channel === 'CHATAPP' && cv.last_inbound_at !== null,
    'the inbound chat-app message stored',
  );
}

const createBlast = (org: Org, body: Record<string, unknown>) =>
  call(srv, 'POST', '/v1/blasts', { key: org.key, body: { name: `Chat blast ${++seq}`, senderId: org.chat, ...body } });

async function waitStatus(org: Org, id: string, statuses: string[]) {
  return (
    await until(
      () => call(srv, 'GET', `/v1/blasts/${id}`, { key: org.key }),
      (r) => statuses.includes(r.body.status),
      `blast ${id} ${statuses.join('/')}`,
      30_000,
    )
  ).body;
}

/** The blast's messages as the API shows them once a carrier took each (its `channel` known), with their recipient's variant. */
const blastMessages = (org: Org, blastId: string) =>
  until(
    () => blastMessagesNow(org, blastId),
    (all) => all.every((m) => m.message.channel !== null && m.message.cost !== null),
    'the blast messages sent and charged',
  );

async function blastMessagesNow(org: Org, blastId: string) {
  const rows = await srv.context.db
    .selectFrom('blast_recipients')
    .select(['message_id', 'variant_key', 'contact_id'])
    .where('blast_id', '=', blastId)
    .where('status', '=', 'accepted')
    .execute();
  return Promise.all(
    rows.map(async (r) => {
      const res = await call(srv, 'GET', `/v1/messages/${r.message_id}`, { key: org.key });
      expect(res.status, res.text).toBe(200);
      return { variant: r.variant_key, contactId: r.contact_id, message: res.body.data ?? res.body };
    }),
  );
}

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

describe('a chat-app blast with an approved template', () => {
  it('reaches every recipient as CHATAPP with the rendered template, at the price the estimate says and usage bills', async () => {
    const org = await chatOrg('Chat template blast');
    const t = await template(org, 'winter_offer');
    expect(t.status).toBe('APPROVED');
    const recipients = [await contact(org), await contact(org), await contact(org)];
    await openSession(org, recipients[0]!); // inside or outside its session, a template reaches the contact
    const created = await createBlast(org, {
      contentJson: { type: 'template', templateId: t.id, parameters: PARAMETERS },
      contactIds: recipients.map((r) => r.id),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.contentJson).toEqual({ type: 'template', templateId: t.id, parameters: PARAMETERS });

    const estimate = await call(srv, 'GET', `/v1/blasts/${created.body.id}/estimate`, { key: org.key });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.body.data.audience).toMatchObject({
      total: 3,
      eligible: 3,
      excluded: { total: 0, noChannel: 0, sessionClosed: 0 },
    });
    expect(estimate.body.data.rcsCapabilityUnknown).toBe(0);
    // The filled template is one GSM-7 segment: 0.0039 USD a recipient.
    expect(estimate.body.data.byChannel).toEqual([
      {
        channel: 'CHATAPP',
        billingUnit: 'textSegment',
        recipients: 3,
        units: 3,
        unitPrice: { amount: '0.0039', currency: 'USD' },
        cost: { amount: '0.0117', currency: 'USD' },
      },
    ]);
    expect(estimate.body.data.totalCost).toEqual({ amount: '0.0117', currency: 'USD' });

    const launched = await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key: org.key });
    expect(launched.status, launched.text).toBe(200);
    const done = await waitStatus(org, created.body.id, ['DISPATCHED', 'SENT', 'FAILED']);
    expect(done.status).not.toBe('FAILED');
    expect(done.recipientCount).toBe(3);

    const messages = await blastMessages(org, created.body.id);
    expect(messages).toHaveLength(3);
    for (const { message } of messages) {
      expect(message).toMatchObject({
        requestedChannel: 'CHATAPP',
        channel: 'CHATAPP',
        segments: 1,
        cost: { amount: '0.0039', currency: 'USD' },
      });
      expect(message.content).toMatchObject({ type: 'template', templateId: t.id, title: 'Offer for you', text: RENDERED });
    }
    // The carrier got the rendered template, on the chat-app channel.
    const handed = await until(
      () =>
        srv.context.db
          .selectFrom('simulator_messages')
          .select(['body', 'channel'])
          .where(
            'dedupe_key',
            'in',
            messages.map((m) => m.message.id),
          )
          .execute(),
      (rows) => rows.length === 3,
      'the three messages handed to the carrier',
    );
    for (const row of handed) {
      expect(row.channel).toBe('CHATAPP');
      expect(row.body).toContain(RENDERED);
    }
    // Usage bills what the estimate said, once the messages are sent.
    const today = new Date().toISOString().slice(0, 10);
    const usage = await until(
      () => call(srv, 'GET', `/v1/analytics/usage?startDate=${today}&endDate=${today}`, { key: org.key }),
      (r) => r.body.data?.lines.find((l: { item: string }) => l.item === 'text_segment')?.quantity === 3,
      'three text segments billed',
    );
    const line = (item: string) => usage.body.data.lines.find((l: { item: string }) => l.item === item);
    expect(line('text_segment')).toMatchObject({ quantity: 3, cost: { amount: '0.0117' } });
    expect(line('rich_message')).toMatchObject({ quantity: 0 });
  });
});

describe('free-form content from a chat-app sender', () => {
  it('reaches the recipients inside their session; the others are excluded in the estimate and skipped CHATAPP_SESSION_CLOSED', async () => {
    const org = await chatOrg('Chat text blast');
    const inside = await contact(org);
    const outside = [await contact(org), await contact(org)];
    await openSession(org, inside);
    const created = await createBlast(org, {
      contentJson: { type: 'text', text: 'Thanks for writing: 30% off today.' },
      contactIds: [inside.id, ...outside.map((c) => c.id)],
    });
    expect(created.status, created.text).toBe(201);

    const estimate = await call(srv, 'GET', `/v1/blasts/${created.body.id}/estimate`, { key: org.key });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.body.data.audience).toMatchObject({
      total: 3,
      eligible: 1,
      excluded: { total: 2, noChannel: 0, sessionClosed: 2 },
    });
    expect(estimate.body.data.byChannel).toEqual([
      expect.objectContaining({ channel: 'CHATAPP', billingUnit: 'textSegment', recipients: 1 }),
    ]);
    // A test send reports the closed session per recipient, as the blast skips it.
    const tested = await call(srv, 'POST', `/v1/blasts/${created.body.id}/test`, { key: org.key, body: { contactIds: [outside[0]!.id] } });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body.data.results).toEqual([
      expect.objectContaining({ messageId: null, error: expect.objectContaining({ code: 'CHATAPP_SESSION_CLOSED' }) }),
    ]);

    const launched = await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key: org.key });
    expect(launched.status, launched.text).toBe(200);
    const done = await waitStatus(org, created.body.id, ['DISPATCHED', 'SENT', 'FAILED']);
    expect(done.recipientCount).toBe(1);
    const progress = await call(srv, 'GET', `/v1/blasts/${created.body.id}/progress`, { key: org.key });
    expect(progress.body.data).toMatchObject({ totalRecipients: 1, skipped: 2, skippedByReason: { CHATAPP_SESSION_CLOSED: 2 } });
    const rows = await srv.context.db
      .selectFrom('blast_recipients')
      .select(['contact_id', 'status', 'skip_reason'])
      .where('blast_id', '=', created.body.id)
      .orderBy('contact_id')
      .execute();
    expect(new Map(rows.map((r) => [r.contact_id, `${r.status}/${r.skip_reason}`]))).toEqual(
      new Map([[inside.id, 'accepted/null'], ...outside.map((c) => [c.id, 'skipped/CHATAPP_SESSION_CLOSED'] as [string, string])]),
    );
    const [message] = await blastMessages(org, created.body.id);
    expect(message!.message).toMatchObject({ channel: 'CHATAPP', content: { type: 'text' } });
  });

  it('with nobody inside a session the launch answers 422 (no eligible recipient) and the blast stays DRAFT', async () => {
    const org = await chatOrg('Chat text blast closed');
    const c = await contact(org);
    const created = await createBlast(org, { contentJson: { type: 'text', text: 'Hello again' }, contactIds: [c.id] });
    expect(created.status, created.text).toBe(201);
    const launched = await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key: org.key });
    expect(launched.status, launched.text).toBe(422);
    expect(launched.body.message).toContain('chat-app session');
    expect((await call(srv, 'GET', `/v1/blasts/${created.body.id}`, { key: org.key })).body.status).toBe('DRAFT');
  });
});

describe('a template that may not be sent is refused when the content is saved', () => {
  it('not APPROVED, another sender, parameters that do not fit, unknown: the code and the field', async () => {
    const org = await chatOrg('Chat template refusals');
    const c = await contact(org);
    const rejected = await template(org, 'promo_reject_me');
    expect(rejected.status).toBe('REJECTED');
    const refused = await createBlast(org, {
      contentJson: { type: 'template', templateId: rejected.id, parameters: PARAMETERS },
      contactIds: [c.id],
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.code).toBe('TEMPLATE_NOT_APPROVED');
    expect(refused.body.details).toEqual([expect.objectContaining({ field: 'body.contentJson.templateId', code: 'REJECTED' })]);

    const approved = await template(org, 'spring_offer');
    const missing = await createBlast(org, {
      variants: [
        { key: 'A', weight: 50, content: { type: 'text', text: 'Spring is here' } },
        { key: 'B', weight: 50, content: { type: 'template', templateId: approved.id, parameters: PARAMETERS.slice(0, 2) } },
      ],
      contactIds: [c.id],
    });
    expect(missing.status, missing.text).toBe(422);
    expect(missing.body.code).toBe('TEMPLATE_PARAMETERS_INVALID');
    expect(missing.body.details).toEqual([
      expect.objectContaining({ field: 'body.variants.1.content.parameters', code: 'missing:BODY.2' }),
    ]);

    const unknown = await createBlast(org, {
      contentJson: { type: 'template', templateId: '00000000-0000-4000-8000-000000000001' },
      contactIds: [c.id],
    });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.details.map((d: { field: string }) => d.field)).toEqual(['body.contentJson.templateId']);

    // A template goes from the sender it was approved for: not from the organization's sandbox sender.
    const sandbox = org.sandbox;
    const otherSender = await createBlast(org, {
      senderId: sandbox,
      contentJson: { type: 'template', templateId: approved.id, parameters: PARAMETERS },
      contactIds: [c.id],
    });
    expect(otherSender.status, otherSender.text).toBe(422);
    expect(otherSender.body.code).toBe('TEMPLATE_NOT_APPROVED');
    expect(otherSender.body.details).toEqual([expect.objectContaining({ field: 'body.contentJson.templateId', code: 'other_sender' })]);

    // Saved, the blast keeps its template's sender; PUT …/content checks as create does.
    const saved = await createBlast(org, {
      contentJson: { type: 'template', templateId: approved.id, parameters: PARAMETERS },
      contactIds: [c.id],
    });
    expect(saved.status, saved.text).toBe(201);
    const moved = await call(srv, 'PUT', `/v1/blasts/${saved.body.id}`, { key: org.key, body: { senderId: sandbox } });
    expect(moved.status, moved.text).toBe(422);
    expect(moved.body.details).toEqual([expect.objectContaining({ field: 'body.senderId', code: 'other_sender' })]);
    const content = await call(srv, 'PUT', `/v1/blasts/${saved.body.id}/content`, {
      key: org.key,
      body: { contentJson: { type: 'template', templateId: rejected.id, parameters: PARAMETERS } },
    });
    expect(content.status, content.text).toBe(422);
    expect(content.body.details).toEqual([expect.objectContaining({ field: 'body.contentJson.templateId' })]);

    // A template takes only its own fields.
    const mixed = await createBlast(org, {
      contentJson: { type: 'template', templateId: approved.id, parameters: PARAMETERS, text: 'Hi' },
      contactIds: [c.id],
    });
    expect(mixed.status, mixed.text).toBe(400);
  });

  it('a template paused after the blast was saved fails the launch with 422 TEMPLATE_NOT_APPROVED', async () => {
    const org = await chatOrg('Chat template paused');
    const c = await contact(org);
    const approved = await template(org, 'summer_offer');
    const saved = await createBlast(org, {
      contentJson: { type: 'template', templateId: approved.id, parameters: PARAMETERS },
      contactIds: [c.id],
    });
    expect(saved.status, saved.text).toBe(201);
    await srv.context.db.updateTable('chatapp_templates').set({ status: 'PAUSED' }).where('id', '=', approved.id).execute();
    const launched = await call(srv, 'POST', `/v1/blasts/${saved.body.id}/launch`, { key: org.key });
    expect(launched.status, launched.text).toBe(422);
    expect(launched.body.code).toBe('TEMPLATE_NOT_APPROVED');
    expect((await call(srv, 'GET', `/v1/blasts/${saved.body.id}`, { key: org.key })).body.status).toBe('DRAFT');
  });
});

describe('a scheduled chat-app blast whose template is paused before it starts', () => {
  it('moves to FAILED with failureReason TEMPLATE_NOT_APPROVED', async () => {
    const org = await chatOrg('Chat template scheduled');
    const c = await contact(org);
    const approved = await template(org, 'scheduled_offer');
    const saved = await createBlast(org, {
      contentJson: { type: 'template', templateId: approved.id, parameters: PARAMETERS },
      contactIds: [c.id],
    });
    expect(saved.status, saved.text).toBe(201);
    const scheduled = await call(srv, 'POST', `/v1/blasts/${saved.body.id}/schedule`, {
      key: org.key,
      body: { scheduledAt: new Date(Date.now() + 2000).toISOString() },
    });
    expect(scheduled.status, scheduled.text).toBe(200);
    await srv.context.db.updateTable('chatapp_templates').set({ status: 'PAUSED' }).where('id', '=', approved.id).execute();
    const failed = await waitStatus(org, saved.body.id, ['FAILED', 'SENDING', 'DISPATCHED', 'SENT']);
    expect(failed.status).toBe('FAILED');
    expect(failed.failureReason).toMatchObject({ code: 'TEMPLATE_NOT_APPROVED' });
  });
});

describe('A/B variants with templates', () => {
  it('each recipient gets its variant’s template, rendered with that variant’s parameters, estimated and sent on CHATAPP', async () => {
    const org = await chatOrg('Chat template variants');
    const t = await template(org, 'autumn_offer');
    const recipients = await Promise.all(Array.from({ length: 8 }, () => contact(org)));
    const other = [
      { component: 'HEADER', index: 1, value: 'friends' },
      { component: 'BODY', index: 1, value: 'friend' },
      { component: 'BODY', index: 2, value: 'autumn sale' },
    ];
    const created = await createBlast(org, {
      variants: [
        { key: 'A', weight: 50, content: { type: 'template', templateId: t.id, parameters: PARAMETERS } },
        { key: 'B', weight: 50, content: { type: 'template', templateId: t.id, parameters: other } },
      ],
      contactIds: recipients.map((r) => r.id),
    });
    expect(created.status, created.text).toBe(201);
    const estimate = await call(srv, 'GET', `/v1/blasts/${created.body.id}/estimate`, { key: org.key });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.body.data.audience).toMatchObject({ eligible: 8, excluded: { total: 0 } });
    expect(estimate.body.data.byChannel).toEqual([
      expect.objectContaining({
        channel: 'CHATAPP',
        billingUnit: 'textSegment',
        recipients: 8,
        units: 8,
        cost: { amount: '0.0312', currency: 'USD' },
      }),
    ]);
    const launched = await call(srv, 'POST', `/v1/blasts/${created.body.id}/launch`, { key: org.key });
    expect(launched.status, launched.text).toBe(200);
    await waitStatus(org, created.body.id, ['DISPATCHED', 'SENT']);
    const messages = await blastMessages(org, created.body.id);
    expect(messages).toHaveLength(8);
    const expected: Record<string, string> = { A: RENDERED, B: 'Hi friend, our autumn sale starts today.\nReply STOP to opt out' };
    for (const { variant, message } of messages) {
      expect(message.channel).toBe('CHATAPP');
      expect(message.content).toMatchObject({ type: 'template', templateId: t.id, text: expected[variant!] });
    }
  });
});
