// Two slips between the document and the server found by Schemathesis (issue 31, item 9): a body field of
// exportAnalytics named as a query parameter, and a sortOrder maximum the server enforced but did not document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Contract slips')).apiKey.secret;
});
afterAll(() => srv.close());

describe('exportAnalytics', () => {
  it('names body.startDate when it is after endDate (both are body fields)', async () => {
    const res = await call(srv, 'POST', '/v1/analytics/export', {
      key,
      body: { type: 'messages', startDate: '2026-03-10', endDate: '2026-03-01' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details).toEqual([{ field: 'body.startDate', message: 'must not be after endDate' }]);
  });
});

describe('dictionary category sortOrder', () => {
  it('is refused above 2147483647 by the documented maximum, on create and update', async () => {
    const over = await call(srv, 'POST', '/v1/dictionary-categories', { key, body: { name: 'Over', sortOrder: 2_147_483_648 } });
    expect(over.status).toBe(400);
    expect(over.body.details).toEqual([{ field: 'body.sortOrder', message: 'must be <= 2147483647', code: 'maximum' }]);
    const top = await call(srv, 'POST', '/v1/dictionary-categories', { key, body: { name: 'Top', sortOrder: 2_147_483_647 } });
    expect(top.status).toBe(201);
    expect(top.body.data.sortOrder).toBe(2_147_483_647);
    const update = await call(srv, 'PATCH', `/v1/dictionary-categories/${top.body.data.id}`, { key, body: { sortOrder: 2_147_483_648 } });
    expect(update.status).toBe(400);
    expect(update.body.details).toEqual([{ field: 'body.sortOrder', message: 'must be <= 2147483647', code: 'maximum' }]);
  });
});
