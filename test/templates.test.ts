// Templates section through HTTP: the list of approved chat-app templates of an ACTIVE CHATAPP_BUSINESS sender and
// its refusals. Registration, review and sending: test/chatapp-templates.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Templates org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function chatSender(name: string, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/sender-ids', { key: k, body: { type: 'CHATAPP_BUSINESS', name, address: '+14155550100' } });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

// The sender's registration is the Sender IDs section's; here the sender is made ACTIVE directly.
const activate = (id: string) => srv.context.db.updateTable('sender_ids').set({ status: 'ACTIVE' }).where('id', '=', id).execute();

describe('listChatAppTemplates', () => {
  it('lists only what was registered and approved: a new ACTIVE chat-app sender has none (test/chatapp-templates.test.ts registers them)', async () => {
    const id = await chatSender('Chat');
    const draft = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${id}`, { key });
    expect(draft.status).toBe(409);
    expect(draft.body.code).toBe('INVALID_STATE');
    await activate(id);
    const res = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${id}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it("400 without senderId or for a sender that is not CHATAPP_BUSINESS; 404 for another organization's; 403 without the scope", async () => {
    expect((await call(srv, 'GET', '/v1/chatapp-templates', { key })).status).toBe(400);
    const notChat = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${org.senderId}`, { key });
    expect(notChat.status).toBe(400);
    expect(notChat.body.details[0].field).toBe('query.senderId');
    const other = await srv.newOrg('Other templates org');
    const foreign = await chatSender('Foreign chat', other.apiKey.secret);
    await activate(foreign);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${foreign}`, { key })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${foreign}`, { key: other.apiKey.secret })).status).toBe(200);
    const noScope = await srv.newKey(org.organizationId, ['bots:read']);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${foreign}`, { key: noScope.secret })).status).toBe(403);
  });
});
