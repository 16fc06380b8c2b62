// Event triggers as an integrator uses them, through HTTP only: a trigger configured on a bot with the documented
// operations, an event that starts it (the message in the conversation and in the message report), conditions
// that do not match, the cool-down, an opted-out contact skipped with its reason, a batch with one matching and
// one failing item, and tenancy (another organization's events never match these triggers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
let otherKey: string;
let seq = 0;
// RCS-capable sandbox handsets (last digit 0–4).
const phone = () => `+1415557${String(1000 + ++seq * 10).padStart(4, '0')}`;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  key = (await srv.newOrg('Trigger org')).apiKey.secret;
  otherKey = (await srv.newOrg('Other trigger org')).apiKey.secret;
  const bot = await call(srv, 'POST', '/v1/bots', {
    key,
    body: {
      name: 'Shipping notices',
      channel: 'RCS',
      draftFlow: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'shipped', type: 'END', content: { type: 'text', text: 'Order {{event.order_id}} is on its way with {{event.carrier}}.' } },
        ],
        edges: [{ id: 'e1', source: 'start', target: 'shipped' }],
      },
      triggers: [
        {
          eventName: 'order.shipped',
          conditions: [{ property: 'carrier', operator: 'equals', value: 'UPS' }],
          messageType: 'TRANSACTIONAL',
          cooldownSeconds: 3600,
        },
      ],
    },
  });
  expect(bot.status).toBe(201);
  expect((await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key })).status).toBe(200);
});
afterAll(() => srv.close());

const contact = async (k = key) => (await call(srv, 'POST', '/v1/contacts', { key: k, body: { phone: phone() } })).body.id as string;
const event = (body: Record<string, unknown>, k = key) => call(srv, 'POST', '/v1/events', { key: k, body });
const resultOf = (res: { body: any }) => res.body.data ?? res.body;

describe('event triggers configured on a bot', () => {
  it('a matching event sends the flow’s message: in the conversation and in the message report; the cool-down then skips', async () => {
    const id = await contact();
    const first = resultOf(await event({ event: 'order.shipped', contactId: id, properties: { carrier: 'UPS', order_id: 'A-1' } }));
    expect(first.matchedTriggers).toHaveLength(1);
    expect(first.messages).toHaveLength(1);
    const messageId = first.messages[0].messageId as string;
    const conversations = await call(srv, 'GET', `/v1/conversations?contactId=${id}`, { key });
    const messages = await call(srv, 'GET', `/v1/conversations/${conversations.body.data[0].id}/messages`, { key });
    expect(messages.body.data.map((m: { content: { text?: string } }) => m.content.text)).toContain('Order A-1 is on its way with UPS.');
    const deadline = Date.now() + 15_000;
    let row: { messageId: string } | undefined;
    while (!row && Date.now() < deadline) {
      const report = await call(srv, 'GET', '/v1/reports/messages?kind=mdr&limit=1000', { key });
      row = report.body.data.find((r: { messageId: string }) => r.messageId === messageId);
      if (!row) await new Promise((r) => setTimeout(r, 100));
    }
    expect(row).toBeDefined();
    const again = resultOf(await event({ event: 'order.shipped', contactId: id, properties: { carrier: 'UPS', order_id: 'A-2' } }));
    expect(again.messages).toHaveLength(0);
    expect(again.skipped.map((s: { reason: string }) => s.reason)).toEqual(['FREQUENCY_CAPPED']);
  });

  it('conditions that do not match, and another event name, match nothing', async () => {
    const id = await contact();
    expect(resultOf(await event({ event: 'order.shipped', contactId: id, properties: { carrier: 'FedEx' } })).matchedTriggers).toEqual([]);
    expect(resultOf(await event({ event: 'order.created', contactId: id, properties: { carrier: 'UPS' } })).matchedTriggers).toEqual([]);
  });

  it('an opted-out contact is skipped with its reason', async () => {
    const id = await contact();
    const c = await call(srv, 'GET', `/v1/contacts/${id}`, { key });
    // Opt out the way a handset does: STOP to the sandbox sender.
    const { organization_id: organizationId } = await srv.context.db
      .selectFrom('contacts')
      .select('organization_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .select('phone_number')
      .where('organization_id', '=', organizationId)
      .where('phone_number', 'is not', null)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    const { signCallback, simulatorSecret } = await import('../src/providers/simulator.ts');
    const payload = JSON.stringify({
      type: 'inbound',
      providerMessageId: `SIMIN${Date.now()}${seq}`,
      from: c.body.phone,
      to: sender.phone_number,
      channel: 'SMS',
      text: 'STOP',
      at: new Date().toISOString(),
    });
    const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), payload) },
      body: payload,
    });
    expect(res.status).toBeLessThan(300);
    const deadline = Date.now() + 10_000;
    while (!(await call(srv, 'GET', `/v1/contacts/${id}`, { key })).body.optedOut && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const out = resultOf(await event({ event: 'order.shipped', contactId: id, properties: { carrier: 'UPS', order_id: 'B-1' } }));
    expect(out.messages).toHaveLength(0);
    expect(out.skipped.map((s: { reason: string }) => s.reason)).toEqual(['OPTED_OUT']);
  });

  it('a batch with one matching and one failing item: the first sends, the second names its field, nothing of it is recorded', async () => {
    const id = await contact();
    const res = await call(srv, 'POST', '/v1/events/batch', {
      key,
      body: {
        events: [
          { event: 'order.shipped', contactId: id, properties: { carrier: 'UPS', order_id: 'C-1' } },
          { event: 'order.shipped', contactId: '00000000-0000-4000-8000-00000000beef', properties: { carrier: 'UPS' } },
        ],
      },
    });
    expect(res.status).toBe(200);
    const summary = res.body.data;
    expect(summary).toMatchObject({ total: 2, processed: 1, failed: 1 });
    expect(summary.results[0]).toMatchObject({ index: 0, status: 'processed' });
    expect(summary.results[0].result.messages).toHaveLength(1);
    expect(summary.results[1]).toMatchObject({ index: 1, status: 'failed', result: null });
    expect(JSON.stringify(summary.results[1].error)).toContain('body.events.1.contactId');
  });

  it('another organization’s events never match these triggers', async () => {
    const id = await contact(otherKey);
    const res = resultOf(await event({ event: 'order.shipped', contactId: id, properties: { carrier: 'UPS', order_id: 'X-1' } }, otherKey));
    expect(res.matchedTriggers).toEqual([]);
    expect(res.messages).toEqual([]);
  });
});
