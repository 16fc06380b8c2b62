// Sender IDs core through HTTP: listSenderIds, createSenderId, getSenderId, updateSenderId, deleteSenderId and the
// lifecycle (activate, suspend, reactivate) — every from-status × action of the transition table, legal and
// illegal —, tenancy, scopes, the sandbox sender made by create-org, and the send path's sender check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SENDER_ACTIONS,
  SENDER_STATUSES,
  TRANSITIONS,
  type SenderAction,
  type SenderStatus,
} from '../src/domain/sender-ids/transitions.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer();
  [org, other] = await Promise.all([srv.newOrg('Senders org'), srv.newOrg('Other senders org')]);
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

const create = (body: Record<string, unknown>, k = key) => call(srv, 'POST', '/v1/sender-ids', { key: k, body });
const act = (id: string, action: SenderAction, k = key) =>
  action === 'delete'
    ? call(srv, 'DELETE', `/v1/sender-ids/${id}`, { key: k })
    : call(srv, 'POST', `/v1/sender-ids/${id}/${action}`, { key: k });

async function draft(body: Record<string, unknown> = { type: 'TOLL_FREE', name: 'Orders' }, k = key): Promise<string> {
  const res = await create(body, k);
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

/** Puts a sender in a state no API call of this section reaches yet (PENDING, REJECTED, platform suspensions). */
async function setState(
  id: string,
  s: { status: SenderStatus; sendReady?: boolean; suspendedBy?: string | null; statusReason?: string | null },
) {
  await srv.context.db
    .updateTable('sender_ids')
    .set({
      status: s.status,
      send_ready: s.sendReady ?? false,
      suspended_by: s.status === 'SUSPENDED' ? (s.suspendedBy ?? 'CUSTOMER') : null,
      suspended_at: s.status === 'SUSPENDED' ? new Date() : null,
      status_reason: s.statusReason ?? null,
    })
    .where('id', '=', id)
    .execute();
}

describe('the sandbox sender made by create-org', () => {
  it('is an ordinary ACTIVE, send-ready LONG_CODE on its +1500… number, described by get and list', async () => {
    const res = await call(srv, 'GET', `/v1/sender-ids/${org.senderId}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: org.senderId,
      type: 'LONG_CODE',
      status: 'ACTIVE',
      provider: 'PROVIDER_A',
      countryCode: 'US',
      sendReady: true,
      rcsAgentPhase: null,
      statusReason: null,
      suspendedBy: null,
      suspendedAt: null,
      deactivatedAt: null,
    });
    expect(res.body.data.address).toMatch(/^\+1500\d{7}$/);
    expect(res.body.data.activatedAt).not.toBeNull();
    const list = await call(srv, 'GET', '/v1/sender-ids?type=LONG_CODE&status=ACTIVE', { key });
    expect(list.body.data.find((s: { id: string }) => s.id === org.senderId)).toEqual(res.body.data);
  });
});

describe('createSenderId', () => {
  it('creates a DRAFT, not send-ready; an RCS agent starts in TESTING', async () => {
    const tf = await create({ type: 'TOLL_FREE', name: 'Order notifications' });
    expect(tf.status).toBe(201);
    expect(tf.body.data).toMatchObject({
      type: 'TOLL_FREE',
      status: 'DRAFT',
      sendReady: false,
      provider: null,
      address: null,
      countryCode: null,
      rcsAgentPhase: null,
      numberId: null,
      protocols: [],
      activatedAt: null,
    });
    const rcs = await create({ type: 'RCS_AGENT', name: 'Agent', provider: 'PROVIDER_B' });
    expect(rcs.body.data).toMatchObject({
      type: 'RCS_AGENT',
      status: 'DRAFT',
      provider: 'PROVIDER_B',
      rcsAgentPhase: 'TESTING',
      address: null,
    });
    const sc = await create({ type: 'SHORT_CODE', name: 'Short', address: '12345', countryCode: 'US' });
    expect(sc.body.data).toMatchObject({ address: '12345', countryCode: 'US' });
    const alpha = await create({ type: 'ALPHANUMERIC', name: 'Brand', address: 'Acme 2', countryCode: 'GB' });
    expect(alpha.body.data).toMatchObject({ type: 'ALPHANUMERIC', address: 'Acme 2', countryCode: 'GB' });
    const chat = await create({ type: 'CHATAPP_BUSINESS', name: 'Chat', address: '+14155550100' });
    expect(chat.body.data).toMatchObject({ type: 'CHATAPP_BUSINESS', address: '+14155550100', countryCode: null });
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['an address on a LONG_CODE', { type: 'LONG_CODE', name: 'x', address: '+14155550100' }, 'body.address'],
    ['an address on an RCS_AGENT', { type: 'RCS_AGENT', name: 'x', address: 'agent' }, 'body.address'],
    ['a SHORT_CODE without address', { type: 'SHORT_CODE', name: 'x' }, 'body.address'],
    ['a SHORT_CODE of 4 digits', { type: 'SHORT_CODE', name: 'x', address: '1234' }, 'body.address'],
    ['an ALPHANUMERIC of 12 characters', { type: 'ALPHANUMERIC', name: 'x', address: 'ABCDEFGHIJKL', countryCode: 'GB' }, 'body.address'],
    ['an ALPHANUMERIC without a letter', { type: 'ALPHANUMERIC', name: 'x', address: '12345', countryCode: 'GB' }, 'body.address'],
    ['an ALPHANUMERIC without country', { type: 'ALPHANUMERIC', name: 'x', address: 'Acme' }, 'body.countryCode'],
    ['a CHATAPP_BUSINESS not E.164', { type: 'CHATAPP_BUSINESS', name: 'x', address: '4155550100' }, 'body.address'],
    ['a country on an RCS_AGENT', { type: 'RCS_AGENT', name: 'x', countryCode: 'US' }, 'body.countryCode'],
  ];
  for (const [what, body, field] of bad) {
    it(`answers 400 for ${what}`, async () => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details).toEqual([expect.objectContaining({ field })]);
    });
  }

  it('answers 422 for an alphanumeric sender in a country that does not allow them', async () => {
    for (const countryCode of ['US', 'CA']) {
      const res = await create({ type: 'ALPHANUMERIC', name: 'x', address: 'Acme', countryCode });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('UNPROCESSABLE');
    }
  });

  it('needs sender-ids:create (403)', async () => {
    const reader = await srv.newKey(org.organizationId, ['sender-ids:read']);
    const res = await create({ type: 'TOLL_FREE', name: 'x' }, reader.secret);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});

describe('listSenderIds', () => {
  it('filters by type, status and provider (AND), newest first, paginated', async () => {
    const own = await srv.newOrg('List org');
    const k = own.apiKey.secret;
    const a = await draft({ type: 'SHORT_CODE', name: 'a', address: '55555', provider: 'PROVIDER_B' }, k);
    const b = await draft({ type: 'SHORT_CODE', name: 'b', address: '55556', provider: 'PROVIDER_A' }, k);
    const c = await draft({ type: 'TOLL_FREE', name: 'c', provider: 'PROVIDER_B' }, k);
    const all = await call(srv, 'GET', '/v1/sender-ids', { key: k });
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual([c, b, a, own.senderId]);
    expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 4, hasMore: false });
    const ids = async (qs: string) =>
      (await call(srv, 'GET', `/v1/sender-ids?${qs}`, { key: k })).body.data.map((s: { id: string }) => s.id);
    expect(await ids('type=SHORT_CODE')).toEqual([b, a]);
    expect(await ids('type=SHORT_CODE&provider=PROVIDER_B')).toEqual([a]);
    expect(await ids('status=DRAFT&provider=PROVIDER_B')).toEqual([c, a]);
    expect(await ids('status=ACTIVE')).toEqual([own.senderId]);
    const page2 = await call(srv, 'GET', '/v1/sender-ids?limit=3&page=2', { key: k });
    expect(page2.body.data.map((s: { id: string }) => s.id)).toEqual([own.senderId]);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 3, total: 4, hasMore: false });
    const badFilter = await call(srv, 'GET', '/v1/sender-ids?status=GONE', { key: k });
    expect(badFilter.status).toBe(400);
  });
});

describe('updateSenderId', () => {
  it('changes the name in any status but DEACTIVATED, registration fields only in DRAFT or REJECTED', async () => {
    const id = await draft({ type: 'SHORT_CODE', name: 'Short', address: '12345', countryCode: 'US' });
    const ok = await call(srv, 'PATCH', `/v1/sender-ids/${id}`, {
      key,
      body: { name: 'Renamed', address: '654321', provider: 'PROVIDER_B' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ name: 'Renamed', address: '654321', provider: 'PROVIDER_B', status: 'DRAFT' });

    await setState(id, { status: 'REJECTED', statusReason: 'Brand mismatch' });
    expect((await call(srv, 'PATCH', `/v1/sender-ids/${id}`, { key, body: { countryCode: 'CA' } })).body.data).toMatchObject({
      countryCode: 'CA',
      status: 'REJECTED',
      statusReason: 'Brand mismatch',
    });

    for (const status of ['PENDING', 'ACTIVE', 'SUSPENDED'] as const) {
      await setState(id, { status, sendReady: true });
      const name = await call(srv, 'PATCH', `/v1/sender-ids/${id}`, { key, body: { name: `In ${status}` } });
      expect(name.status).toBe(200);
      expect(name.body.data).toMatchObject({ name: `In ${status}`, status });
      const addr = await call(srv, 'PATCH', `/v1/sender-ids/${id}`, { key, body: { address: '11111' } });
      expect(addr.status).toBe(409);
      expect(addr.body.code).toBe('INVALID_STATE');
      expect(addr.body.message).toContain(status);
      expect(addr.body.details).toEqual([{ field: 'body.address', message: `the sender ID is ${status}`, code: 'invalid_state' }]);
    }
    await setState(id, { status: 'DEACTIVATED' });
    const gone = await call(srv, 'PATCH', `/v1/sender-ids/${id}`, { key, body: { name: 'Again' } });
    expect(gone.status).toBe(409);
    expect(gone.body.details[0].message).toContain('DEACTIVATED');
  });

  it('refuses fields the type does not take (409) and keeps the type rules (400, 422)', async () => {
    const tf = await draft();
    const addr = await call(srv, 'PATCH', `/v1/sender-ids/${tf}`, { key, body: { address: '+18005550100' } });
    expect(addr.status).toBe(409);
    expect(addr.body.code).toBe('INVALID_STATE');
    const alpha = await draft({ type: 'ALPHANUMERIC', name: 'a', address: 'Acme', countryCode: 'GB' });
    expect((await call(srv, 'PATCH', `/v1/sender-ids/${alpha}`, { key, body: { address: '!!' } })).status).toBe(400);
    expect((await call(srv, 'PATCH', `/v1/sender-ids/${alpha}`, { key, body: { countryCode: 'US' } })).status).toBe(422);
    expect((await call(srv, 'PATCH', `/v1/sender-ids/${alpha}`, { key, body: {} })).status).toBe(400);
    expect((await call(srv, 'PATCH', `/v1/sender-ids/${alpha}`, { key, body: { status: 'ACTIVE' } })).status).toBe(400);
  });
});

describe('the lifecycle: every from-status × action of the transition table', () => {
  /** Each status, and for the guarded moves every guard case. */
  type Variant = { label: string; status: SenderStatus; sendReady: boolean; suspendedBy: string | null };
  const variants: Variant[] = SENDER_STATUSES.flatMap((status): Variant[] => {
    if (status === 'PENDING')
      return [true, false].map((sendReady) => ({ label: `PENDING sendReady ${sendReady}`, status, sendReady, suspendedBy: null }));
    if (status === 'SUSPENDED') {
      return [
        { label: 'SUSPENDED by CUSTOMER, send-ready', status, sendReady: true, suspendedBy: 'CUSTOMER' },
        { label: 'SUSPENDED by CUSTOMER, not send-ready', status, sendReady: false, suspendedBy: 'CUSTOMER' },
        { label: 'SUSPENDED by PLATFORM', status, sendReady: true, suspendedBy: 'PLATFORM' },
        { label: 'SUSPENDED by CARRIER', status, sendReady: true, suspendedBy: 'CARRIER' },
      ];
    }
    return [{ label: status, status, sendReady: status === 'ACTIVE', suspendedBy: null }];
  });

  for (const v of variants) {
    for (const action of SENDER_ACTIONS) {
      const t = TRANSITIONS[v.status][action];
      const guardsHold = t.kind !== 'move' || t.guards.every((g) => (g === 'sendReady' ? v.sendReady : v.suspendedBy === 'CUSTOMER'));
      const expected = t.kind === 'refuse' || !guardsHold ? 'refused' : t.kind === 'unchanged' ? v.status : t.to;
      it(`${action} from ${v.label} → ${expected}`, async () => {
        const id = await draft();
        await setState(id, { status: v.status, sendReady: v.sendReady, suspendedBy: v.suspendedBy });
        const before = (await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data;
        const res = await act(id, action);
        const after = (await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data;
        if (expected === 'refused') {
          expect(res.status).toBe(409);
          expect(res.body.code).toBe('INVALID_STATE');
          expect(res.body.message).toContain(v.status);
          expect(res.body.details).toEqual([{ field: 'path.id', message: `the sender ID is ${v.status}`, code: 'invalid_state' }]);
          expect(after).toEqual(before);
          return;
        }
        expect(res.status).toBe(200);
        expect(res.body.data.status).toBe(expected);
        expect(res.body.data).toEqual(after);
        if (t.kind === 'unchanged') {
          expect(after).toEqual(before);
          return;
        }
        if (expected === 'ACTIVE') {
          expect(after).toMatchObject({ suspendedBy: null, suspendedAt: null, statusReason: null });
          expect(after.activatedAt).not.toBeNull();
        } else if (expected === 'SUSPENDED') {
          expect(after).toMatchObject({ suspendedBy: 'CUSTOMER' });
          expect(after.suspendedAt).not.toBeNull();
        } else if (expected === 'DEACTIVATED') {
          expect(after).toMatchObject({ sendReady: false, suspendedBy: null, statusReason: 'Deleted by API request.' });
          expect(after.deactivatedAt).not.toBeNull();
        }
      });
    }
  }

  it('names what is missing when a PENDING sender is not send-ready', async () => {
    const id = await draft();
    await setState(id, { status: 'PENDING', sendReady: false, statusReason: 'Upstream campaign not REGISTERED yet.' });
    const res = await act(id, 'activate');
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('Upstream campaign not REGISTERED yet.');
  });

  it('suspend, reactivate and delete through HTTP only; delete is idempotent and keeps the record readable', async () => {
    const own = await srv.newOrg('Lifecycle org');
    const k = own.apiKey.secret;
    const s = await act(own.senderId, 'suspend', k);
    expect(s.body.data).toMatchObject({ status: 'SUSPENDED', suspendedBy: 'CUSTOMER' });
    const r = await act(own.senderId, 'reactivate', k);
    expect(r.body.data).toMatchObject({ status: 'ACTIVE', suspendedBy: null, suspendedAt: null, sendReady: true });
    const d1 = await act(own.senderId, 'delete', k);
    const d2 = await act(own.senderId, 'delete', k);
    expect(d1.status).toBe(200);
    expect(d2.body).toEqual(d1.body);
    expect((await call(srv, 'GET', `/v1/sender-ids?status=DEACTIVATED`, { key: k })).body.data.map((x: { id: string }) => x.id)).toEqual([
      own.senderId,
    ]);
  });
});

describe('deleteSenderId', () => {
  it('disables the protocols and turns voice forwarding off; the record stays readable', async () => {
    const own = await srv.newOrg('Delete org');
    const k = own.apiKey.secret;
    const now = new Date();
    await srv.context.db
      .insertInto('sender_protocols')
      .values(
        (['SMS', 'MMS'] as const).map((type) => ({
          organization_id: own.organizationId,
          sender_id: own.senderId,
          type,
          status: 'ACTIVE',
          config: JSON.stringify({ validityPeriodSeconds: 14400 }),
          updated_at: now,
        })),
      )
      .execute();
    await srv.context.db
      .insertInto('sender_voice_forwardings')
      .values({
        organization_id: own.organizationId,
        sender_id: own.senderId,
        enabled: true,
        destination: '+14155550123',
        synced_at: now,
        updated_at: now,
      })
      .execute();
    const before = await call(srv, 'GET', `/v1/sender-ids/${own.senderId}`, { key: k });
    expect(before.body.data.protocols.map((p: { type: string; status: string }) => `${p.type}:${p.status}`)).toEqual([
      'SMS:ACTIVE',
      'MMS:ACTIVE',
    ]);
    const res = await act(own.senderId, 'delete', k);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'DEACTIVATED', sendReady: false });
    expect(res.body.data.protocols.map((p: { type: string; status: string }) => `${p.type}:${p.status}`)).toEqual([
      'SMS:DISABLED',
      'MMS:DISABLED',
    ]);
    const fwd = await srv.context.db
      .selectFrom('sender_voice_forwardings')
      .select('enabled')
      .where('sender_id', '=', own.senderId)
      .executeTakeFirstOrThrow();
    expect(fwd.enabled).toBe(false);
  });
});

describe('tenancy and scopes', () => {
  it("answers 404 for another organization's sender on every operation, and leaves it as it was", async () => {
    const theirs = await draft({ type: 'SHORT_CODE', name: 'Theirs', address: '77777' }, other.apiKey.secret);
    for (const id of [theirs, other.senderId]) {
      expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).status).toBe(404);
      expect((await call(srv, 'PATCH', `/v1/sender-ids/${id}`, { key, body: { name: 'Mine now' } })).status).toBe(404);
      for (const action of SENDER_ACTIONS) {
        const res = await act(id, action);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
    }
    const list = await call(srv, 'GET', '/v1/sender-ids?limit=100', { key });
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(theirs);
    const still = await call(srv, 'GET', `/v1/sender-ids/${other.senderId}`, { key: other.apiKey.secret });
    expect(still.body.data).toMatchObject({ status: 'ACTIVE', name: 'Sandbox sender' });
  });

  it('needs sender-ids:update for the lifecycle (403) and sender-ids:read for get', async () => {
    const reader = await srv.newKey(org.organizationId, ['sender-ids:read']);
    const res = await act(org.senderId, 'suspend', reader.secret);
    expect(res.status).toBe(403);
    expect((await call(srv, 'GET', `/v1/sender-ids/${org.senderId}`, { key: reader.secret })).status).toBe(200);
    const none = await srv.newKey(org.organizationId, ['contacts:read']);
    expect((await call(srv, 'GET', '/v1/sender-ids', { key: none.secret })).status).toBe(403);
  });
});

describe('the send path uses this sender record', () => {
  let own: Awaited<ReturnType<TestServer['newOrg']>>;
  let contactId: string;
  const messageCount = async () =>
    Number(
      (
        await srv.context.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', own.organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const send = (senderId?: string) =>
    call(srv, 'POST', '/v1/messages/send', {
      key: own.apiKey.secret,
      body: { contactId, ...(senderId ? { senderId } : {}), messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hello' } },
    });

  beforeAll(async () => {
    own = await srv.newOrg('Send org');
    const c = await call(srv, 'POST', '/v1/contacts', { key: own.apiKey.secret, body: { phone: '+14155550106' } });
    contactId = c.body.id;
  });

  it('sends from the sandbox sender as before', async () => {
    const res = await send(own.senderId);
    expect(res.status).toBe(200);
    expect(res.body.data.senderId).toBe(own.senderId);
  });

  it('refuses a suspended sender (409 INVALID_STATE naming its status) and queues nothing; sends again once reactivated', async () => {
    await act(own.senderId, 'suspend', own.apiKey.secret);
    const before = await messageCount();
    const named = await send(own.senderId);
    expect(named.status).toBe(409);
    expect(named.body.code).toBe('INVALID_STATE');
    expect(named.body.message).toContain('SUSPENDED');
    expect(named.body.details).toEqual([expect.objectContaining({ field: 'body.senderId' })]);
    const byDefault = await send();
    expect(byDefault.status).toBe(422);
    expect(byDefault.body.code).toBe('UNPROCESSABLE');
    expect(await messageCount()).toBe(before);
    await act(own.senderId, 'reactivate', own.apiKey.secret);
    expect((await send()).status).toBe(200);
  });

  it('refuses an ACTIVE sender that is not send-ready with 422 UNPROCESSABLE and queues nothing', async () => {
    await srv.context.db
      .updateTable('sender_ids')
      .set({ send_ready: false, status_reason: 'Registration lapsed.' })
      .where('id', '=', own.senderId)
      .execute();
    try {
      const before = await messageCount();
      const named = await send(own.senderId);
      expect(named.status).toBe(422);
      expect(named.body.code).toBe('UNPROCESSABLE');
      expect(named.body.message).toContain('not send-ready');
      expect(named.body.details).toEqual([expect.objectContaining({ field: 'body.senderId', code: 'not_send_ready' })]);
      const byDefault = await send();
      expect(byDefault.status).toBe(422);
      expect(await messageCount()).toBe(before);
    } finally {
      await srv.context.db
        .updateTable('sender_ids')
        .set({ send_ready: true, status_reason: null })
        .where('id', '=', own.senderId)
        .execute();
    }
  });

  it('refuses a DRAFT sender (409) and a deleted one (409)', async () => {
    const d = await draft({ type: 'TOLL_FREE', name: 'Draft' }, own.apiKey.secret);
    expect((await send(d)).body.code).toBe('INVALID_STATE');
    await act(d, 'delete', own.apiKey.secret);
    const res = await send(d);
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('DEACTIVATED');
  });
});
