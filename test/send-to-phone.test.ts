// POST /v1/messages/send with `to` (issue 37 item 7): a phone instead of `contactId`. The contact with that number
// is reused, or created as POST /v1/events does with `phone`; the consent rules are unchanged (a MARKETING send to
// a new contact is refused NO_CONSENT, and then no contact is left behind); exactly one of `contactId` and `to`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Send to phone org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

const text = { type: 'text', text: 'Your code is 1234.' };
const send = (body: Record<string, unknown>) => call(srv, 'POST', '/v1/messages/send', { key, body: { content: text, ...body } });
const contactsWith = (phone: string) =>
  srv.context.db
    .selectFrom('contacts')
    .select(['id', 'consent_type'])
    .where('organization_id', '=', org.organizationId)
    .where('phone', '=', phone)
    .execute();

describe('sending to a phone', () => {
  it('creates the contact for a new phone, and reuses it for the next send', async () => {
    const first = await send({ to: '+14155550161', messageType: 'TRANSACTIONAL' });
    expect(first.status, first.text).toBe(200);
    const [created] = await contactsWith('+14155550161');
    expect(created).toMatchObject({ consent_type: 'NONE' });
    expect(first.body.data.contactId).toBe(created!.id);

    const second = await send({ to: '+14155550161', messageType: 'TRANSACTIONAL' });
    expect(second.status, second.text).toBe(200);
    expect(second.body.data.contactId).toBe(created!.id);
    expect(second.body.data.conversationId).toBe(first.body.data.conversationId);
    expect(await contactsWith('+14155550161')).toHaveLength(1);
  });

  it('reuses a contact created through the API, and sends to it as by contactId', async () => {
    const c = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550162' } });
    expect(c.status, c.text).toBe(201);
    const res = await send({ to: '+14155550162', messageType: 'TRANSACTIONAL' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.contactId).toBe(c.body.id);
  });

  it('keeps the consent rules: MARKETING to a new phone is 422 NO_CONSENT and leaves no contact', async () => {
    const res = await send({ to: '+14155550163' });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('NO_CONSENT');
    expect(await contactsWith('+14155550163')).toHaveLength(0);
  });

  it('takes exactly one of contactId and to, and refuses an invalid phone naming body.to', async () => {
    const c = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550164' } });
    const both = await send({ to: '+14155550164', contactId: c.body.id, messageType: 'TRANSACTIONAL' });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('VALIDATION_ERROR');
    const neither = await send({ messageType: 'TRANSACTIONAL' });
    expect(neither.status).toBe(400);
    expect(neither.body.code).toBe('VALIDATION_ERROR');
    const bad = await send({ to: '+1999555016', messageType: 'TRANSACTIONAL' });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_PHONE', details: [{ field: 'body.to' }] });
  });
});
