// Templates section through HTTP: the approved chat-app templates of an ACTIVE CHATAPP_BUSINESS sender, from the
// carrier simulator's catalogue (only APPROVED listed, ordered by name then language, no provider ids).
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
  it('lists the approved templates of an ACTIVE chat-app sender, by name then language, with stable ids', async () => {
    const id = await chatSender('Chat');
    const draft = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${id}`, { key });
    expect(draft.status).toBe(409);
    expect(draft.body.code).toBe('INVALID_STATE');
    await activate(id);
    const res = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${id}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const list = res.body.data as Array<{
      id: string;
      name: string;
      language: string;
      status: string;
      senderId: string;
      variables: unknown[];
    }>;
    expect(list.map((t) => `${t.name}/${t.language}`)).toEqual([
      'appointment_reminder/en_US',
      'appointment_reminder/es',
      'order_shipped/en_US',
    ]);
    expect(list.every((t) => t.status === 'APPROVED' && t.senderId === id)).toBe(true);
    expect(list[0]!.variables).toEqual([
      { component: 'BODY', index: 1, example: 'Maria' },
      { component: 'BODY', index: 2, example: 'Friday, 28 November at 10:00' },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('SIMTPL');
    const again = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${id}`, { key });
    expect(again.body.data.map((t: { id: string }) => t.id)).toEqual(list.map((t) => t.id));
  });

  it("400 without senderId or for a sender that is not CHATAPP_BUSINESS; 404 for another organization's; 502 when the platform is unreachable; 403 without the scope", async () => {
    expect((await call(srv, 'GET', '/v1/chatapp-templates', { key })).status).toBe(400);
    const notChat = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${org.senderId}`, { key });
    expect(notChat.status).toBe(400);
    expect(notChat.body.details[0].field).toBe('query.senderId');
    const other = await srv.newOrg('Other templates org');
    const foreign = await chatSender('Foreign chat', other.apiKey.secret);
    await activate(foreign);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${foreign}`, { key })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${foreign}`, { key: other.apiKey.secret })).status).toBe(200);
    const down = await chatSender('Chat UPSTREAM');
    await activate(down);
    const res = await call(srv, 'GET', `/v1/chatapp-templates?senderId=${down}`, { key });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('UPSTREAM_ERROR');
    const noScope = await srv.newKey(org.organizationId, ['bots:read']);
    expect((await call(srv, 'GET', `/v1/chatapp-templates?senderId=${down}`, { key: noScope.secret })).status).toBe(403);
  });
});
