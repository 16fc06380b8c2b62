// The message report's carrier column and filter (issue 34): an outbound message records, when it is accepted, the
// network its number was originally allocated to (libphonenumber's range mapping; not a ported-number lookup), so
// the report shows it and the `carrier` filter (case-insensitive) finds those messages; a number the mapping
// names no carrier for (a North American one) shows null and matches no carrier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Carrier org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function send(phone: string): Promise<string> {
  const contact = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      attributes: '{}',
      rcs_capable: false,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId: contact.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your code is 1234.' } },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.messageId;
}

const report = async (q = '') => {
  const res = await call(srv, 'GET', `/v1/reports/messages?kind=mdr${q}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<{ messageId: string; carrier: string | null }>;
};

describe('carrier', () => {
  it('the report names the original carrier of each number and filters by it', async () => {
    const uk = await send('+447470123456'); // UK 7470…: Vodafone
    const de = await send('+4915112345678'); // Germany 151…: T-Mobile
    const us = await send('+14155550123'); // North America: no carrier ranges
    const rows = new Map((await report()).map((r) => [r.messageId, r.carrier]));
    expect([rows.get(uk), rows.get(de), rows.get(us)]).toEqual(['Vodafone', 'T-Mobile', null]);
    expect((await report('&carrier=vodafone')).map((r) => r.messageId)).toEqual([uk]);
    expect((await report('&carrier=T-MOBILE')).map((r) => r.messageId)).toEqual([de]);
    expect(await report('&carrier=Orange')).toEqual([]);
  });
});
