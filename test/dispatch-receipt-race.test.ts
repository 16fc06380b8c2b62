// A carrier may answer faster than the dispatcher records the send: the simulator queues its receipts while it
// accepts the batch, and workers hear of new jobs at once (LISTEN). An RCS failure applied before the dispatcher's
// record has already queued the SMS fallback; the record must not put the message back on RCS (it then went out on
// RCS again, failed again, and ended `failed` instead of delivered by SMS). Found by analytics.test.ts under load;
// here the two steps run in the losing order on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAccepted, requeueMessages } from '../src/db/queries/messages/dispatch.ts';
import { applyReceipts } from '../src/domain/messaging/receipts.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

/** A text to a new RCS-capable contact through the API; answers the message id. */
async function sendTo(org: Awaited<ReturnType<TestServer['newOrg']>>, phone: string): Promise<string> {
  const contact = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      attributes: '{}',
      rcs_capable: true,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const sent = await call(srv, 'POST', '/v1/messages/send', {
    key: org.apiKey.secret,
    body: { contactId: contact.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order has shipped.' } },
  });
  expect(sent.status, sent.text).toBe(200);
  return sent.body.data.messageId;
}

describe('a receipt that overtakes the dispatcher', () => {
  it('an RCS failure applied before the send is recorded keeps its SMS fallback: the record changes neither plan nor price', async () => {
    const org = await srv.newOrg('Receipt race');
    const id = await sendTo(org, '+14155550333');
    // Claimed by a dispatcher and handed to the carrier (RCS): `sending`, its first attempt.
    await srv.context.db.updateTable('messages').set({ status: 'sending', attempts: 1, dispatch_at: null }).where('id', '=', id).execute();

    await applyReceipts(srv.context, 'PROVIDER_A', [
      {
        type: 'receipt',
        providerMessageId: 'SIMrace1',
        dedupeKey: id,
        status: 'failed',
        channel: 'RCS',
        errorCode: null,
        errorMessage: null,
        at: new Date().toISOString(),
      },
    ]);
    const fellBack = await srv.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(fellBack).toMatchObject({
      status: 'queued',
      planned_channel: 'SMS',
      fallback_used: true,
      fallback_reason: 'RCS_DELIVERY_FAILED',
      cost_units: null,
    });

    await recordAccepted(srv.context.db, 'PROVIDER_A', [
      {
        organizationId: org.organizationId,
        id,
        providerMessageId: 'SIMrace1',
        channel: 'RCS',
        segments: 1,
        encoding: 'GSM7',
        costUnits: 39,
      },
    ]);
    const after = await srv.context.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'queued', planned_channel: 'SMS', fallback_used: true, cost_units: null });
    expect(after.dispatch_at).not.toBeNull(); // still due: the fallback goes out next
  });
});

describe('a batch of receipts', () => {
  it('applies each receipt to the message as the earlier ones left it, in one transaction; unknown and malformed references change nothing', async () => {
    const org = await srv.newOrg('Receipt batch');
    const ids: string[] = [];
    for (const phone of ['+14155550401', '+14155550402']) ids.push(await sendTo(org, phone));
    await srv.context.db
      .updateTable('messages')
      .set({ status: 'sent', attempts: 1, dispatch_at: null, sent_at: new Date(Date.now() - 3000), provider: 'PROVIDER_A' })
      .where('id', 'in', ids)
      .execute();
    const t1 = new Date(Date.now() - 2000).toISOString();
    const t2 = new Date(Date.now() - 1000).toISOString();
    const receipt = (dedupeKey: string, status: 'delivered' | 'read' | 'undeliverable', at: string) =>
      ({
        type: 'receipt',
        providerMessageId: `SIM${dedupeKey.slice(-12)}`,
        dedupeKey,
        status,
        channel: 'RCS',
        errorCode: null,
        errorMessage: null,
        at,
      }) as const;
    await applyReceipts(srv.context, 'PROVIDER_A', [
      receipt(ids[0]!, 'delivered', t1),
      receipt('not-a-uuid', 'delivered', t1),
      receipt('00000000-0000-7000-8000-000000000000', 'delivered', t1),
      receipt(ids[1]!, 'undeliverable', t1),
      receipt(ids[0]!, 'read', t2),
      receipt(ids[1]!, 'delivered', t2), // after a final status: ignored
    ]);
    const rows = await srv.context.db.selectFrom('messages').selectAll().where('id', 'in', ids).orderBy('id').execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({
      status: 'read',
      channel: 'RCS',
      cost_units: 39,
      provider_message_id: `SIM${ids[0]!.slice(-12)}`,
    });
    expect(byId.get(ids[0]!)!.delivered_at!.toISOString()).toBe(t1);
    expect(byId.get(ids[0]!)!.read_at!.toISOString()).toBe(t2);
    expect(byId.get(ids[1]!)).toMatchObject({ status: 'undeliverable', error_code: 'UNREACHABLE', cost_units: 39, delivered_at: null });
    expect(byId.get(ids[1]!)!.failed_at!.toISOString()).toBe(t1);
  });
});

describe('a carrier clock behind ours', () => {
  it('never dates a delivery before the send, nor a read before the delivery (GET …/messages reads in order)', async () => {
    const org = await srv.newOrg('Receipt clocks');
    const id = await sendTo(org, '+14155550431');
    const sentAt = new Date();
    await srv.context.db
      .updateTable('messages')
      .set({ status: 'sent', attempts: 1, dispatch_at: null, sent_at: sentAt, provider: 'PROVIDER_A' })
      .where('id', '=', id)
      .execute();
    const early = (ms: number) => new Date(sentAt.getTime() - ms).toISOString();
    const receipt = (status: 'delivered' | 'read', at: string) =>
      ({
        type: 'receipt',
        providerMessageId: `SIM${id.slice(-12)}`,
        dedupeKey: id,
        status,
        channel: 'RCS',
        errorCode: null,
        errorMessage: null,
        at,
      }) as const;
    await applyReceipts(srv.context, 'PROVIDER_A', [receipt('delivered', early(12)), receipt('read', early(20))]);
    const message = await srv.context.db.selectFrom('messages').select(['conversation_id']).where('id', '=', id).executeTakeFirstOrThrow();
    const listed = await call(srv, 'GET', `/v1/conversations/${message.conversation_id}/messages`, { key: org.apiKey.secret });
    const m = listed.body.data.find((x: { id: string }) => x.id === id);
    expect(m.status).toBe('read');
    expect(Date.parse(m.sentAt)).toBe(sentAt.getTime());
    expect(Date.parse(m.deliveredAt)).toBeGreaterThanOrEqual(Date.parse(m.sentAt));
    expect(Date.parse(m.readAt)).toBeGreaterThanOrEqual(Date.parse(m.deliveredAt));
    expect(Date.parse(m.sentAt)).toBeGreaterThanOrEqual(Date.parse(m.createdAt));
  });
});

describe("the dispatcher's statements name each message's organization", () => {
  it("another organization's id with a message's id changes nothing (record, requeue)", async () => {
    const org = await srv.newOrg('Dispatch tenancy');
    const other = await srv.newOrg('Dispatch tenancy, other');
    const id = await sendTo(org, '+14155550334');
    await srv.context.db.updateTable('messages').set({ status: 'sending', attempts: 1, dispatch_at: null }).where('id', '=', id).execute();
    const row = () =>
      srv.context.db
        .selectFrom('messages')
        .select(['status', 'attempts', 'provider_message_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    expect(
      await recordAccepted(srv.context.db, 'PROVIDER_A', [
        {
          organizationId: other.organizationId,
          id,
          providerMessageId: 'SIMx',
          channel: 'RCS',
          segments: 1,
          encoding: 'GSM7',
          costUnits: 39,
        },
      ]),
    ).toEqual([]);
    await requeueMessages(srv.context.db, [{ organizationId: other.organizationId, id }], false, 0);
    expect(await row()).toEqual({ status: 'sending', attempts: 1, provider_message_id: null });

    // The message's own organization: both apply.
    await requeueMessages(srv.context.db, [{ organizationId: org.organizationId, id }], false, 0);
    expect(await row()).toEqual({ status: 'queued', attempts: 0, provider_message_id: null });
  });
});
