// Bots section through HTTP: CRUD, the status machine (every transition), publish validation, revisions, testers,
// a published bot conversing (handoff, inbound replies through the provider callback), event triggers (the bots'
// trigger source), dictionary rewrites reaching flows, tenancy and scopes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSITIONS } from '../src/domain/bots/state.ts';
import { runBotTriggers } from '../src/domain/bots/triggers.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let otherKey: string;
let senderNumber: string;
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Bots org');
  key = org.apiKey.secret;
  otherKey = (await srv.newOrg('Other bots org')).apiKey.secret;
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
  for (const value of ['book_demo', 'talk_to_sales'])
    expect((await call(srv, 'POST', '/v1/intents', { key, body: { value } })).status).toBe(201);
  for (const name of ['first_name', 'interest', 'order_id'])
    expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name, type: 'text' } })).status).toBe(201);
});
afterAll(() => srv.close());

const UNKNOWN = '00000000-0000-4000-8000-00000000dead';
// RCS-capable handsets (last digit 0–4).
const phone = () => `+1415556${String(1000 + ++seq * 10).padStart(4, '0')}`;

const goodFlow = (welcome = 'Hi {{first_name}}, want to book a demo?') => ({
  nodes: [
    { id: 'start', type: 'START' },
    {
      id: 'welcome',
      type: 'MESSAGE',
      content: { type: 'text', text: welcome },
      buttons: [{ type: 'reply', text: 'Book a demo', intent: 'book_demo' }],
    },
    { id: 'demo', type: 'END', content: { type: 'text', text: 'Great! Pick a slot: https://example.com/demo' } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'welcome' },
    { id: 'e2', source: 'welcome', target: 'demo', intent: 'book_demo' },
  ],
});

async function bot(body: Record<string, unknown> = {}, k = key) {
  const res = await call(srv, 'POST', '/v1/bots', { key: k, body: { name: `Bot ${++seq}`, channel: 'RCS', ...body } });
  expect(res.status).toBe(201);
  return res.body as { id: string; status: string; version: number; draftFlow: unknown; triggers: Array<{ id: string }> };
}

const put = (id: string, body: Record<string, unknown>, k = key) => call(srv, 'PUT', `/v1/bots/${id}`, { key: k, body });
const publish = (id: string, k = key) => call(srv, 'POST', `/v1/bots/${id}/publish`, { key: k });

async function deliver(payload: Record<string, unknown>) {
  const body = JSON.stringify(payload);
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

const inbound = (from: string, text: string | null, postback?: string) => ({
  type: 'inbound',
  providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
  from,
  to: senderNumber,
  channel: postback ? 'RCS' : 'SMS',
  text,
  ...(postback ? { postback } : {}),
  at: new Date().toISOString(),
});

async function outboundTexts(conversationId: string): Promise<string[]> {
  const res = await call(srv, 'GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key });
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ direction: string; content: { text?: string }; createdAt: string }>)
    .filter((m) => m.direction === 'outbound')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((m) => m.content.text ?? '');
}

describe('CRUD', () => {
  it('creates a DRAFT bot at version 1 with a START-only flow and revision 1; gets, lists with search, deletes', async () => {
    const b = await bot({ name: 'Searchable Helper', description: 'd' });
    expect(b).toMatchObject({
      status: 'DRAFT',
      version: 1,
      publishedVersion: null,
      publishedFlow: null,
      draftFlow: { nodes: [{ id: 'start', type: 'START' }], edges: [] },
      triggers: [],
    });
    expect((await call(srv, 'GET', `/v1/bots/${b.id}`, { key })).body).toMatchObject({ id: b.id, name: 'Searchable Helper' });
    const list = await call(srv, 'GET', '/v1/bots?search=searchable', { key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect(list.body.data[0]).toMatchObject({ nodeCount: 1 });
    const revs = await call(srv, 'GET', `/v1/bots/${b.id}/revisions`, { key });
    expect(revs.body.data).toMatchObject([{ version: 1, publishedAt: null }]);
    expect((await call(srv, 'DELETE', `/v1/bots/${b.id}`, { key })).status).toBe(204);
    expect((await call(srv, 'GET', `/v1/bots/${b.id}`, { key })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/bots/${b.id}`, { key })).status).toBe(404);
  });

  it('404 naming body.senderId for an unknown sender; 400 for duplicate node ids; name-only PUT keeps the version', async () => {
    const res = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'x', channel: 'RCS', senderId: UNKNOWN } });
    expect(res.status).toBe(404);
    expect(res.body.details[0].field).toBe('body.senderId');
    const dup = await call(srv, 'POST', '/v1/bots', {
      key,
      body: {
        name: 'x',
        channel: 'RCS',
        draftFlow: {
          nodes: [
            { id: 'a', type: 'START' },
            { id: 'a', type: 'END' },
          ],
          edges: [],
        },
      },
    });
    expect(dup.status).toBe(400);
    const b = await bot();
    const renamed = await put(b.id, { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', version: 1, status: 'DRAFT' });
  });
});

describe('status machine', () => {
  it('the table: every (status, event) pair has one outcome', () => {
    expect(TRANSITIONS).toEqual({
      DRAFT: { editMatchingPublished: 'DRAFT', editDiffering: 'DRAFT', publish: 'PUBLISHED' },
      PUBLISHED: { editMatchingPublished: 'PUBLISHED', editDiffering: 'MODIFIED', publish: 'PUBLISHED' },
      MODIFIED: { editMatchingPublished: 'PUBLISHED', editDiffering: 'MODIFIED', publish: 'PUBLISHED' },
    });
  });

  it('DRAFT → (edit) DRAFT → (publish) PUBLISHED → (publish) unchanged → (edit) MODIFIED → (edit back) PUBLISHED → (edit) MODIFIED → (publish) PUBLISHED, with revisions', async () => {
    const b = await bot();
    // illegal: publishing a START-only draft (MISSING_TRANSITION on start is not raised: START→ nothing is final? it is not)
    const empty = await publish(b.id);
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('BOT_VALIDATION_FAILED');
    let r = await put(b.id, { draftFlow: goodFlow() });
    expect(r.body).toMatchObject({ status: 'DRAFT', version: 2 });
    r = await publish(b.id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'PUBLISHED', version: 2, publishedVersion: 2, publishedFlow: goodFlow() });
    const again = await publish(b.id);
    expect(again.body).toMatchObject({ status: 'PUBLISHED', publishedAt: r.body.publishedAt });
    r = await put(b.id, { draftFlow: goodFlow('Hello there {{first_name}}') });
    expect(r.body).toMatchObject({ status: 'MODIFIED', version: 3, publishedVersion: 2 });
    // identical draft: no new version
    r = await put(b.id, { draftFlow: goodFlow('Hello there {{first_name}}') });
    expect(r.body).toMatchObject({ status: 'MODIFIED', version: 3 });
    // illegal from MODIFIED: an invalid draft cannot be published, nothing changes
    r = await put(b.id, { draftFlow: { nodes: [], edges: [] } });
    expect(r.body).toMatchObject({ status: 'MODIFIED', version: 4 });
    const refused = await publish(b.id);
    expect(refused.status).toBe(400);
    expect(refused.body.validationErrors).toEqual([{ code: 'EMPTY_FLOW', message: expect.any(String), nodeId: null }]);
    expect((await call(srv, 'GET', `/v1/bots/${b.id}`, { key })).body).toMatchObject({ status: 'MODIFIED', publishedVersion: 2 });
    // back to the published flow (structurally equal, keys in another order): PUBLISHED
    const reordered = JSON.parse(
      JSON.stringify(goodFlow(), (_k, v: unknown) =>
        v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
      ),
    );
    r = await put(b.id, { draftFlow: reordered });
    expect(r.body).toMatchObject({ status: 'PUBLISHED', version: 5, publishedVersion: 2 });
    r = await put(b.id, { draftFlow: goodFlow('Third text {{first_name}}') });
    expect(r.body).toMatchObject({ status: 'MODIFIED', version: 6 });
    r = await publish(b.id);
    expect(r.body).toMatchObject({ status: 'PUBLISHED', version: 6, publishedVersion: 6 });
    const conflict = await put(b.id, { name: 'late', expectedVersion: 2 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('CONFLICT');
    const revs = await call(srv, 'GET', `/v1/bots/${b.id}/revisions?limit=2`, { key });
    expect(revs.body.pagination).toMatchObject({ total: 6, hasMore: true });
    expect(revs.body.data.map((x: { version: number }) => x.version)).toEqual([6, 5]);
    expect(revs.body.data[0].publishedAt).not.toBeNull();
  });
});

describe('validation', () => {
  it('validate lists every finding without changing anything; publish answers the same list', async () => {
    const b = await bot({
      channel: 'SMS',
      draftFlow: {
        nodes: [
          { id: 's1', type: 'START' },
          { id: 's2', type: 'START' },
          { id: 'q', type: 'QUESTION', buttons: [{ type: 'reply', text: 'Go', intent: 'nope_intent' }] },
          { id: 'm', type: 'MESSAGE', content: { type: 'card', card: { title: 'Hi {{unknown_var}}' } } },
          { id: 'end', type: 'END' },
          { id: 'orphan', type: 'END' },
        ],
        edges: [
          { id: 'e1', source: 's1', target: 'q' },
          { id: 'e2', source: 'q', target: 'm', intent: 'book_demo' },
          { id: 'e3', source: 'end', target: 'm' },
          { id: 'e4', source: 'm', target: 'ghost' },
          { id: 'e5', source: 'm', target: 'end', condition: { variable: 'interest', operator: 'exists' } },
        ],
      },
    });
    const v = await call(srv, 'POST', `/v1/bots/${b.id}/validate`, { key });
    expect(v.status).toBe(200);
    expect(v.body.data.valid).toBe(false);
    const codes = new Set((v.body.data.errors as Array<{ code: string }>).map((e) => e.code));
    for (const c of [
      'MULTIPLE_START_NODES',
      'MISSING_CONTENT',
      'MISSING_CAPTURE',
      'UNKNOWN_INTENT',
      'MISSING_TRANSITION',
      'UNKNOWN_VARIABLE',
      'CHANNEL_UNSUPPORTED',
      'INVALID_EDGE',
      'UNKNOWN_NODE',
      'UNREACHABLE_NODE',
    ]) {
      expect(codes, c).toContain(c);
    }
    const p = await publish(b.id);
    expect(p.status).toBe(400);
    expect(p.body.validationErrors).toEqual(v.body.data.errors);
    const noStart = await bot({ draftFlow: { nodes: [{ id: 'end', type: 'END' }], edges: [] } });
    const v2 = await call(srv, 'POST', `/v1/bots/${noStart.id}/validate`, { key });
    expect(v2.body.data.errors.map((e: { code: string }) => e.code)).toContain('MISSING_START_NODE');
    const ok = await bot({ draftFlow: goodFlow() });
    expect((await call(srv, 'POST', `/v1/bots/${ok.id}/validate`, { key })).body.data).toMatchObject({
      valid: true,
      version: 1,
      errors: [],
      warnings: [{ code: 'NO_WAY_OUT', nodeId: 'welcome' }], // a tap-only node without a flow fallback text: not blocking
    });
  });
});

describe('content rules', () => {
  it('a text matching a blocking content rule is CONTENT_BLOCKED', async () => {
    const rule = await call(srv, 'POST', '/v1/content-rules', {
      key,
      body: { name: 'No zorblax', pattern: 'zorblax', patternType: 'keyword', action: 'block' },
    });
    expect(rule.status).toBe(201);
    const b = await bot({ draftFlow: goodFlow('Buy zorblax now') });
    const v = await call(srv, 'POST', `/v1/bots/${b.id}/validate`, { key });
    expect(v.body.data.errors).toEqual([{ code: 'CONTENT_BLOCKED', message: expect.stringContaining('No zorblax'), nodeId: 'welcome' }]);
  });
});

describe('testers', () => {
  it('adds by phone (created, then reused: 409), by contactId, lists with NOT_APPLICABLE invites; 404 and 400', async () => {
    const b = await bot({ senderId: org.senderId });
    const p = phone();
    const first = await call(srv, 'POST', `/v1/bots/${b.id}/testers`, { key, body: { phone: p } });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ phone: p, contactCreated: true, rcsInviteStatus: 'NOT_APPLICABLE', rcsInviteSentAt: null });
    const again = await call(srv, 'POST', `/v1/bots/${b.id}/testers`, { key, body: { phone: p } });
    expect(again.status).toBe(409);
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(), name: 'Dana Reyes' } });
    const byId = await call(srv, 'POST', `/v1/bots/${b.id}/testers`, { key, body: { contactId: contact.body.id } });
    expect(byId.status).toBe(201);
    expect(byId.body.data).toMatchObject({ contactCreated: false, name: 'Dana Reyes' });
    const unknown = await call(srv, 'POST', `/v1/bots/${b.id}/testers`, { key, body: { contactId: UNKNOWN } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details[0].field).toBe('body.contactId');
    const list = await call(srv, 'GET', `/v1/bots/${b.id}/testers`, { key });
    expect(list.body.data.map((t: { phone: string }) => t.phone)).toEqual([p, contact.body.phone]);
  });
});

describe('RCS tester invites', () => {
  it('a bot on an RCS agent invites testers through the provider: PENDING, ACCEPTED (…1111), FAILED (not RCS capable), NOT_REQUESTED', async () => {
    const agent = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: { type: 'RCS_AGENT', name: 'Bot agent', provider: 'PROVIDER_B' },
    });
    expect(agent.status).toBe(201);
    const b = await bot({ senderId: agent.body.data.id });
    const add = (body: Record<string, unknown>) => call(srv, 'POST', `/v1/bots/${b.id}/testers`, { key, body });
    expect((await add({ phone: '+14155557770' })).body.data).toMatchObject({
      rcsInviteStatus: 'PENDING',
      rcsInviteSentAt: expect.any(String),
      rcsInviteError: null,
    });
    expect((await add({ phone: '+14155551111' })).body.data).toMatchObject({ rcsInviteStatus: 'ACCEPTED' });
    expect((await add({ phone: '+14155557778' })).body.data).toMatchObject({
      rcsInviteStatus: 'FAILED',
      rcsInviteError: expect.any(String),
    });
    expect((await add({ phone: '+14155557772', sendRcsInvite: false })).body.data).toMatchObject({
      rcsInviteStatus: 'NOT_REQUESTED',
      rcsInviteSentAt: null,
    });
    const bad = await add({ phone: '+1234' });
    expect(bad.status).toBe(400);
    const list = await call(srv, 'GET', `/v1/bots/${b.id}/testers`, { key });
    expect(list.body.data.map((t: { rcsInviteStatus: string }) => t.rcsInviteStatus)).toEqual([
      'PENDING',
      'ACCEPTED',
      'FAILED',
      'NOT_REQUESTED',
    ]);
  });
});

describe('a published bot converses', () => {
  it('a bot bound to a sender without inbound triggers or defaultForSender does not start: an inbound message there is an ordinary conversation message', async () => {
    const b = await bot({ draftFlow: goodFlow(), senderId: org.senderId });
    expect((await publish(b.id)).status).toBe(200);
    const p = phone();
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: p, name: 'Grace' } });
    await deliver(inbound(p, 'hello there'));
    const convs = await call(srv, 'GET', `/v1/conversations?contactId=${contact.body.id}`, { key });
    expect(convs.body.data[0]).toMatchObject({ handledBy: 'human' });
    expect(await outboundTexts(convs.body.data[0].id)).toEqual([]);
  });

  it('handed a conversation, it sends its first node; a postback reply advances it once, even when redelivered', async () => {
    const b = await bot({ draftFlow: goodFlow() });
    expect((await publish(b.id)).status).toBe(200);
    const p = phone();
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: p, name: 'Ada Lovelace' } });
    expect(contact.status).toBe(201);
    await deliver(inbound(p, 'hello'));
    const convs = await call(srv, 'GET', `/v1/conversations?contactId=${contact.body.id}`, { key });
    const conversationId = convs.body.data[0].id as string;
    const handoff = await call(srv, 'POST', `/v1/conversations/${conversationId}/handoff`, { key, body: { to: 'bot', botId: b.id } });
    expect(handoff.status).toBe(200);
    expect(handoff.body.data ?? handoff.body).toMatchObject({ handledBy: 'bot', botId: b.id });
    expect(await outboundTexts(conversationId)).toEqual(['Hi Ada, want to book a demo?']);

    const tap = inbound(p, 'Book a demo', 'book_demo');
    await deliver(tap);
    await deliver(tap); // the carrier redelivers
    expect(await outboundTexts(conversationId)).toEqual(['Hi Ada, want to book a demo?', 'Great! Pick a slot: https://example.com/demo']);
  });

  it('a text reply matching an intent advances a QUESTION, captures it and a HANDOFF node hands back to a human', async () => {
    const b = await bot({
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          {
            id: 'ask',
            type: 'QUESTION',
            content: { type: 'text', text: 'Demo or sales?' },
            capture: { variable: 'interest', from: 'intent' },
          },
          { id: 'sales', type: 'HANDOFF', content: { type: 'text', text: 'Connecting you ({{interest}}).' } },
          { id: 'other', type: 'END', content: { type: 'text', text: 'Bye.' } },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'ask' },
          { id: 'e2', source: 'ask', target: 'sales', intent: 'talk_to_sales' },
          { id: 'e3', source: 'ask', target: 'other' },
        ],
      },
    });
    expect((await publish(b.id)).status).toBe(200);
    const p = phone();
    await deliver(inbound(p, 'hi'));
    const contactId = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key })).body.data[0].id as string;
    const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key })).body.data[0].id as string;
    expect((await call(srv, 'POST', `/v1/conversations/${conversationId}/handoff`, { key, body: { to: 'bot', botId: b.id } })).status).toBe(
      200,
    );
    await deliver(inbound(p, 'Talk_To_Sales'));
    expect(await outboundTexts(conversationId)).toEqual(['Demo or sales?', 'Connecting you (talk_to_sales).']);
    const conv = await call(srv, 'GET', `/v1/conversations/${conversationId}`, { key });
    expect(conv.body.data ?? conv.body).toMatchObject({ handledBy: 'human' });
    await deliver(inbound(p, 'anyone?'));
    expect((await outboundTexts(conversationId)).length).toBe(2);
  });

  it('handoff to an unpublished or foreign bot answers 404 naming body.botId', async () => {
    const draft = await bot({ draftFlow: goodFlow() });
    const foreign = await bot({ draftFlow: goodFlow() }, otherKey);
    await publish(foreign.id, otherKey);
    const p = phone();
    await deliver(inbound(p, 'hey'));
    const contactId = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key })).body.data[0].id as string;
    const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key })).body.data[0].id as string;
    for (const botId of [draft.id, foreign.id]) {
      const res = await call(srv, 'POST', `/v1/conversations/${conversationId}/handoff`, { key, body: { to: 'bot', botId } });
      expect(res.status).toBe(404);
      expect(res.body.details[0].field).toBe('body.botId');
    }
  });
});

describe('event triggers (the bots trigger source)', () => {
  it('a matching event starts the flow with properties filled; the cool-down skips FREQUENCY_CAPPED; conditions; opted-out contacts', async () => {
    const flow = {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'note', type: 'END', content: { type: 'text', text: 'Order {{order_id}} shipped, {{first_name}}.' } },
      ],
      edges: [{ id: 'e1', source: 'start', target: 'note' }],
    };
    const b = await bot({
      draftFlow: flow,
      triggers: [
        {
          eventName: 'order.shipped',
          conditions: [{ property: 'carrier', operator: 'equals', value: 'UPS' }],
          messageType: 'TRANSACTIONAL',
          cooldownSeconds: 3600,
        },
      ],
    });
    expect(b.triggers).toMatchObject([{ id: expect.any(String), cooldownSeconds: 3600, active: true }]);
    const triggerId = b.triggers[0]!.id;
    const tenant = await tenantFor(srv.context, org.organizationId);
    const { db: _db, pool: _pool, ...services } = srv.context;
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone(), name: 'Grace Hopper' } });
    const run = async (contactId: string, properties: Record<string, unknown>, at = new Date()) => {
      const out = await runBotTriggers(tenant, services, {
        eventId: randomUUID(),
        name: 'order.shipped',
        contactId,
        properties,
        occurredAt: at,
      });
      return out.filter((o) => o.triggerId === triggerId);
    };
    // not published yet: nothing
    expect(await run(contact.body.id, { carrier: 'UPS', order_id: 'A1' })).toEqual([]);
    expect((await publish(b.id)).status).toBe(200);
    expect(await run(contact.body.id, { carrier: 'FedEx', order_id: 'A1' })).toEqual([]);
    const first = await run(contact.body.id, { carrier: 'UPS', order_id: 'A1' });
    expect(first).toMatchObject([{ triggerId, messageIds: [expect.any(String)], skipped: [] }]);
    const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contact.body.id}`, { key })).body.data[0].id as string;
    expect(await outboundTexts(conversationId)).toEqual(['Order A1 shipped, Grace.']);
    const capped = await run(contact.body.id, { carrier: 'UPS', order_id: 'A2' });
    expect(capped).toMatchObject([{ messageIds: [], skipped: [{ reason: 'FREQUENCY_CAPPED' }] }]);

    const p = phone();
    await deliver(inbound(p, 'STOP'));
    const optedOut = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key })).body.data[0].id as string;
    expect(await run(optedOut, { carrier: 'UPS', order_id: 'B1' })).toMatchObject([{ messageIds: [], skipped: [{ reason: 'OPTED_OUT' }] }]);

    // another organization's events never match this bot's triggers
    const other = await srv.newOrg('Trigger other org');
    const otherTenant = await tenantFor(srv.context, other.organizationId);
    const otherContact = await call(srv, 'POST', '/v1/contacts', { key: other.apiKey.secret, body: { phone: phone() } });
    {
      const out = await runBotTriggers(otherTenant, services, {
        eventId: randomUUID(),
        name: 'order.shipped',
        contactId: otherContact.body.id,
        properties: { carrier: 'UPS' },
        occurredAt: new Date(),
      });
      expect(out.filter((o) => o.triggerId === triggerId)).toEqual([]);
    }
  });
});

describe('event triggers through POST /v1/events', () => {
  it('a configured trigger answers the event with its message; a non-matching event name matches nothing', async () => {
    const b = await bot({
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'hi', type: 'END', content: { type: 'text', text: 'Welcome aboard, plan {{event.plan}}.' } },
        ],
        edges: [{ id: 'e1', source: 'start', target: 'hi' }],
      },
      triggers: [{ eventName: 'signup.completed', messageType: 'TRANSACTIONAL' }],
    });
    expect((await publish(b.id)).status).toBe(200);
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone() } });
    const res = await call(srv, 'POST', '/v1/events', {
      key,
      body: { event: 'signup.completed', contactId: contact.body.id, properties: { plan: 'pro' } },
    });
    expect(res.status).toBe(200);
    const result = res.body.data ?? res.body;
    expect(result.matchedTriggers.map((t: { triggerId: string }) => t.triggerId)).toEqual([b.triggers[0]!.id]);
    expect(result.messages).toHaveLength(1);
    const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contact.body.id}`, { key })).body.data[0].id as string;
    expect(await outboundTexts(conversationId)).toEqual(['Welcome aboard, plan pro.']);
    const none = await call(srv, 'POST', '/v1/events', { key, body: { event: 'signup.started', contactId: contact.body.id } });
    expect((none.body.data ?? none.body).matchedTriggers).toEqual([]);
  });
});

describe('dictionary rewrites reach flows', () => {
  it('renaming an intent rewrites draft and published flows; the bot stays PUBLISHED', async () => {
    const created = await call(srv, 'POST', '/v1/intents', { key, body: { value: 'rename_me' } });
    const flow = goodFlow();
    const f = JSON.parse(JSON.stringify(flow).replaceAll('book_demo', 'rename_me')) as typeof flow;
    const b = await bot({ draftFlow: f });
    expect((await publish(b.id)).status).toBe(200);
    const usage = await call(srv, 'GET', `/v1/intents/${created.body.data.id}/usage`, { key });
    expect(usage.body.data).toMatchObject({ botCount: 1 });
    const rw = await call(srv, 'POST', `/v1/intents/${created.body.data.id}/rewrite`, { key, body: { newValue: 'renamed_intent' } });
    expect(rw.status).toBe(200);
    expect(rw.body).toMatchObject({ botsUpdated: 1, referencesRewritten: 4 });
    const after = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
    expect(JSON.stringify(after.body.draftFlow)).toContain('renamed_intent');
    expect(JSON.stringify(after.body.publishedFlow)).not.toContain('rename_me');
    expect(after.body.status).toBe('PUBLISHED');
    // The rewritten flow is a new version, recorded and published (the Bot schema: a revision per version).
    expect(after.body.version).toBe(b.version + 1);
    expect(after.body.publishedVersion).toBe(b.version + 1);
    const revisions = await call(srv, 'GET', `/v1/bots/${b.id}/revisions`, { key });
    const newest = revisions.body.data.find((r: { version: number }) => r.version === b.version + 1);
    expect(JSON.stringify(newest.flow)).toContain('renamed_intent');
  });

  it('a MODIFIED bot records its rewritten published flow and then its draft, each as a revision', async () => {
    const created = await call(srv, 'POST', '/v1/intents', { key, body: { value: `mod_${Date.now()}` } });
    const token = created.body.data.value as string;
    const flow = JSON.parse(JSON.stringify(goodFlow()).replaceAll('book_demo', token)) as ReturnType<typeof goodFlow>;
    const b = await bot({ draftFlow: flow });
    expect((await publish(b.id)).status).toBe(200);
    const edited = JSON.parse(JSON.stringify(flow).replace('want to book a demo?', 'shall we book a demo?')) as typeof flow;
    const put1 = await put(b.id, { draftFlow: edited });
    expect(put1.body.status).toBe('MODIFIED');
    const rw = await call(srv, 'POST', `/v1/intents/${created.body.data.id}/rewrite`, { key, body: { newValue: `${token}_x` } });
    expect(rw.status).toBe(200);
    const after = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
    expect(after.body).toMatchObject({ status: 'MODIFIED', version: put1.body.version + 2, publishedVersion: put1.body.version + 1 });
    const revisions = (await call(srv, 'GET', `/v1/bots/${b.id}/revisions?limit=100`, { key })).body.data as Array<{
      version: number;
      flow: unknown;
      publishedAt: string | null;
    }>;
    const published = revisions.find((r) => r.version === put1.body.version + 1)!;
    const draft = revisions.find((r) => r.version === put1.body.version + 2)!;
    expect(published.publishedAt).not.toBeNull();
    expect(published.flow).toEqual(after.body.publishedFlow);
    expect(draft.flow).toEqual(after.body.draftFlow);
    expect(JSON.stringify(draft.flow)).toContain('shall we book a demo?');
  });

  it('a variable rewrite changes the published flow only through a new, published revision; older revisions keep their flow', async () => {
    const name = `city_${Date.now()}`;
    const created = await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name, type: 'text' } });
    expect(created.status).toBe(201);
    const b = await bot({ draftFlow: goodFlow(`Hi, we are in {{${name}}}. Want to book a demo?`) });
    expect((await publish(b.id)).status).toBe(200);
    const revisionsOf = async () =>
      (await call(srv, 'GET', `/v1/bots/${b.id}/revisions?limit=100`, { key })).body.data as Array<{
        version: number;
        flow: unknown;
        publishedAt: string | null;
      }>;
    const before = await revisionsOf();
    const live = (await call(srv, 'GET', `/v1/bots/${b.id}`, { key })).body;
    const rw = await call(srv, 'POST', `/v1/variable-definitions/${created.body.data.id}/rewrite`, {
      key,
      body: { newName: `${name}_new` },
    });
    expect(rw.status).toBe(200);
    expect(rw.body).toMatchObject({ botsUpdated: 1 });
    const after = (await call(srv, 'GET', `/v1/bots/${b.id}`, { key })).body;
    expect(after).toMatchObject({ status: 'PUBLISHED', version: live.version + 1, publishedVersion: live.version + 1 });
    const revisions = await revisionsOf();
    // Exactly one new revision: the rewritten flow, published, and it is the live published flow.
    expect(revisions).toHaveLength(before.length + 1);
    const added = revisions.find((r) => r.version === live.version + 1)!;
    expect(added.publishedAt).not.toBeNull();
    expect(added.flow).toEqual(after.publishedFlow);
    expect(JSON.stringify(after.publishedFlow)).toContain(`{{${name}_new}}`);
    // The revisions recorded before are untouched: the published flow never changed in place.
    for (const old of before) expect(revisions.find((r) => r.version === old.version)).toEqual(old);
    expect(JSON.stringify(before.find((r) => r.version === live.publishedVersion)!.flow)).toContain(`{{${name}}}`);
  });

  it('an edit holding the version read before a rename is refused (409), not written back with the old value', async () => {
    const created = await call(srv, 'POST', '/v1/intents', { key, body: { value: `stale_${Date.now()}` } });
    const token = created.body.data.value as string;
    const flow = JSON.parse(JSON.stringify(goodFlow()).replaceAll('book_demo', token)) as ReturnType<typeof goodFlow>;
    const b = await bot({ draftFlow: flow });
    const read = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
    expect(
      (await call(srv, 'POST', `/v1/intents/${created.body.data.id}/rewrite`, { key, body: { newValue: `${token}_new` } })).status,
    ).toBe(200);
    const edited = JSON.parse(JSON.stringify(flow).replace('want to book a demo?', 'shall we book a demo?')) as typeof flow;
    const stale = await put(b.id, { draftFlow: edited, expectedVersion: read.body.version });
    expect(stale.status).toBe(409);
    const after = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
    expect(JSON.stringify(after.body.draftFlow)).not.toContain(`"${token}"`);
  });
});

describe('rewrite atomicity', () => {
  it('a rename racing a bot edit never leaves the flow pointing at the old token (the stale edit loses on expectedVersion)', async () => {
    for (let round = 0; round < 5; round++) {
      const token = `race_${round}_${Date.now()}`;
      const created = await call(srv, 'POST', '/v1/intents', { key, body: { value: token } });
      expect(created.status).toBe(201);
      const flow = JSON.parse(JSON.stringify(goodFlow()).replaceAll('book_demo', token)) as ReturnType<typeof goodFlow>;
      const b = await bot({ draftFlow: flow });
      expect((await publish(b.id)).status).toBe(200);
      const current = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
      const edited = JSON.parse(JSON.stringify(flow).replace('want to book a demo?', 'shall we book a demo?')) as typeof flow;
      const [rename, edit] = await Promise.all([
        call(srv, 'POST', `/v1/intents/${created.body.data.id}/rewrite`, { key, body: { newValue: `${token}_new` } }),
        put(b.id, { draftFlow: edited, expectedVersion: current.body.version }),
      ]);
      expect(rename.status).toBe(200);
      expect([200, 409]).toContain(edit.status);
      const after = await call(srv, 'GET', `/v1/bots/${b.id}`, { key });
      const draft = JSON.stringify(after.body.draftFlow);
      // Every reference follows the rename, whichever request committed first.
      expect(draft).toContain(`"${token}_new"`);
      expect(draft).not.toContain(`"${token}"`);
      expect(JSON.stringify(after.body.publishedFlow)).not.toContain(`"${token}"`);
    }
  });
});

describe('tenancy and scopes', () => {
  it('another organization answers 404 on every id route; a read-only key gets 403 on create', async () => {
    const b = await bot({ draftFlow: goodFlow() });
    for (const [method, path, body] of [
      ['GET', `/v1/bots/${b.id}`],
      ['PUT', `/v1/bots/${b.id}`, { name: 'x' }],
      ['DELETE', `/v1/bots/${b.id}`],
      ['POST', `/v1/bots/${b.id}/publish`],
      ['POST', `/v1/bots/${b.id}/validate`],
      ['GET', `/v1/bots/${b.id}/revisions`],
      ['GET', `/v1/bots/${b.id}/testers`],
      ['POST', `/v1/bots/${b.id}/testers`, { phone: '+14155550100' }],
    ] as const) {
      const res = await call(srv, method, path, { key: otherKey, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(srv, 'GET', '/v1/bots', { key: otherKey })).body.data.map((x: { id: string }) => x.id)).not.toContain(b.id);
    const readOnly = await srv.newKey(org.organizationId, ['bots:read']);
    expect((await call(srv, 'POST', '/v1/bots', { key: readOnly.secret, body: { name: 'n', channel: 'RCS' } })).status).toBe(403);
    expect((await call(srv, 'GET', '/v1/bots', { key: readOnly.secret })).status).toBe(200);
  });
});
