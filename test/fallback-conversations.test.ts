// What a message's move to its fallback sender does to conversations (issue 33, loose ends of issue 32's fallback
// senders). An RCS agent's message to a handset of unknown capability is accepted as RCS in the contact's
// conversation with the agent; when dispatch finds the handset without RCS the message moves to the agent's fallback
// number and into the contact's conversation with it. The conversation the contact sees is the number's: the agent's
// conversation the message opened, empty now, is gone (one with earlier messages stays). A bot blast's session
// follows its message: the contact's SMS reply to the number continues the bot's flow. Through HTTP, the pg-boss
// workers and the carrier sandbox (its capability lookup: a number ending in 5–9 has no RCS).
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import type { SenderIdType } from '../src/db/tables/enums.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { sandboxNumberSender } from './support/senders.ts';
import { until } from './support/wait.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;
let srv: TestServer;
let seq = 0;

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  srv = await startTestServer({ workers: true });
});
afterAll(() => srv.close());

const sender = (org: Org, type: SenderIdType, protocols: Array<{ type: string; config?: Record<string, unknown> }>) =>
  sandboxNumberSender(srv, org, type, protocols);

/** A number with SMS, and an RCS agent whose fallback it carries. */
async function agentWithNumber(org: Org) {
  const number = await sender(org, 'SHORT_CODE', [{ type: 'SMS' }]);
  const agent = await sender(org, 'RCS_AGENT', [{ type: 'RCS', config: { fallbackSenderIdId: number.id } }]);
  return { number, agent };
}

/** A contact of unknown RCS capability with marketing consent, never in quiet hours; its number ends in 7 (no RCS in the sandbox). */
async function contact(org: Org): Promise<{ id: string; phone: string }> {
  const phone = `+1415${randomInt(200_000, 999_999)}7`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      name: `Ann ${++seq}`,
      attributes: JSON.stringify({}),
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: '23:59',
      quiet_hours_end: '00:00',
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

const get = async (org: Org, path: string) => call(srv, 'GET', path, { key: org.apiKey.secret });

/** Waits until the message has left the agent for the number (its sender is the number). */
async function movedToNumber(org: Org, messageId: string, numberId: string) {
  return (
    await until(
      () => get(org, `/v1/messages/${messageId}`),
      (r) => r.body.data?.senderId === numberId && r.body.data?.status !== 'queued',
      'the message moved to the fallback number',
    )
  ).body.data;
}

describe('the conversation a moved message leaves', () => {
  it('is deleted when the message was its only one: the contact has one conversation, the number’s', async () => {
    const org = await srv.newOrg('Moved message conversations');
    const { number, agent } = await agentWithNumber(org);
    const to = await contact(org);
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key: org.apiKey.secret,
      body: { contactId: to.id, senderId: agent.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Your order shipped' } },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toMatchObject({ senderId: agent.id, plannedChannel: 'RCS' });
    const opened = sent.body.data.conversationId as string;

    const message = await movedToNumber(org, sent.body.data.messageId, number.id);
    expect(message.conversationId).not.toBe(opened);
    expect((await get(org, `/v1/conversations/${opened}`)).status).toBe(404);
    const listed = await get(org, `/v1/conversations?contactId=${to.id}`);
    expect(listed.body.data.map((c: { id: string; senderId: string }) => [c.id, c.senderId])).toEqual([
      [message.conversationId, number.id],
    ]);
  });

  it('stays when it holds other messages', async () => {
    const org = await srv.newOrg('Moved message, conversation kept');
    const { number, agent } = await agentWithNumber(org);
    const to = await contact(org);
    // The contact wrote to the agent before: the conversation is theirs, whatever goes by SMS later.
    await srv.providers.simulator.injectInbound({ from: to.phone, to: (await agentAddress(agent.id))!, text: 'Hi', channel: 'RCS' });
    const before = await until(
      () => get(org, `/v1/conversations?contactId=${to.id}`),
      (r) => r.body.data?.length === 1,
      'the inbound message stored',
    );
    const agentConversation = before.body.data[0].id as string;
    const sent = await call(srv, 'POST', '/v1/messages/send', {
      key: org.apiKey.secret,
      body: { contactId: to.id, senderId: agent.id, messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Thanks for writing' } },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data.conversationId).toBe(agentConversation);
    await movedToNumber(org, sent.body.data.messageId, number.id);
    expect((await get(org, `/v1/conversations/${agentConversation}`)).status).toBe(200);
  });
});

/** The address the carrier sandbox routes an RCS agent's inbound messages by. */
async function agentAddress(agentId: string): Promise<string | null> {
  const row = await srv.context.db.selectFrom('sender_ids').select(['phone_number']).where('id', '=', agentId).executeTakeFirstOrThrow();
  return row.phone_number;
}

describe('a bot blast whose message falls back to the agent’s number', () => {
  it('the contact’s SMS reply to the number continues the bot’s flow', async () => {
    const org = await srv.newOrg('Bot blast fallback');
    const key = org.apiKey.secret;
    const { number, agent } = await agentWithNumber(org);
    for (const value of ['book_demo', 'talk_to_sales'])
      expect((await call(srv, 'POST', '/v1/intents', { key, body: { value } })).status).toBe(201);
    expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'interest', type: 'text' } })).status).toBe(201);
    const flow = {
      nodes: [
        { id: 'start', type: 'START' },
        {
          id: 'welcome',
          type: 'QUESTION',
          content: { type: 'text', text: 'Spring sale! Book a demo or talk to sales?' },
          buttons: [
            { type: 'reply', text: 'Book a demo', intent: 'book_demo' },
            { type: 'reply', text: 'Talk to sales', intent: 'talk_to_sales' },
          ],
          capture: { variable: 'interest', from: 'intent' },
        },
        { id: 'demo', type: 'END', content: { type: 'text', text: 'Great! Pick a slot: https://example.com/demo' } },
        { id: 'sales', type: 'HANDOFF', content: { type: 'text', text: 'Connecting you with sales.' } },
      ],
      edges: [
        { id: 'e1', source: 'start', target: 'welcome' },
        { id: 'e2', source: 'welcome', target: 'demo', intent: 'book_demo' },
        { id: 'e3', source: 'welcome', target: 'sales', intent: 'talk_to_sales' },
      ],
    };
    const bot = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'Spring bot', channel: 'RCS', draftFlow: flow } });
    expect(bot.status, bot.text).toBe(201);
    const published = await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key });
    expect(published.status, published.text).toBe(200);
    const to = await contact(org);
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Spring bot blast', senderId: agent.id, botId: bot.body.id, contactIds: [to.id] },
    });
    expect(blast.status, blast.text).toBe(201);
    const launched = await call(srv, 'POST', `/v1/blasts/${blast.body.id}/launch`, { key });
    expect(launched.status, launched.text).toBe(200);
    const accepted = await until(
      () =>
        srv.context.db
          .selectFrom('blast_recipients')
          .select(['message_id', 'status'])
          .where('blast_id', '=', blast.body.id)
          .executeTakeFirst(),
      (r) => r?.status === 'accepted',
      'the recipient accepted',
    );
    const message = await movedToNumber(org, accepted!.message_id!, number.id);

    await srv.providers.simulator.injectInbound({ from: to.phone, to: number.phone, text: '1', channel: 'SMS' });
    const reply = await until(
      () => get(org, `/v1/conversations/${message.conversationId}/messages`),
      (r) =>
        (r.body.data ?? []).some(
          (m: { direction: string; content: { text?: string } }) => m.direction === 'outbound' && m.content.text?.startsWith('Great!'),
        ),
      'the bot’s next message in the number’s conversation',
    );
    expect(reply.status).toBe(200);
    const conversation = await get(org, `/v1/conversations/${message.conversationId}`);
    expect(conversation.body.data).toMatchObject({ senderId: number.id, botId: bot.body.id });
  });
});
