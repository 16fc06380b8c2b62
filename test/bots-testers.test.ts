// RCS tester invites through the provider (issue 33 item 8), with the background jobs running: a bot on an RCS agent
// invites its testers through the carrier sandbox, and the handsets' answers come back through the callback route
// (README "Carrier sandbox": …2222 declines, …3333 never answers, any other accepts): PENDING moves to ACCEPTED or
// DECLINED, and each invited phone is the agent's test device with the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let srv: TestServer;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  key = (await srv.newOrg('Bot testers org')).apiKey.secret;
});
afterAll(() => srv.close());

describe('RCS tester invites are answered on the handset', () => {
  it('the sandbox handsets accept (…0100) or decline (…2222) a second later; …3333 stays PENDING; the test devices follow', async () => {
    const agent = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: { type: 'RCS_AGENT', name: 'Tester agent', provider: 'PROVIDER_B' },
    });
    expect(agent.status).toBe(201);
    const senderId = agent.body.data.id as string;
    const b = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'Tested bot', channel: 'RCS', senderId } });
    expect(b.status).toBe(201);
    const phones = ['+14155550100', '+14155552222', '+14155553333'];
    for (const phone of phones) {
      const add = await call(srv, 'POST', `/v1/bots/${b.body.id}/testers`, { key, body: { phone } });
      expect(add.status).toBe(201);
      expect(add.body.data).toMatchObject({ phone, rcsInviteStatus: 'PENDING', rcsInviteSentAt: expect.any(String) });
    }
    const statuses = async () =>
      (
        (await call(srv, 'GET', `/v1/bots/${b.body.id}/testers`, { key })).body.data as Array<{ phone: string; rcsInviteStatus: string }>
      ).map((t) => t.rcsInviteStatus);
    expect(await until(statuses, (s) => s[0] !== 'PENDING' && s[1] !== 'PENDING', 'the handsets to answer')).toEqual([
      'ACCEPTED',
      'DECLINED',
      'PENDING',
    ]);
    const devices = await srv.context.db
      .selectFrom('rcs_test_devices')
      .select(['phone', 'status'])
      .where('sender_id', '=', senderId)
      .orderBy('phone')
      .execute();
    expect(devices).toEqual([
      { phone: phones[0], status: 'ACCEPTED' },
      { phone: phones[1], status: 'DECLINED' },
      { phone: phones[2], status: 'INVITED' },
    ]);
  });
});
