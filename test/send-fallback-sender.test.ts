// An RCS agent's SMS/MMS fallback goes from another sender (issue 32): its RCS protocol's `fallbackSenderIdId`, else
// its program's FALLBACK sender. Through HTTP: the message leaves as SMS from that sender, recorded as its sender and
// in the contact's conversation with it; a fallback sender that may not send is named in the refusal; the RCS
// protocol's `fallbackToSms: false` means no fallback unless the request asks for it. No workers: the test runs the
// dispatcher itself.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchBatch } from '../src/domain/messaging/dispatch.ts';
import type { SenderIdStatus, SenderIdType } from '../src/db/tables/enums.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { sandboxNumberSender } from './support/senders.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
const key = () => org.apiKey.secret;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Fallback senders');
});
afterAll(() => srv.close());

const sender = (type: SenderIdType, protocols: Array<{ type: string; config?: Record<string, unknown> }>, o = org) =>
  sandboxNumberSender(srv, o, type, protocols);

/** A contact whose handset is known to have RCS or not. */
async function contact(rcsCapable: boolean): Promise<string> {
  const res = await call(srv, 'POST', '/v1/contacts', { key: key(), body: { phone: `+1415${randomInt(2_000_000, 9_999_999)}` } });
  expect(res.status, res.text).toBe(201);
  await srv.context.db.updateTable('contacts').set({ rcs_capable: rcsCapable }).where('id', '=', res.body.id).execute();
  return res.body.id;
}

const send = (body: Record<string, unknown>) =>
  call(srv, 'POST', '/v1/messages/send', {
    key: key(),
    body: { messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped' }, ...body },
  });

/** An ACTIVE program the agent sends under as PRIMARY, with `fallback` attached as its FALLBACK sender. */
async function program(agentId: string, fallbackId: string): Promise<void> {
  const p = await srv.context.db
    .insertInto('programs')
    .values({ organization_id: org.organizationId, name: 'Agent program', status: 'ACTIVE', channels: ['RCS', 'SMS'], sender_id: agentId })
    .returning('id')
    .executeTakeFirstOrThrow();
  await srv.context.db
    .insertInto('program_senders')
    .values([
      { organization_id: org.organizationId, program_id: p.id, sender_id: agentId, role: 'PRIMARY', status: 'ACTIVE' },
      { organization_id: org.organizationId, program_id: p.id, sender_id: fallbackId, role: 'FALLBACK', status: 'ACTIVE' },
    ])
    .execute();
}

describe('fallback to another sender', () => {
  it("fallbackSenderIdId: a contact without RCS gets an SMS from the number, recorded as the message's sender; one with RCS gets the agent", async () => {
    const number = await sender('SHORT_CODE', [{ type: 'SMS' }]);
    const agent = await sender('RCS_AGENT', [{ type: 'RCS', config: { fallbackSenderIdId: number.id } }]);

    const noRcs = await contact(false);
    const sent = await send({ contactId: noRcs, senderId: agent.id });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toMatchObject({
      senderId: number.id,
      requestedChannel: 'RCS',
      plannedChannel: 'SMS',
      fallbackUsed: true,
      fallbackReason: 'RCS_NOT_SUPPORTED',
    });
    // In the contact's conversation with the number, where its replies arrive.
    const conversation = await call(srv, 'GET', `/v1/conversations/${sent.body.data.conversationId}`, { key: key() });
    expect(conversation.body.data.senderId).toBe(number.id);

    await dispatchBatch(srv.context, [{ data: { messageIds: [sent.body.data.messageId] } }]);
    const got = await srv.context.db
      .selectFrom('simulator_messages')
      .select(['from_address', 'channel'])
      .where('dedupe_key', '=', sent.body.data.messageId)
      .executeTakeFirstOrThrow();
    expect(got).toEqual({ from_address: number.phone, channel: 'SMS' });
    const shown = await call(srv, 'GET', `/v1/conversations/${sent.body.data.conversationId}/messages`, { key: key() });
    expect(shown.body.data[0]).toMatchObject({ senderId: number.id, status: 'sent', fallbackReason: 'RCS_NOT_SUPPORTED' });

    const withRcs = await send({ contactId: await contact(true), senderId: agent.id });
    expect(withRcs.body.data).toMatchObject({ senderId: agent.id, plannedChannel: 'RCS', fallbackUsed: false });
  });

  it("the program's FALLBACK sender carries it when the RCS protocol names none", async () => {
    const number = await sender('TOLL_FREE', [{ type: 'SMS' }]);
    const agent = await sender('RCS_AGENT', [{ type: 'RCS' }]);
    const noRcs = await contact(false);
    expect((await send({ contactId: noRcs, senderId: agent.id })).body.code).toBe('NO_CHANNEL_AVAILABLE');
    await program(agent.id, number.id);
    const sent = await send({ contactId: noRcs, senderId: agent.id });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toMatchObject({ senderId: number.id, plannedChannel: 'SMS', fallbackReason: 'RCS_NOT_SUPPORTED' });
  });

  it('a fallback sender that may not send is named in the refusal (SENDER_NOT_READY with its action)', async () => {
    // A 10DLC number without a registered brand and campaign may not send (sending-rule.ts).
    const unregistered = await sender('LONG_CODE', [{ type: 'SMS' }]);
    const agent = await sender('RCS_AGENT', [{ type: 'RCS', config: { fallbackSenderIdId: unregistered.id } }]);
    const refused = await send({ contactId: await contact(false), senderId: agent.id });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({
      code: 'SENDER_NOT_READY',
      message: expect.stringContaining(unregistered.id),
      details: [{ field: 'body.senderId', code: 'REGISTER_BRAND' }],
    });

    // A suspended one likewise; the agent still reaches a contact with RCS.
    const suspended = await sender('SHORT_CODE', [{ type: 'SMS' }]);
    const agent2 = await sender('RCS_AGENT', [{ type: 'RCS', config: { fallbackSenderIdId: suspended.id } }]);
    await srv.context.db
      .updateTable('sender_ids')
      .set({ status: 'SUSPENDED' as SenderIdStatus })
      .where('id', '=', suspended.id)
      .execute();
    const refused2 = await send({ contactId: await contact(false), senderId: agent2.id });
    expect(refused2.body).toMatchObject({ code: 'SENDER_NOT_READY', details: [{ code: 'ACTIVATE_SENDER' }] });
    expect(refused2.body.message).toContain(suspended.id);
    expect((await send({ contactId: await contact(true), senderId: agent2.id })).status).toBe(200);
  });

  it("the RCS protocol's fallbackToSms false: no fallback, unless the request asks for it", async () => {
    const number = await sender('SHORT_CODE', [{ type: 'SMS' }]);
    const agent = await sender('RCS_AGENT', [{ type: 'RCS', config: { fallbackSenderIdId: number.id, fallbackToSms: false } }]);
    const noRcs = await contact(false);
    const refused = await send({ contactId: noRcs, senderId: agent.id });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'NO_CHANNEL_AVAILABLE', message: expect.stringMatching(/fallbackToSms is false/) });
    const asked = await send({ contactId: noRcs, senderId: agent.id, fallbackToSms: true });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body.data).toMatchObject({ senderId: number.id, plannedChannel: 'SMS' });
  });
});

describe('one channel decider', () => {
  it("an RCS-only agent's blast estimate and preview plan a contact without RCS exactly as the send does", async () => {
    const agent = await sender('RCS_AGENT', [{ type: 'RCS' }]);
    const [withRcs, noRcs] = [await contact(true), await contact(false)];
    const created = await call(srv, 'POST', '/v1/blasts', {
      key: key(),
      body: {
        name: 'Agent blast',
        senderId: agent.id,
        messageType: 'TRANSACTIONAL',
        contentJson: { type: 'text', text: 'Doors open at 9' },
        contactIds: [withRcs, noRcs],
      },
    });
    expect(created.status, created.text).toBe(201);
    const estimate = async () => (await call(srv, 'GET', `/v1/blasts/${created.body.id}/estimate`, { key: key() })).body.data;
    const preview = async () =>
      (
        await call(srv, 'POST', '/v1/messages/preview', {
          key: key(),
          body: { contactId: noRcs, senderId: agent.id, content: { type: 'text', text: 'Doors open at 9' } },
        })
      ).body.data;

    // No fallback sender: the agent carries no SMS, so the send refuses, the estimate counts no channel, the preview plans none.
    expect((await send({ contactId: noRcs, senderId: agent.id })).body.code).toBe('NO_CHANNEL_AVAILABLE');
    expect((await estimate()).audience).toMatchObject({ eligible: 1, excluded: { noChannel: 1 } });
    expect((await preview()).plannedChannel).toBeNull();

    // With one: the send goes by SMS from it, the estimate counts it on SMS, the preview plans SMS.
    const number = await sender('SHORT_CODE', [{ type: 'SMS' }]);
    const patched = await call(srv, 'PATCH', `/v1/sender-ids/${agent.id}/protocols/RCS`, {
      key: key(),
      body: { config: { fallbackSenderIdId: number.id } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await send({ contactId: noRcs, senderId: agent.id })).body.data).toMatchObject({ senderId: number.id, plannedChannel: 'SMS' });
    const after = await estimate();
    expect(after.audience).toMatchObject({ eligible: 2, excluded: { noChannel: 0 } });
    expect(after.byChannel).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: 'RCS', recipients: 1 }),
        expect.objectContaining({ channel: 'SMS', recipients: 1 }),
      ]),
    );
    expect((await preview()).plannedChannel).toBe('SMS');
  });
});

describe('pass-through fees', () => {
  it('usage bills each SMS a carrier took with its sender class fee: total = messages × (price + fee)', async () => {
    const fees = await srv.newOrg('Pass-through fees');
    const k = fees.apiKey.secret;
    const tollFree = await sender('TOLL_FREE', [{ type: 'SMS' }], fees);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const c = await call(srv, 'POST', '/v1/contacts', { key: k, body: { phone: `+1415${randomInt(2_000_000, 9_999_999)}` } });
      const sent = await call(srv, 'POST', '/v1/messages/send', {
        key: k,
        body: {
          contactId: c.body.id,
          senderId: tollFree.id,
          channelType: 'SMS',
          messageType: 'TRANSACTIONAL',
          content: { type: 'text', text: 'Hi' },
        },
      });
      expect(sent.status, sent.text).toBe(200);
      ids.push(sent.body.data.messageId);
    }
    await dispatchBatch(srv.context, [{ data: { messageIds: ids } }]);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await call(srv, 'GET', `/v1/analytics/usage?startDate=${today}&endDate=${today}`, { key: k });
    expect(usage.status, usage.text).toBe(200);
    const line = (item: string) => usage.body.data.lines.find((l: { item: string }) => l.item === item);
    expect(line('text_segment')).toMatchObject({ quantity: 2, cost: { amount: '0.0078' } });
    // A toll-free number's carrier fee: 0.0025 USD per SMS, at cost.
    expect(line('pass_through_fee')).toMatchObject({ quantity: 2, unitPrice: null, cost: { amount: '0.0050' } });
    expect(usage.body.data.total).toEqual({ amount: '0.0128', currency: 'USD' }); // 2 × (0.0039 + 0.0025)
    expect(usage.body.data.timeline.at(-1).cost).toEqual({ amount: '0.0128', currency: 'USD' });
  });
});
