// The asynchronous export through the real job queue (workers running): POST → pending → the job analytics.export
// streams it into the object store and completes it → the signed downloadUrl answers the CSV without a key.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

it('the export job completes a pending export and its signed link answers the CSV', async () => {
  const org = await srv.newOrg('Exports worker');
  const res = await call(srv, 'POST', '/v1/analytics/export', {
    key: org.apiKey.secret,
    body: { type: 'protocols', startDate: '2026-10-01', endDate: '2026-10-02' },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.status).toBe('pending');
  const link = new URL(res.body.data.downloadUrl);
  const done = await until(
    () => call(srv, 'GET', `${link.pathname}${link.search}`),
    (r) => r.status !== 409,
    'the export job',
  );
  expect(done.status, done.text).toBe(200);
  expect(done.text.split('\r\n').slice(0, 5)).toEqual([
    'channel,sent,delivered,read,failed,received,fallback,cost,currency',
    'RCS,0,0,0,0,0,0,0.0000,USD',
    'SMS,0,0,0,0,0,0,0.0000,USD',
    'MMS,0,0,0,0,0,0,0.0000,USD',
    'CHATAPP,0,0,0,0,0,0,0.0000,USD',
  ]);
});
