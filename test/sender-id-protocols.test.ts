// Sender IDs section, protocols and voice forwarding through HTTP: listSenderProtocols, enableSenderProtocol,
// updateSenderProtocol, disableSenderProtocol, getSenderIdVoiceForwarding, configureSenderIdVoiceForwarding,
// disableSenderIdVoiceForwarding; and how the send path honours a sender's protocols.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import type { RcsAgentPhase, SenderIdStatus, SenderIdType } from '../src/db/tables/enums.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  owner = await srv.newOrg('Protocols org');
  other = await srv.newOrg('Other org');
});
afterAll(() => srv.close());

/** A sender stored directly (the sender CRUD is another part of the section): a unique valid US number. */
async function insertSender(
  organizationId: string,
  type: SenderIdType,
  opts: { status?: SenderIdStatus; phone?: string | null } = {},
): Promise<{ id: string; phone: string | null }> {
  const phone = opts.phone === undefined ? `+1415${randomInt(2_000_000, 9_999_999)}` : opts.phone;
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: organizationId,
      name: `${type} sender`,
      type,
      status: opts.status ?? 'ACTIVE',
      provider: 'PROVIDER_A',
      phone_number: phone,
      is_sandbox: false,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, phone };
}

const key = () => owner.apiKey.secret;
const protocolsOf = (id: string) => `/v1/sender-ids/${id}/protocols`;

describe('protocols', () => {
  it('lists none for a new sender, enables SMS with the defaults, and refuses a second enable', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    expect((await call(srv, 'GET', protocolsOf(sender.id), { key: key() })).body).toEqual({
      data: [],
      pagination: { page: 1, limit: 1, total: 0, hasMore: false },
    });

    const res = await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      type: 'SMS',
      status: 'ACTIVE',
      statusReason: null,
      config: { smartEncoding: true, validityPeriodSeconds: 14400 },
    });
    expect(Object.keys(res.body.data.config).sort()).toEqual(['smartEncoding', 'validityPeriodSeconds']);

    const again = await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS', config: { smartEncoding: false } } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_EXISTS');
  });

  it('PATCH changes only the keys sent', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    const enabled = await call(srv, 'POST', protocolsOf(sender.id), {
      key: key(),
      body: { type: 'MMS', config: { mmsTranscoding: false, validityPeriodSeconds: 3600 } },
    });
    expect(enabled.body.data.config).toEqual({ mmsTranscoding: false, validityPeriodSeconds: 3600 });
    await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS', config: { smartEncoding: false } } });

    const patched = await call(srv, 'PATCH', `${protocolsOf(sender.id)}/SMS`, {
      key: key(),
      body: { config: { validityPeriodSeconds: 7200 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.config).toEqual({ smartEncoding: false, validityPeriodSeconds: 7200 });
    expect(patched.body.data.status).toBe('ACTIVE');

    const list = await call(srv, 'GET', protocolsOf(sender.id), { key: key() });
    expect(list.body.data.map((p: { type: string }) => p.type)).toEqual(['SMS', 'MMS']);
    expect(list.body.data[1].config).toEqual({ mmsTranscoding: false, validityPeriodSeconds: 3600 });
  });

  it('answers 400 naming a config key that does not apply, and 422 for a protocol the sender type cannot carry', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    const wrongKey = await call(srv, 'POST', protocolsOf(sender.id), {
      key: key(),
      body: { type: 'SMS', config: { fallbackToSms: true, validityPeriodSeconds: 600 } },
    });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.code).toBe('VALIDATION_ERROR');
    expect(wrongKey.body.details).toEqual([expect.objectContaining({ field: 'body.config.fallbackToSms' })]);

    await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS' } });
    const wrongPatch = await call(srv, 'PATCH', `${protocolsOf(sender.id)}/SMS`, {
      key: key(),
      body: { config: { mmsTranscoding: true } },
    });
    expect(wrongPatch.status).toBe(400);
    expect(wrongPatch.body.details[0].field).toBe('body.config.mmsTranscoding');

    const rcs = await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'RCS' } });
    expect(rcs.status).toBe(422);
    expect(rcs.body.code).toBe('UNPROCESSABLE');
    const alpha = await insertSender(owner.organizationId, 'ALPHANUMERIC', { phone: null });
    expect((await call(srv, 'POST', protocolsOf(alpha.id), { key: key(), body: { type: 'MMS' } })).status).toBe(422);
  });

  it('disables (config kept, idempotent), refuses PATCH while DISABLED, and enables again', async () => {
    const sender = await insertSender(owner.organizationId, 'TOLL_FREE');
    await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS', config: { validityPeriodSeconds: 900 } } });
    const off = await call(srv, 'DELETE', `${protocolsOf(sender.id)}/SMS`, { key: key() });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ type: 'SMS', status: 'DISABLED', config: { smartEncoding: true, validityPeriodSeconds: 900 } });
    const again = await call(srv, 'DELETE', `${protocolsOf(sender.id)}/SMS`, { key: key() });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(off.body.data);

    const patch = await call(srv, 'PATCH', `${protocolsOf(sender.id)}/SMS`, {
      key: key(),
      body: { config: { validityPeriodSeconds: 7200 } },
    });
    expect(patch.status).toBe(409);
    expect(patch.body.code).toBe('INVALID_STATE');
    expect((await call(srv, 'GET', protocolsOf(sender.id), { key: key() })).body.data[0].status).toBe('DISABLED');

    const on = await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS' } });
    expect(on.status).toBe(200);
    expect(on.body.data.status).toBe('ACTIVE');
  });

  it('answers 404 for a protocol never enabled and 409 for a DEACTIVATED sender', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    expect(
      (await call(srv, 'PATCH', `${protocolsOf(sender.id)}/MMS`, { key: key(), body: { config: { validityPeriodSeconds: 600 } } })).status,
    ).toBe(404);
    expect((await call(srv, 'DELETE', `${protocolsOf(sender.id)}/MMS`, { key: key() })).status).toBe(404);
    const gone = await insertSender(owner.organizationId, 'LONG_CODE', { status: 'DEACTIVATED' });
    const res = await call(srv, 'POST', protocolsOf(gone.id), { key: key(), body: { type: 'SMS' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('INVALID_STATE');
  });

  it('checks fallbackSenderIdId: a number sender of the organization', async () => {
    const agent = await insertSender(owner.organizationId, 'RCS_AGENT', { phone: null });
    const number = await insertSender(owner.organizationId, 'LONG_CODE');
    const otherAgent = await insertSender(owner.organizationId, 'RCS_AGENT', { phone: null });
    const foreign = await insertSender(other.organizationId, 'LONG_CODE');

    const notNumber = await call(srv, 'POST', protocolsOf(agent.id), {
      key: key(),
      body: { type: 'RCS', config: { fallbackSenderIdId: otherAgent.id } },
    });
    expect(notNumber.status).toBe(422);
    const unknown = await call(srv, 'POST', protocolsOf(agent.id), {
      key: key(),
      body: { type: 'RCS', config: { fallbackSenderIdId: foreign.id } },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details[0].field).toBe('body.config.fallbackSenderIdId');

    const ok = await call(srv, 'POST', protocolsOf(agent.id), {
      key: key(),
      body: { type: 'RCS', config: { fallbackSenderIdId: number.id } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.config).toEqual({ validityPeriodSeconds: 14400, fallbackToSms: true, fallbackSenderIdId: number.id });
    const cleared = await call(srv, 'PATCH', `${protocolsOf(agent.id)}/RCS`, {
      key: key(),
      body: { config: { fallbackSenderIdId: null } },
    });
    expect(cleared.body.data.config).toEqual({ validityPeriodSeconds: 14400, fallbackToSms: true, fallbackSenderIdId: null });
  });
});

describe('tenancy and scopes', () => {
  it("answers 404 on every operation for another organization's sender", async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: 'SMS' } });
    await call(srv, 'PUT', `/v1/sender-ids/${sender.id}/voice-forwarding`, { key: key(), body: { destination: '+16475550142' } });
    const theirs = other.apiKey.secret;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', protocolsOf(sender.id)],
      ['POST', protocolsOf(sender.id), { type: 'MMS' }],
      ['PATCH', `${protocolsOf(sender.id)}/SMS`, { config: { validityPeriodSeconds: 600 } }],
      ['DELETE', `${protocolsOf(sender.id)}/SMS`],
      ['GET', `/v1/sender-ids/${sender.id}/voice-forwarding`],
      ['PUT', `/v1/sender-ids/${sender.id}/voice-forwarding`, { destination: '+16475550143' }],
      ['DELETE', `/v1/sender-ids/${sender.id}/voice-forwarding`],
    ];
    for (const [method, path, body] of calls) {
      const res = await call(srv, method, path, { key: theirs, ...(body ? { body } : {}) });
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    // nothing changed
    const mine = await call(srv, 'GET', protocolsOf(sender.id), { key: key() });
    expect(mine.body.data).toHaveLength(1);
    expect(mine.body.data[0]).toMatchObject({ type: 'SMS', status: 'ACTIVE', config: { validityPeriodSeconds: 14400 } });
    expect((await call(srv, 'GET', `/v1/sender-ids/${sender.id}/voice-forwarding`, { key: key() })).body.data).toMatchObject({
      enabled: true,
      destination: '+16475550142',
    });
  });

  it('needs sender-ids:update to enable (403 with read only)', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    const reader = await srv.newKey(owner.organizationId, ['sender-ids:read']);
    expect((await call(srv, 'GET', protocolsOf(sender.id), { key: reader.secret })).status).toBe(200);
    const res = await call(srv, 'POST', protocolsOf(sender.id), { key: reader.secret, body: { type: 'SMS' } });
    expect(res.status).toBe(403);
  });
});

describe('the send path honours protocols', () => {
  async function contact(phone: string): Promise<string> {
    const res = await call(srv, 'POST', '/v1/contacts', { key: key(), body: { phone } });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  const send = (body: Record<string, unknown>) =>
    call(srv, 'POST', '/v1/messages/send', {
      key: key(),
      body: { messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hello' }, ...body },
    });
  const text = { type: 'text' as const, text: 'Hello' };

  /** A sender with only these protocols enabled (the simulator provisions them ACTIVE at once). */
  async function withProtocols(type: SenderIdType, protocols: string[], phase: RcsAgentPhase | null = null): Promise<string> {
    const sender = await insertSender(owner.organizationId, type, {
      phone: `+1500${randomInt(0, 10_000_000).toString().padStart(7, '0')}`,
    });
    if (phase) await srv.context.db.updateTable('sender_ids').set({ rcs_agent_phase: phase }).where('id', '=', sender.id).execute();
    for (const t of protocols)
      expect((await call(srv, 'POST', protocolsOf(sender.id), { key: key(), body: { type: t } })).status).toBe(200);
    return sender.id;
  }

  it('each sender type carries only its channels: the refusal says which the sender cannot carry', async () => {
    const c = await contact('+14155550108');
    // A launched RCS agent is RCS only: it never sends an SMS itself.
    const agent = await withProtocols('RCS_AGENT', ['RCS'], 'LAUNCHED');
    expect((await send({ contactId: c, senderId: agent })).body.data).toMatchObject({ plannedChannel: 'RCS', fallbackUsed: false });
    const agentSms = await send({ contactId: c, senderId: agent, channelType: 'SMS' });
    expect(agentSms.status).toBe(422);
    expect(agentSms.body).toMatchObject({
      code: 'NO_CHANNEL_AVAILABLE',
      message: expect.stringMatching(/RCS_AGENT sender cannot carry SMS/),
    });
    const noRcs = await contact('+14155550109');
    await srv.context.db.updateTable('contacts').set({ rcs_capable: false }).where('id', '=', noRcs).execute();
    const agentFallback = await send({ contactId: noRcs, senderId: agent });
    expect(agentFallback.status, agentFallback.text).toBe(422);
    expect(agentFallback.body.code).toBe('NO_CHANNEL_AVAILABLE');

    // A chat-app business sender is chat-app only: no session, no SMS instead (the session window, issue 33 item 10).
    const chat = await withProtocols('CHATAPP_BUSINESS', ['CHATAPP']);
    const chatSend = await send({ contactId: c, senderId: chat, channelType: 'CHATAPP' });
    expect(chatSend.status, chatSend.text).toBe(422);
    expect(chatSend.body.code).toBe('CHATAPP_SESSION_CLOSED');

    // A number with only SMS enabled never delivers by RCS: the plan is SMS at once, MMS is closed.
    const shortCode = await withProtocols('SHORT_CODE', ['SMS']);
    expect((await send({ contactId: c, senderId: shortCode })).body.data).toMatchObject({ plannedChannel: 'SMS', fallbackUsed: true });
    const mms = await send({
      contactId: c,
      senderId: shortCode,
      channelType: 'MMS',
      content: { type: 'media', mediaUrl: 'https://example.com/a.png' },
    });
    expect(mms.status).toBe(422);
    expect(mms.body.message).toMatch(/MMS protocol is not active/);
    expect((await send({ contactId: c, senderId: shortCode, fallbackToSms: false })).body.code).toBe('NO_CHANNEL_AVAILABLE');

    // The preview plans as the send does.
    const preview = await call(srv, 'POST', '/v1/messages/preview', {
      key: key(),
      body: { content: text, contactId: c, senderId: shortCode },
    });
    expect(preview.body.data.plannedChannel).toBe('SMS');
  });

  it('readiness its type requires: a 10DLC number without a registered program, an RCS agent in TESTING beyond its test devices, answer SENDER_NOT_READY naming the action', async () => {
    const c = await contact('+14155550110');
    const number = await withProtocols('LONG_CODE', ['SMS']);
    const unregistered = await send({ contactId: c, senderId: number, channelType: 'SMS' });
    expect(unregistered.status, unregistered.text).toBe(422);
    expect(unregistered.body).toMatchObject({ code: 'SENDER_NOT_READY', details: [{ field: 'body.senderId', code: 'REGISTER_BRAND' }] });

    const testing = await withProtocols('RCS_AGENT', ['RCS'], 'TESTING');
    const stranger = await send({ contactId: c, senderId: testing });
    expect(stranger.status).toBe(422);
    expect(stranger.body).toMatchObject({ code: 'SENDER_NOT_READY', details: [{ code: 'LAUNCH_RCS_AGENT' }] });
    const tester = await contact('+14155550111');
    await srv.context.db
      .insertInto('rcs_test_devices')
      .values({
        organization_id: owner.organizationId,
        sender_id: testing,
        phone: '+14155550111',
        status: 'ACCEPTED',
        invited_at: new Date(),
      })
      .execute();
    const toTester = await send({ contactId: tester, senderId: testing });
    expect(toTester.status, toTester.text).toBe(200);
    expect(toTester.body.data.plannedChannel).toBe('RCS');
  });
});

describe('voice forwarding', () => {
  const vf = (id: string) => `/v1/sender-ids/${id}/voice-forwarding`;

  it('is null until configured, syncs to the provider, and DELETE keeps the destination', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    expect((await call(srv, 'GET', vf(sender.id), { key: key() })).body).toEqual({ data: null });
    expect((await call(srv, 'DELETE', vf(sender.id), { key: key() })).body).toEqual({ data: null });

    const put = await call(srv, 'PUT', vf(sender.id), { key: key(), body: { destination: '+16475550142' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ senderIdId: sender.id, enabled: true, destination: '+16475550142' });
    expect(put.body.data.syncedAt).not.toBeNull();
    const atProvider = await srv.context.db
      .selectFrom('simulator_voice_forwardings')
      .selectAll()
      .where('sender_id', '=', sender.id)
      .executeTakeFirstOrThrow();
    expect(atProvider).toMatchObject({ enabled: true, destination: '+16475550142', number: sender.phone });

    const us = await call(srv, 'PUT', vf(sender.id), { key: key(), body: { destination: '+12125550143' } });
    expect(us.body.data).toMatchObject({ enabled: true, destination: '+12125550143', createdAt: put.body.data.createdAt });

    const off = await call(srv, 'DELETE', vf(sender.id), { key: key() });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ enabled: false, destination: '+12125550143' });
    expect((await call(srv, 'DELETE', vf(sender.id), { key: key() })).body).toEqual(off.body);
    expect((await call(srv, 'GET', vf(sender.id), { key: key() })).body).toEqual(off.body);
    expect(
      (
        await srv.context.db
          .selectFrom('simulator_voice_forwardings')
          .select('enabled')
          .where('sender_id', '=', sender.id)
          .executeTakeFirstOrThrow()
      ).enabled,
    ).toBe(false);
  });

  it('accepts US and CA lines only, never the sender’s own number', async () => {
    const sender = await insertSender(owner.organizationId, 'TOLL_FREE', { phone: '+18885550199' });
    const local = await insertSender(owner.organizationId, 'LONG_CODE');
    for (const destination of ['+18005550100', '+19005550100', '+12425550100', '+18765550100']) {
      const res = await call(srv, 'PUT', vf(sender.id), { key: key(), body: { destination } });
      expect([destination, res.status, res.body.details?.[0]?.field]).toEqual([destination, 400, 'body.destination']);
    }
    const own = await call(srv, 'PUT', vf(local.id), { key: key(), body: { destination: local.phone } });
    expect(own.status).toBe(400);
    expect(own.body.details[0].field).toBe('body.destination');
    expect((await call(srv, 'GET', vf(sender.id), { key: key() })).body.data).toBeNull();
  });

  it('answers 502 when the provider refuses (nothing changes), 422 for a sender that cannot take calls, 409 DEACTIVATED', async () => {
    const sender = await insertSender(owner.organizationId, 'LONG_CODE');
    await call(srv, 'PUT', vf(sender.id), { key: key(), body: { destination: '+16475550142' } });
    for (const destination of ['+16475550502', '+16475550504']) {
      const res = await call(srv, 'PUT', vf(sender.id), { key: key(), body: { destination } });
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('UPSTREAM_ERROR');
    }
    expect((await call(srv, 'GET', vf(sender.id), { key: key() })).body.data).toMatchObject({ enabled: true, destination: '+16475550142' });

    const agent = await insertSender(owner.organizationId, 'RCS_AGENT', { phone: null });
    expect((await call(srv, 'PUT', vf(agent.id), { key: key(), body: { destination: '+16475550142' } })).status).toBe(422);
    // The sandbox sender has a number, the simulator's: it takes no calls (issue 32), and nothing is stored.
    const sandbox = await insertSender(owner.organizationId, 'LONG_CODE', { phone: `+1500${randomInt(1_000_000, 9_999_999)}` });
    await srv.context.db.updateTable('sender_ids').set({ is_sandbox: true }).where('id', '=', sandbox.id).execute();
    const onSandbox = await call(srv, 'PUT', vf(sandbox.id), { key: key(), body: { destination: '+16475550142' } });
    expect([onSandbox.status, onSandbox.body.code, onSandbox.body.message]).toEqual([
      422,
      'UNPROCESSABLE',
      expect.stringContaining('sandbox'),
    ]);
    expect((await call(srv, 'GET', vf(sandbox.id), { key: key() })).body).toEqual({ data: null });
    const smsOnly = await insertSender(owner.organizationId, 'LONG_CODE');
    await srv.context.db
      .insertInto('sender_numbers')
      .values({
        organization_id: owner.organizationId,
        sender_id: smsOnly.id,
        number: smsOnly.phone!,
        inventory_type: 'Local',
        provider: 'PROVIDER_A',
        source: 'IMPORTED',
        status: 'ACTIVE',
        country_code: 'US',
        capabilities: ['SMS', 'MMS'],
      })
      .execute();
    expect((await call(srv, 'PUT', vf(smsOnly.id), { key: key(), body: { destination: '+16475550142' } })).status).toBe(422);
    const gone = await insertSender(owner.organizationId, 'LONG_CODE', { status: 'DEACTIVATED' });
    const res = await call(srv, 'PUT', vf(gone.id), { key: key(), body: { destination: '+16475550142' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('INVALID_STATE');
  });
});
