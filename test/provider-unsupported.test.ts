// A provider that cannot do an operation answers 422 PROVIDER_UNSUPPORTED naming it, never a fake success, and
// nothing is stored. The slot PROVIDER_A is played here by a provider that only sends (as a carrier without
// number search, registry or capability lookup would); the sandbox senders keep the simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleProviders } from '../src/providers/assemble.ts';
import { ProviderError, type Channel, type MessagingProvider } from '../src/providers/provider.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

/** Sends nothing (no test here sends) and implements none of the optional operations. */
const sendOnly: MessagingProvider = {
  name: 'PROVIDER_A',
  kind: 'twilio',
  channels: new Set<Channel>(['SMS', 'MMS']),
  send: () => Promise.reject(new ProviderError('not in this test')),
  sendBatch: (messages) => Promise.resolve(messages.map(() => ({ ok: false as const, error: new ProviderError('not in this test') }))),
  parseCallback: () => Promise.resolve({ ok: false, status: 403, reason: 'not in this test' }),
};

let srv: TestServer;
let key: string;
let orgId: string;

beforeAll(async () => {
  srv = await startTestServer({
    providers: ({ db, queue }) => assembleProviders({ db, queue, endpoint: { baseUrl: undefined }, real: { PROVIDER_A: sendOnly } }),
  });
  const org = await srv.newOrg('Unsupported org');
  key = org.apiKey.secret;
  orgId = org.organizationId;
});
afterAll(() => srv.close());

const expectUnsupported = (res: { status: number; body: any }, what: string, field?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe('PROVIDER_UNSUPPORTED');
  expect(res.body.message).toBe(`The configured provider (PROVIDER_A) does not support ${what}.`);
  if (field) expect(res.body.details.map((d: { field: string }) => d.field)).toEqual([field]);
};

describe('an operation the configured provider does not support', () => {
  it('number search on that slot answers 422 naming body.provider; the other slot (simulator) still answers', async () => {
    const asked = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key,
      body: { inventoryType: 'Local', provider: 'PROVIDER_A' },
    });
    expectUnsupported(asked, 'number search', 'body.provider');
    const any = await call(srv, 'POST', '/v1/sender-ids/numbers/search', { key, body: { inventoryType: 'Local' } });
    expect(any.status).toBe(200);
    expect(new Set(any.body.data.map((r: { provider: string }) => r.provider))).toEqual(new Set(['PROVIDER_B']));
  });

  it('a 10DLC brand registration answers 422 and stores nothing', async () => {
    const sender = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'LONG_CODE', name: 'Unsupported brand' } });
    expect(sender.status).toBe(201);
    const res = await call(srv, 'POST', `/v1/sender-ids/${sender.body.data.id}/brand/register`, {
      key,
      body: {
        entityType: 'PRIVATE_PROFIT',
        displayName: 'Acme Dental',
        companyName: 'Acme Dental Group LLC',
        taxId: '12-3456789',
        email: 'compliance@acmedental.example',
        phone: '+14155550100',
        street: '500 Market Street',
        city: 'San Francisco',
        state: 'CA',
        postalCode: '94105',
        country: 'US',
        vertical: 'HEALTHCARE',
      },
    });
    expectUnsupported(res, '10DLC brand registration', 'path.id');
    const stored = await srv.context.db.selectFrom('brand_registrations').select('id').where('organization_id', '=', orgId).execute();
    expect(stored).toEqual([]);
  });

  it('an RCS capability check goes to the slot whose provider looks capabilities up (PROVIDER_B here)', async () => {
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550177' } });
    expect(contact.status).toBe(201);
    // PROVIDER_B (the simulator) looks capabilities up: the check goes there, not to a fake answer.
    expect((await call(srv, 'GET', `/v1/contacts/${contact.body.id}/rcs-check`, { key })).status).toBe(200);
  });

  it('a bot tester on an RCS agent of that slot answers 422 (not a FAILED invite) and stores nothing', async () => {
    const agent = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: { type: 'RCS_AGENT', name: 'Unsupported agent', provider: 'PROVIDER_A' },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const b = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'Unsupported bot', channel: 'RCS', senderId: agent.body.data.id } });
    expect(b.status).toBe(201);
    const res = await call(srv, 'POST', `/v1/bots/${b.body.id}/testers`, { key, body: { phone: '+14155550100' } });
    expectUnsupported(res, 'RCS tester invites');
    expect((await call(srv, 'GET', `/v1/bots/${b.body.id}/testers`, { key })).body.data).toEqual([]);
  });
});
