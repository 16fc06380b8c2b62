// An RCS message not delivered by its deadline (fallbackReason RCS_EXPIRED): the RCS protocol's
// validityPeriodSeconds after acceptance, the carrier took it and never confirmed it (the carrier sandbox: a number
// ending in 0444). The deadline check is queued with the hand-over, due at the deadline; at it the service revokes
// the RCS message and sends the SMS from the agent's fallback number, once. A delivery before the deadline, and a
// message without fallback, are left alone. No workers: the test runs the dispatcher and the deadline check itself
// (as the workers would at the job's time), and hands the simulator's receipts to the service through its signed
// callback route.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dispatchBatch } from '../src/domain/messaging/dispatch.ts';
import { expireRcsMessages, RCS_EXPIRY_QUEUE, type RcsExpiryJob } from '../src/domain/messaging/rcs-expiry.ts';
import { CarrierSimulator, signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { deliverReceipts, sandboxNumberSender } from './support/senders.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;
let srv: TestServer;
let org: Org;
let number: { id: string; phone: string };

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('RCS deadline');
  number = await sandboxNumberSender(srv, org, 'SHORT_CODE', [{ type: 'SMS' }]);
});
afterAll(() => srv.close());

/** An RCS agent whose SMS fallback goes from `number`, its RCS validity period (the delivery deadline) one minute. */
const agent = (config: Record<string, unknown> = {}) =>
  sandboxNumberSender(srv, org, 'RCS_AGENT', [
    { type: 'RCS', config: { validityPeriodSeconds: 60, fallbackSenderIdId: number.id, ...config } },
  ]);

/** A contact whose number ends in `suffix` (the carrier sandbox decides by it), its RCS capability unknown. */
async function contact(suffix: string): Promise<{ id: string; phone: string }> {
  const digits = 7 - suffix.length;
  const phone = `+1415${randomInt(2 * 10 ** (digits - 1), 10 ** digits)}${suffix}`;
  const res = await call(srv, 'POST', '/v1/contacts', { key: org.apiKey.secret, body: { phone } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, phone };
}

async function sendRcs(senderId: string, contactId: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key: org.apiKey.secret,
    body: { contactId, senderId, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your table is ready' } },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data).toMatchObject({ plannedChannel: 'RCS', fallbackUsed: false });
  return res.body.data.messageId;
}

const getMessage = async (id: string) => {
  const res = await call(srv, 'GET', `/v1/messages/${id}`, { key: org.apiKey.secret });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

/** What the carrier sandbox's handset got from whom, in order, and whether each was revoked. */
const handset = (phone: string) =>
  srv.context.db
    .selectFrom('simulator_messages')
    .select(['from_address', 'channel', 'revoked'])
    .where('to_phone', '=', phone)
    .orderBy('accepted_at')
    .execute();

/** The deadline checks queued for a message. */
async function deadlineJobs(messageId: string) {
  const jobs = await srv.context.queue!.findJobs<RcsExpiryJob>(RCS_EXPIRY_QUEUE, { queued: true });
  return jobs.filter((j) => j.data.messageIds.includes(messageId));
}

/** The deadline check of a message, run as its worker runs it at the job's time. */
const runDeadline = (messageId: string) => expireRcsMessages(srv.context, [{ data: { messageIds: [messageId] } }]);

describe('RCS delivery deadline (RCS_EXPIRED)', () => {
  it('an RCS message never delivered is revoked at its deadline and delivered by one SMS from the fallback number', async () => {
    const rcs = await agent();
    const to = await contact('0444');
    const id = await sendRcs(rcs.id, to.id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    await deliverReceipts(srv); // the carrier reports nothing
    const sent = await getMessage(id);
    expect(sent).toMatchObject({ status: 'sent', requestedChannel: 'RCS', channel: null, senderId: rcs.id });

    // The check is due at the deadline: acceptance plus the RCS validity period (60 s), to the second.
    const [job, ...more] = await deadlineJobs(id);
    expect(more).toEqual([]);
    const deadline = new Date(sent.createdAt).getTime() + 60_000;
    expect(job!.startAfter.getTime()).toBeGreaterThanOrEqual(deadline);
    expect(job!.startAfter.getTime()).toBeLessThan(deadline + 1000);

    await runDeadline(id);
    expect(await getMessage(id)).toMatchObject({ status: 'queued', fallbackUsed: true, fallbackReason: 'RCS_EXPIRED' });
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    await deliverReceipts(srv);
    // A second run of the check (a retried job) changes nothing.
    await runDeadline(id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);

    expect(await getMessage(id)).toMatchObject({
      status: 'delivered',
      channel: 'SMS',
      senderId: number.id,
      fallbackUsed: true,
      fallbackReason: 'RCS_EXPIRED',
      error: null,
    });
    expect(await handset(to.phone)).toEqual([
      { from_address: rcs.phone, channel: 'RCS', revoked: true },
      { from_address: number.phone, channel: 'SMS', revoked: false },
    ]);
  });

  it('a delivery receipt before the deadline: nothing is revoked, no SMS', async () => {
    const rcs = await agent();
    const to = await contact('2');
    const id = await sendRcs(rcs.id, to.id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    expect(await deadlineJobs(id)).toHaveLength(1);
    await deliverReceipts(srv);
    expect((await getMessage(id)).status).toBe('delivered');

    await runDeadline(id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    expect(await getMessage(id)).toMatchObject({ status: 'delivered', channel: 'RCS', fallbackUsed: false, fallbackReason: null });
    expect(await handset(to.phone)).toEqual([{ from_address: rcs.phone, channel: 'RCS', revoked: false }]);
  });

  it('a late receipt of the revoked RCS message changes nothing: the SMS still goes, once, and says how it ended', async () => {
    const rcs = await agent();
    const to = await contact('0444');
    const id = await sendRcs(rcs.id, to.id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    const { providerMessageId } = await srv.context.db
      .selectFrom('messages')
      .select('provider_message_id as providerMessageId')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    await runDeadline(id);

    // The carrier reports the withdrawn RCS message delivered after all: it is not the message's outcome.
    const payload = JSON.stringify([
      { type: 'receipt', providerMessageId, dedupeKey: id, channel: 'RCS', status: 'delivered', at: new Date().toISOString() },
    ]);
    const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), payload) },
      body: payload,
    });
    expect(res.status).toBeLessThan(300);
    expect(await getMessage(id)).toMatchObject({ status: 'queued', fallbackReason: 'RCS_EXPIRED' });

    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    await deliverReceipts(srv);
    expect(await getMessage(id)).toMatchObject({ status: 'delivered', channel: 'SMS', fallbackReason: 'RCS_EXPIRED' });
    expect((await handset(to.phone)).map((m) => m.channel)).toEqual(['RCS', 'SMS']);
  });

  it('a revoke the carrier refuses (it delivered meanwhile): no fallback, the message waits for its receipt', async () => {
    const rcs = await agent();
    const to = await contact('0444');
    const id = await sendRcs(rcs.id, to.id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    const refuse = vi.spyOn(CarrierSimulator.prototype, 'revoke').mockResolvedValue(false);
    try {
      await runDeadline(id);
      expect(refuse).toHaveBeenCalledTimes(1);
    } finally {
      refuse.mockRestore();
    }
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    expect(await getMessage(id)).toMatchObject({ status: 'sent', fallbackUsed: false, fallbackReason: null });
    expect(await handset(to.phone)).toEqual([{ from_address: rcs.phone, channel: 'RCS', revoked: false }]);
  });

  it('without fallback there is no deadline: the message stays as the carrier left it, not revoked', async () => {
    const rcs = await agent({ fallbackToSms: false });
    const to = await contact('0444');
    const id = await sendRcs(rcs.id, to.id);
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    expect(await deadlineJobs(id)).toEqual([]);

    await runDeadline(id); // even if asked
    await dispatchBatch(srv.context, [{ data: { messageIds: [id] } }]);
    expect(await getMessage(id)).toMatchObject({ status: 'sent', channel: null, fallbackUsed: false, fallbackReason: null });
    expect(await handset(to.phone)).toEqual([{ from_address: rcs.phone, channel: 'RCS', revoked: false }]);
  });
});
