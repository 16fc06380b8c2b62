// The deprecated /v1/channels view through HTTP: every operation, the deprecation headers on success and on errors,
// a channel and the sender ID behind it seen from both sides, RCS senders and their agent details (one record with
// SenderId.rcsAgent), tester invites through the simulator, channel health by the sandbox rules, tenancy, scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type CallResult, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  [org, other] = await Promise.all([srv.newOrg('Channels org'), srv.newOrg('Other channels org')]);
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

function expectDeprecated(res: CallResult): void {
  expect(res.headers.get('deprecation')).toBe('@1756684800');
  expect(res.headers.get('sunset')).toBe('Tue, 01 Sep 2026 00:00:00 GMT');
  expect(res.headers.get('link')).toBe('</v1/sender-ids>; rel="successor-version"');
}

async function sender(body: Record<string, unknown>, opts: { active?: boolean } = {}, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/sender-ids', { key: k, body });
  expect(res.status).toBe(201);
  const id = res.body.data.id as string;
  if (opts.active) {
    await srv.context.db
      .updateTable('sender_ids')
      .set({ status: 'ACTIVE', send_ready: true, activated_at: new Date() })
      .where('id', '=', id)
      .execute();
  }
  return id;
}

async function channel(body: Record<string, unknown>, k = key): Promise<CallResult> {
  const res = await call(srv, 'POST', '/v1/channels', { key: k, body });
  expectDeprecated(res);
  return res;
}

describe('deprecation headers', () => {
  it('are on a 2xx and on a 404 (and any error the operation answers itself)', async () => {
    const list = await call(srv, 'GET', '/v1/channels', { key });
    expect(list.status).toBe(200);
    expectDeprecated(list);
    const missing = await call(srv, 'GET', `/v1/channels/${UNKNOWN}`, { key });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    expectDeprecated(missing);
    for (const path of [`/v1/channels/${UNKNOWN}/test`]) {
      const res = await call(srv, 'POST', path, { key });
      expect(res.status).toBe(404);
      expectDeprecated(res);
    }
  });

  it('are on the answers given before the handler runs too: 401, 403 and request validation', async () => {
    const unauthenticated = await call(srv, 'GET', '/v1/channels');
    expect(unauthenticated.status).toBe(401);
    expectDeprecated(unauthenticated);
    const narrow = await srv.newKey(org.organizationId, ['contacts:read']);
    const forbidden = await call(srv, 'GET', '/v1/channels', { key: narrow.secret });
    expect(forbidden.status).toBe(403);
    expectDeprecated(forbidden);
    const invalid = await call(srv, 'POST', '/v1/channels', { key, body: { nonsense: true } });
    expect(invalid.status).toBe(400);
    expectDeprecated(invalid);
  });
});

describe('channels over sender IDs', () => {
  it('a channel created through /v1/channels names a sender ID that /v1/sender-ids shows, and vice versa', async () => {
    const created = await channel({ type: 'SMS', name: 'Main SMS', senderIdId: org.senderId });
    expect(created.status).toBe(201);
    const ch = created.body.data;
    expect(ch).toMatchObject({ type: 'SMS', name: 'Main SMS', senderIdId: org.senderId });
    expect(ch.health).toMatchObject({ channelId: ch.id, status: 'HEALTHY', message: null });
    expect(ch.health.checks.map((c: { name: string }) => c.name)).toEqual(['credentials', 'sender_status', 'protocol']);

    const viaSenders = await call(srv, 'GET', `/v1/sender-ids/${ch.senderIdId}`, { key });
    expect(viaSenders.status).toBe(200);
    expect(viaSenders.body.data).toMatchObject({ id: org.senderId, type: 'LONG_CODE', status: 'ACTIVE' });

    const got = await call(srv, 'GET', `/v1/channels/${ch.id}`, { key });
    expect(got.status).toBe(200);
    expectDeprecated(got);
    expect(got.body.data).toEqual({
      id: ch.id,
      type: 'SMS',
      name: 'Main SMS',
      senderIdId: org.senderId,
      createdAt: ch.createdAt,
      updatedAt: ch.updatedAt,
    });
    const list = await call(srv, 'GET', '/v1/channels', { key });
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(ch.id);

    // A sender made through /v1/sender-ids is bound as a channel; a change made there shows in the channel's health.
    const made = await sender({ type: 'TOLL_FREE', name: 'Orders' }, { active: true });
    const bound = await channel({ type: 'MMS', name: 'Orders MMS', senderIdId: made });
    expect(bound.status).toBe(201);
    expect(bound.body.data.health.status).toBe('HEALTHY');
    expect((await call(srv, 'POST', `/v1/sender-ids/${made}/suspend`, { key })).status).toBe(200);
    const health = await call(srv, 'POST', `/v1/channels/${bound.body.data.id}/test`, { key });
    expect(health.status).toBe(200);
    expectDeprecated(health);
    expect(health.body).toMatchObject({ channelId: bound.body.data.id, status: 'DOWN', message: 'The sender ID is SUSPENDED.' });
    expect(health.body.checks.find((c: { name: string }) => c.name === 'sender_status')).toEqual({
      name: 'sender_status',
      ok: false,
      message: 'The sender ID is SUSPENDED.',
    });
  });

  it('createChannel refuses an unknown sender (404 naming the field), a sender without the protocol or DEACTIVATED (422)', async () => {
    const unknown = await channel({ type: 'SMS', name: 'X', senderIdId: UNKNOWN });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toEqual([
      { field: 'body.senderIdId', message: 'no such sender ID in this organization', code: 'not_found' },
    ]);
    const rcsOnNumber = await channel({ type: 'RCS', name: 'X', senderIdId: org.senderId });
    expect(rcsOnNumber.status).toBe(422);
    const gone = await sender({ type: 'TOLL_FREE', name: 'Gone' });
    expect((await call(srv, 'DELETE', `/v1/sender-ids/${gone}`, { key })).status).toBe(200);
    const deactivated = await channel({ type: 'SMS', name: 'X', senderIdId: gone });
    expect(deactivated.status).toBe(422);
    expect(deactivated.body.code).toBe('UNPROCESSABLE');
  });

  it('replaceChannel renames and rebinds (type fixed), deleteChannel removes the binding only', async () => {
    const first = await sender({ type: 'TOLL_FREE', name: 'First' }, { active: true });
    const second = await sender({ type: 'SHORT_CODE', name: 'Second', address: '12345', countryCode: 'US' }, { active: true });
    const ch = (await channel({ type: 'SMS', name: 'Before', senderIdId: first })).body.data;
    const replaced = await call(srv, 'PUT', `/v1/channels/${ch.id}`, { key, body: { name: 'After', senderIdId: second } });
    expect(replaced.status).toBe(200);
    expectDeprecated(replaced);
    expect(replaced.body.data).toMatchObject({ id: ch.id, type: 'SMS', name: 'After', senderIdId: second, health: { status: 'HEALTHY' } });
    const rcsAgent = await sender({ type: 'RCS_AGENT', name: 'Agent' });
    const wrong = await call(srv, 'PUT', `/v1/channels/${ch.id}`, { key, body: { name: 'After', senderIdId: rcsAgent } });
    expect(wrong.status).toBe(422);
    expectDeprecated(wrong);

    const deleted = await call(srv, 'DELETE', `/v1/channels/${ch.id}`, { key });
    expect(deleted.status).toBe(200);
    expectDeprecated(deleted);
    expect(deleted.body).toEqual({ data: { id: ch.id, deleted: true } });
    expect((await call(srv, 'GET', `/v1/channels/${ch.id}`, { key })).status).toBe(404);
    expect((await call(srv, 'DELETE', `/v1/channels/${ch.id}`, { key })).status).toBe(404);
    const still = await call(srv, 'GET', `/v1/sender-ids/${second}`, { key });
    expect(still.body.data).toMatchObject({ id: second, status: 'ACTIVE' });
  });

  it('testChannel follows the sandbox rules: -degraded DEGRADED, -down DOWN, -unreachable UNKNOWN, never an error', async () => {
    const expectations = [
      ['line-degraded', 'DEGRADED'],
      ['line-down', 'DOWN'],
      ['line-unreachable', 'UNKNOWN'],
    ] as const;
    for (const [name, status] of expectations) {
      const id = await sender({ type: 'TOLL_FREE', name }, { active: true });
      const ch = (await channel({ type: 'SMS', name, senderIdId: id })).body.data;
      expect(ch.health.status).toBe(status);
      const res = await call(srv, 'POST', `/v1/channels/${ch.id}/test`, { key });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(status);
      expect(res.body.message).not.toBeNull();
      if (status === 'UNKNOWN') expect(res.body.latencyMs).toBeNull();
      if (status === 'DEGRADED') expect(res.body.latencyMs).toBeGreaterThan(2000);
    }
  });
});

describe('RCS senders and their agent details', () => {
  it('agent details set through the sender operations are read through the channel view, and the other way round', async () => {
    // The recommended path: an RCS_AGENT with rcsAgent.
    const agent = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: {
        type: 'RCS_AGENT',
        name: 'Main agent',
        provider: 'PROVIDER_B',
        rcsAgent: { displayName: 'Acme Coffee', brandColor: '#6B3E26' },
      },
    });
    expect(agent.status).toBe(201);
    expect(agent.body.data.rcsAgent).toEqual({ displayName: 'Acme Coffee', description: null, brandColor: '#6B3E26', logoUrl: null });
    const rcsChannel = (await channel({ type: 'RCS', name: 'Main RCS channel', senderIdId: agent.body.data.id })).body.data;
    expect(rcsChannel.health.status).toBe('DOWN'); // a DRAFT agent cannot send

    // The deprecated path writes the same record: a new RCS_AGENT with rcsAgent.
    const created = await call(srv, 'POST', `/v1/channels/${rcsChannel.id}/rcs/senders`, {
      key,
      body: {
        senderName: 'acme-coffee',
        displayName: 'Acme Coffee',
        description: 'Order updates.',
        logoUrl: 'https://cdn.example.com/acme/logo-224.png',
      },
    });
    expect(created.status).toBe(201);
    expectDeprecated(created);
    const rcs = created.body.data;
    expect(rcs).toMatchObject({
      senderName: 'acme-coffee',
      channelId: rcsChannel.id,
      displayName: 'Acme Coffee',
      description: 'Order updates.',
      brandColor: null,
      phase: 'TESTING',
      testDeviceCount: 0,
    });
    expect(rcs.senderIdId).not.toBe(agent.body.data.id);
    const asSender = await call(srv, 'GET', `/v1/sender-ids/${rcs.senderIdId}`, { key });
    expect(asSender.body.data).toMatchObject({
      type: 'RCS_AGENT',
      status: 'DRAFT',
      provider: 'PROVIDER_B',
      rcsAgentPhase: 'TESTING',
      rcsAgent: {
        displayName: 'Acme Coffee',
        description: 'Order updates.',
        brandColor: null,
        logoUrl: 'https://cdn.example.com/acme/logo-224.png',
      },
    });
    const agents = await call(srv, 'GET', '/v1/sender-ids?type=RCS_AGENT', { key });
    expect(agents.body.data.map((s: { id: string }) => s.id)).toContain(rcs.senderIdId);

    // Changed through PATCH /v1/sender-ids/{id}: the channel view reads the same record.
    const patched = await call(srv, 'PATCH', `/v1/sender-ids/${rcs.senderIdId}`, {
      key,
      body: { rcsAgent: { brandColor: '#112233', description: null } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.rcsAgent).toEqual({
      displayName: 'Acme Coffee',
      description: null,
      brandColor: '#112233',
      logoUrl: 'https://cdn.example.com/acme/logo-224.png',
    });
    const read = await call(srv, 'GET', `/v1/channels/${rcsChannel.id}/rcs/senders/acme-coffee`, { key });
    expect(read.status).toBe(200);
    expectDeprecated(read);
    expect(read.body.data).toMatchObject({ senderName: 'acme-coffee', brandColor: '#112233', description: null, testDevices: [] });

    const listed = await call(srv, 'GET', `/v1/channels/${rcsChannel.id}/rcs/senders`, { key });
    expect(listed.status).toBe(200);
    expectDeprecated(listed);
    expect(listed.body.data.map((s: { senderName: string }) => s.senderName)).toEqual(['acme-coffee']);

    const dup = await call(srv, 'POST', `/v1/channels/${rcsChannel.id}/rcs/senders`, {
      key,
      body: { senderName: 'acme-coffee', displayName: 'Again' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    expectDeprecated(dup);
    const smsChannel = (await channel({ type: 'SMS', name: 'SMS', senderIdId: org.senderId })).body.data;
    const notRcs = await call(srv, 'POST', `/v1/channels/${smsChannel.id}/rcs/senders`, {
      key,
      body: { senderName: 'nope', displayName: 'Nope' },
    });
    expect(notRcs.status).toBe(422);
    const missing = await call(srv, 'GET', `/v1/channels/${rcsChannel.id}/rcs/senders/no-such`, { key });
    expect(missing.status).toBe(404);
    expectDeprecated(missing);

    // Deleting the channel removes the bindings, not the sender IDs.
    expect((await call(srv, 'DELETE', `/v1/channels/${rcsChannel.id}`, { key })).status).toBe(200);
    expect((await call(srv, 'GET', `/v1/channels/${rcsChannel.id}/rcs/senders`, { key })).status).toBe(404);
    expect((await call(srv, 'GET', `/v1/sender-ids/${rcs.senderIdId}`, { key })).body.data.rcsAgent.displayName).toBe('Acme Coffee');
  });

  it('rcsAgent is for RCS_AGENT only, and an agent without details needs displayName', async () => {
    const wrongType = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: { type: 'TOLL_FREE', name: 'T', rcsAgent: { displayName: 'X' } },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details[0].field).toBe('body.rcsAgent');
    const bare = await sender({ type: 'RCS_AGENT', name: 'Bare' });
    expect((await call(srv, 'GET', `/v1/sender-ids/${bare}`, { key })).body.data.rcsAgent).toBeNull();
    const noName = await call(srv, 'PATCH', `/v1/sender-ids/${bare}`, { key, body: { rcsAgent: { brandColor: '#000000' } } });
    expect(noName.status).toBe(400);
    expect(noName.body.details[0].field).toBe('body.rcsAgent.displayName');
    const set = await call(srv, 'PATCH', `/v1/sender-ids/${bare}`, { key, body: { rcsAgent: { displayName: 'Bare Agent' } } });
    expect(set.body.data.rcsAgent).toEqual({ displayName: 'Bare Agent', description: null, brandColor: null, logoUrl: null });
  });

  it('test devices: invited through the simulator, recorded, listed newest first; a repeat is 409', async () => {
    const agent = await sender({ type: 'RCS_AGENT', name: 'Devices agent' });
    const ch = (await channel({ type: 'RCS', name: 'Devices', senderIdId: agent })).body.data;
    expect(
      (await call(srv, 'POST', `/v1/channels/${ch.id}/rcs/senders`, { key, body: { senderName: 'tester', displayName: 'Tester' } })).status,
    ).toBe(201);
    const base = `/v1/channels/${ch.id}/rcs/senders/tester/test-devices`;
    const invited = await call(srv, 'POST', base, { key, body: { phone: '+14155550101' } });
    expect(invited.status).toBe(201);
    expectDeprecated(invited);
    expect(invited.body.data).toMatchObject({ phone: '+14155550101', status: 'INVITED', acceptedAt: null });
    const accepted = await call(srv, 'POST', base, { key, body: { phone: '+14155551111' } });
    expect(accepted.body.data).toMatchObject({ status: 'ACCEPTED' });
    expect(accepted.body.data.acceptedAt).not.toBeNull();
    const failed = await call(srv, 'POST', base, { key, body: { phone: '+14155550106' } });
    expect(failed.body.data.status).toBe('FAILED');
    const again = await call(srv, 'POST', base, { key, body: { phone: '+14155550101' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_EXISTS');
    expectDeprecated(again);
    const invalid = await call(srv, 'POST', base, { key, body: { phone: '+10000000000' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('INVALID_PHONE');
    expectDeprecated(invalid);

    const list = await call(srv, 'GET', base, { key });
    expect(list.status).toBe(200);
    expectDeprecated(list);
    expect(list.body.data.map((d: { phone: string }) => d.phone)).toEqual(['+14155550106', '+14155551111', '+14155550101']);
    const detail = await call(srv, 'GET', `/v1/channels/${ch.id}/rcs/senders/tester`, { key });
    expect(detail.body.data.testDeviceCount).toBe(3);
    expect(detail.body.data.testDevices).toHaveLength(3);
  });
});

describe('tenancy and scopes', () => {
  it("another organization's channels and senders answer 404", async () => {
    const agent = await sender({ type: 'RCS_AGENT', name: 'Tenancy agent' });
    const ch = (await channel({ type: 'RCS', name: 'Mine', senderIdId: agent })).body.data;
    expect(
      (await call(srv, 'POST', `/v1/channels/${ch.id}/rcs/senders`, { key, body: { senderName: 'mine', displayName: 'Mine' } })).status,
    ).toBe(201);
    const otherKey = other.apiKey.secret;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/channels/${ch.id}`],
      ['PUT', `/v1/channels/${ch.id}`, { name: 'Theirs', senderIdId: other.senderId }],
      ['DELETE', `/v1/channels/${ch.id}`],
      ['POST', `/v1/channels/${ch.id}/test`],
      ['GET', `/v1/channels/${ch.id}/rcs/senders`],
      ['POST', `/v1/channels/${ch.id}/rcs/senders`, { senderName: 'theirs', displayName: 'Theirs' }],
      ['GET', `/v1/channels/${ch.id}/rcs/senders/mine`],
      ['GET', `/v1/channels/${ch.id}/rcs/senders/mine/test-devices`],
      ['POST', `/v1/channels/${ch.id}/rcs/senders/mine/test-devices`, { phone: '+14155550102' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(srv, method, path, { key: otherKey, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expectDeprecated(res);
    }
    const theirs = await call(srv, 'POST', '/v1/channels', { key: otherKey, body: { type: 'RCS', name: 'Theirs', senderIdId: agent } });
    expect(theirs.status).toBe(404);
    expect((await call(srv, 'GET', '/v1/channels', { key: otherKey })).body.data).toEqual([]);
    expect((await call(srv, 'GET', `/v1/channels/${ch.id}`, { key })).status).toBe(200);
  });

  it('a key without sender-ids:create cannot create a channel (403)', async () => {
    const readOnly = await srv.newKey(org.organizationId, ['sender-ids:read']);
    const res = await call(srv, 'POST', '/v1/channels', {
      key: readOnly.secret,
      body: { type: 'SMS', name: 'X', senderIdId: org.senderId },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect((await call(srv, 'GET', '/v1/channels', { key: readOnly.secret })).status).toBe(200);
  });
});
