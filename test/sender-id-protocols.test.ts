// Sender IDs section, protocols and voice forwarding through HTTP: listSenderProtocols, enableSenderProtocol,
// updateSenderProtocol, disableSenderProtocol, getSenderIdVoiceForwarding, configureSenderIdVoiceForwarding,
// disableSenderIdVoiceForwarding; and how the send path honours a sender's protocols.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import type { SenderIdStatus, SenderIdType } from '../src/db/tables/enums.ts';

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

  it('the preview plans as the send does: around a closed RCS protocol to SMS, otherwise none', async () => {
    const c = await contact('+14155550108');
    const agent = await insertSender(owner.organizationId, 'RCS_AGENT', {
      phone: `+1500${randomInt(0, 10_000_000).toString().padStart(7, '0')}`,
    });
    for (const type of ['RCS', 'SMS']) await call(srv, 'POST', protocolsOf(agent.id), { key: key(), body: { type } });
    const preview = (body: Record<string, unknown>) =>
      call(srv, 'POST', '/v1/messages/preview', { key: key(), body: { content: text, contactId: c, senderId: agent.id, ...body } });
    expect((await preview({})).body.data.plannedChannel).toBe('RCS');
    await call(srv, 'DELETE', `${protocolsOf(agent.id)}/RCS`, { key: key() });
    // Still send-ready (kept by other means, as below): the plan goes around RCS.
    await srv.context.db.updateTable('sender_ids').set({ send_ready: true }).where('id', '=', agent.id).execute();
    const around = await preview({});
    expect(around.status, around.text).toBe(200);
    expect(around.body.data.plannedChannel).toBe('SMS');
    expect((await send({ contactId: c, senderId: agent.id })).body.data).toMatchObject({ plannedChannel: 'SMS', fallbackUsed: true });
    const none = await preview({ fallbackToSms: false });
    expect(none.body.data.plannedChannel).toBeNull();
    expect(none.body.data.warnings.map((w: { code: string }) => w.code)).toContain('NO_CHANNEL_AVAILABLE');
    expect((await send({ contactId: c, senderId: agent.id, fallbackToSms: false })).body.code).toBe('NO_CHANNEL_AVAILABLE');
  });

  it('a sender without protocol rows sends as before; a send-ready sender with RCS disabled falls back or answers 422', async () => {
    const rcsContact = await contact('+14155550101');
    const asBefore = await send({ contactId: rcsContact });
    expect(asBefore.status).toBe(200);
    expect(asBefore.body.data).toMatchObject({ plannedChannel: 'RCS', fallbackUsed: false });

    const agent = await insertSender(owner.organizationId, 'RCS_AGENT', {
      phone: `+1500${randomInt(0, 10_000_000).toString().padStart(7, '0')}`,
    });
    await call(srv, 'POST', protocolsOf(agent.id), { key: key(), body: { type: 'RCS' } });
    const enabled = await send({ contactId: rcsContact, senderId: agent.id });
    expect(enabled.body.data).toMatchObject({ plannedChannel: 'RCS', fallbackUsed: false });

    // Disabling the only ACTIVE protocol makes the sender not send-ready (the document): refused before any plan.
    await call(srv, 'DELETE', `${protocolsOf(agent.id)}/RCS`, { key: key() });
    const notReady = await send({ contactId: rcsContact, senderId: agent.id });
    expect(notReady.status).toBe(422);
    const stored = await srv.context.db.selectFrom('sender_ids').select('send_ready').where('id', '=', agent.id).executeTakeFirstOrThrow();
    expect(stored.send_ready).toBe(false);

    // A sender still send-ready with RCS disabled (readiness kept by other means): the plan goes around RCS.
    await srv.context.db.updateTable('sender_ids').set({ send_ready: true }).where('id', '=', agent.id).execute();
    const fallback = await send({ contactId: rcsContact, senderId: agent.id });
    expect(fallback.status).toBe(200);
    expect(fallback.body.data).toMatchObject({ plannedChannel: 'SMS', fallbackUsed: true, fallbackReason: 'RCS_NOT_SUPPORTED' });
    const refused = await send({ contactId: rcsContact, senderId: agent.id, fallbackToSms: false });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('NO_CHANNEL_AVAILABLE');
    expect(refused.body.message).toMatch(/RCS protocol is not active/);
  });

  it('a disabled SMS protocol refuses an SMS send and closes the SMS fallback', async () => {
    const smsContact = await contact('+14155550106');
    const number = await insertSender(owner.organizationId, 'LONG_CODE');
    await call(srv, 'POST', protocolsOf(number.id), { key: key(), body: { type: 'SMS' } });
    await call(srv, 'POST', protocolsOf(number.id), { key: key(), body: { type: 'MMS' } });
    expect((await send({ contactId: smsContact, senderId: number.id, channelType: 'SMS' })).status).toBe(200);
    await call(srv, 'DELETE', `${protocolsOf(number.id)}/SMS`, { key: key() });
    const sms = await send({ contactId: smsContact, senderId: number.id, channelType: 'SMS' });
    expect(sms.status).toBe(422);
    expect(sms.body.code).toBe('NO_CHANNEL_AVAILABLE');
    // RCS has no row on this sender: tried as before, but an SMS fallback is no longer possible
    const rcs = await send({ contactId: smsContact, senderId: number.id });
    expect(rcs.status).toBe(200);
    const stored = await srv.context.db
      .selectFrom('messages')
      .select(['planned_channel', 'fallback_allowed'])
      .where('id', '=', rcs.body.data.messageId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ planned_channel: 'RCS', fallback_allowed: false });
    // contact known not RCS-capable: no channel left for text
    const noRcs = await contact('+14155550107');
    await srv.context.db.updateTable('contacts').set({ rcs_capable: false }).where('id', '=', noRcs).execute();
    const none = await send({ contactId: noRcs, senderId: number.id });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('NO_CHANNEL_AVAILABLE');
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
