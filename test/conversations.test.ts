// Conversations through HTTP: list, get, messages (both directions, newest first), send inside, session
// window, source, handoff; tenant isolation on every operation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Conversations org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function contact(phone: string, orgId = org.organizationId) {
  return srv.context.db
    .insertInto('contacts')
    .values({ organization_id: orgId, phone, attributes: '{}', rcs_capable: true, consent_type: 'MARKETING' })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

async function sandboxNumber(senderId = org.senderId) {
  return (await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', senderId).executeTakeFirstOrThrow())
    .phone_number!;
}

async function waitForMessages(conversationId: string, n: number) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await call(srv, 'GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key });
    if (res.body.data?.length >= n) return res;
    if (Date.now() > deadline) throw new Error(`conversation has ${res.body.data?.length} messages, expected ${n}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a conversation started by an API send, then answered', () => {
  it('is listed, readable, and holds both directions newest first, with unread count and session', async () => {
    const c = await contact('+14155550101');
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hi there' } },
    });
    const conversationId = sent.body.data.conversationId;

    const session0 = await call(srv, 'GET', `/v1/conversations/${conversationId}/session`, { key });
    expect(session0.body.data).toMatchObject({ state: 'none', channel: null, startedAt: null, expiresAt: null });

    await srv.providers.simulator.injectInbound({ from: c.phone, to: await sandboxNumber(), text: 'Thanks!' });
    const messages = await waitForMessages(conversationId, 2);
    expect(messages.body.data.map((m: { direction: string }) => m.direction)).toEqual(['inbound', 'outbound']);
    expect(messages.body.data[0]).toMatchObject({
      content: { type: 'text', text: 'Thanks!' },
      status: 'received',
      cost: null,
      requestedChannel: null,
    });
    expect(JSON.stringify(messages.body)).not.toMatch(/PROVIDER_|SIM[0-9a-f]{8}/);

    const one = await call(srv, 'GET', `/v1/conversations/${conversationId}`, { key });
    expect(one.body.data).toMatchObject({
      id: conversationId,
      contactId: c.id,
      contactPhone: c.phone,
      source: 'api',
      status: 'open',
      handledBy: 'human',
      unreadCount: 1,
      lastMessagePreview: 'Thanks!',
    });

    const list = await call(srv, 'GET', `/v1/conversations?contactId=${c.id}`, { key });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([conversationId]);
    expect(list.body.pagination.total).toBe(1);

    const session = await call(srv, 'GET', `/v1/conversations/${conversationId}/session`, { key });
    expect(session.body.data).toMatchObject({ state: 'active', channel: 'RCS' });
    expect(new Date(session.body.data.expiresAt).getTime() - new Date(session.body.data.lastInboundAt).getTime()).toBe(24 * 3600_000);

    const source = await call(srv, 'GET', `/v1/conversations/${conversationId}/source`, { key });
    expect(source.body.data).toMatchObject({ type: 'api', firstMessageId: sent.body.data.messageId, blastId: null });

    const reply = await call(srv, 'POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      body: { messageType: 'SERVICE', content: { type: 'text', text: 'You are welcome' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ conversationId, contactId: c.id, status: 'queued' });
    const after = await call(srv, 'GET', `/v1/conversations/${conversationId}`, { key });
    expect(after.body.data.unreadCount).toBe(0);
  });

  it('records an inbound-first conversation with source inbound', async () => {
    const c = await contact('+14155550102');
    await srv.providers.simulator.injectInbound({ from: c.phone, to: await sandboxNumber(), text: 'Hello?' });
    const deadline = Date.now() + 15_000;
    let listed;
    while (Date.now() < deadline) {
      listed = await call(srv, 'GET', `/v1/conversations?contactId=${c.id}`, { key });
      if (listed.body.data.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed!.body.data[0]).toMatchObject({ source: 'inbound', unreadCount: 1 });
  });
});

describe('sendConversationMessage: Idempotency-Key', () => {
  it('is applied by the router whatever the header’s case: a retry replays and sends once', async () => {
    const c = await contact('+14155550131');
    const first = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hi' } },
    });
    const conversationId = first.body.data.conversationId;
    const body = { messageType: 'SERVICE', content: { type: 'text', text: 'Once only' } };
    const a = await call(srv, 'POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      headers: { 'IdEmPoTeNcY-KeY': `conv-${c.id}` },
      body,
    });
    const b = await call(srv, 'POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      headers: { 'idempotency-key': `conv-${c.id}` },
      body,
    });
    expect(a.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    const reused = await call(srv, 'POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      headers: { 'Idempotency-Key': `conv-${c.id}` },
      body: { ...body, content: { type: 'text', text: 'Other' } },
    });
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const stored = await srv.context.db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', '=', conversationId)
      .where('direction', '=', 'outbound')
      .execute();
    expect(stored).toHaveLength(2); // the first send and one conversation message
  });
});

describe('pagination', () => {
  it('reports the real total past the last page, for conversations as for contacts, and for a conversation’s messages', async () => {
    const c = await contact('+14155550105');
    const send = (text: string) =>
      call(srv, 'POST', '/v1/messages/send', {
        key,
        body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text } },
      });
    const first = await send('one');
    await send('two');
    const id = first.body.data.conversationId;

    const list = await call(srv, 'GET', `/v1/conversations?contactId=${c.id}&page=5`, { key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [], pagination: { page: 5, limit: 20, total: 1, hasMore: false } });

    const messages = await call(srv, 'GET', `/v1/conversations/${id}/messages?page=5&limit=1`, { key });
    expect(messages.status).toBe(200);
    expect(messages.body).toEqual({ data: [], pagination: { page: 5, limit: 1, total: 2, hasMore: false } });
    const last = await call(srv, 'GET', `/v1/conversations/${id}/messages?page=2&limit=1`, { key });
    expect(last.body.pagination).toEqual({ page: 2, limit: 1, total: 2, hasMore: false });
    expect(last.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.data.messageId]);
  });
});

describe('handoffConversation', () => {
  it('hands to a human (idempotently) and refuses an unknown bot with 404', async () => {
    const c = await contact('+14155550103');
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: c.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'x' } },
    });
    const id = sent.body.data.conversationId;
    await srv.context.db.updateTable('conversations').set({ handled_by: 'bot' }).where('id', '=', id).execute();
    const res = await call(srv, 'POST', `/v1/conversations/${id}/handoff`, { key, body: { to: 'human', note: 'refund' } });
    expect(res.status).toBe(200);
    expect(res.body.data.handledBy).toBe('human');
    expect((await call(srv, 'POST', `/v1/conversations/${id}/handoff`, { key, body: { to: 'human' } })).status).toBe(200);
    const bot = await call(srv, 'POST', `/v1/conversations/${id}/handoff`, {
      key,
      body: { to: 'bot', botId: '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b' },
    });
    expect(bot.status).toBe(404);
    const bad = await call(srv, 'POST', `/v1/conversations/${id}/handoff`, {
      key,
      body: { to: 'human', botId: '3f2b8c1e-6d4a-4f7e-9b1a-2c5d8e9f0a1b' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another organization's conversation on every operation, and never lists it", async () => {
    const other = await srv.newOrg('Other conversations org');
    const theirContact = await contact('+14155550104', other.organizationId);
    const theirs = await call(srv, 'POST', '/v1/messages/send', {
      key: other.apiKey.secret,
      body: { contactId: theirContact.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'x' } },
    });
    const id = theirs.body.data.conversationId;
    for (const [method, path, body] of [
      ['GET', `/v1/conversations/${id}`],
      ['GET', `/v1/conversations/${id}/messages`],
      ['GET', `/v1/conversations/${id}/session`],
      ['GET', `/v1/conversations/${id}/source`],
      ['POST', `/v1/conversations/${id}/messages`, { content: { type: 'text', text: 'x' } }],
      ['POST', `/v1/conversations/${id}/handoff`, { to: 'human' }],
    ] as Array<[string, string, unknown?]>) {
      const res = await call(srv, method, path, { key, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const list = await call(srv, 'GET', '/v1/conversations?limit=100', { key });
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(id);
  });
});
