// The README's quick start, step by step: the admin CLI makes the organization and its key, then a contact, a
// transactional send and its status through HTTP, as a newcomer types them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

const run = promisify(execFile);
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

describe('README quick start', () => {
  it('create-org → contact → transactional send → delivered and read', async () => {
    const env = { ...process.env, DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'test' };
    const { stdout } = await run(process.execPath, ['src/cli/admin.ts', 'create-org', '--name', 'Acme'], { env });
    const key = JSON.parse(stdout).apiKey.secret as string;

    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550101' } });
    expect(contact.status).toBe(201);

    const marketing = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: contact.body.id, content: { type: 'text', text: 'Hello!' } },
    });
    expect(marketing.status).toBe(422);
    expect(marketing.body.code).toBe('NO_CONSENT');
    expect(marketing.body.message).toContain('PATCH /v1/contacts/{id}/tcpa'); // says how to fix it

    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key,
      headers: { 'Idempotency-Key': 'first-send' },
      body: { contactId: contact.body.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hello!' } },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({ status: 'queued', plannedChannel: 'RCS' });

    const deadline = Date.now() + 20_000;
    let status = '';
    while (status !== 'read' && Date.now() < deadline) {
      const messages = await call(srv, 'GET', `/v1/conversations/${sent.body.data.conversationId}/messages`, { key });
      status = messages.body.data[0]?.status ?? '';
      if (status !== 'read') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('read');
  }, 60_000);
});
