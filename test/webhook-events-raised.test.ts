// Every event the document lists under `webhooks` (generated/openapi.json) is raised by some path of the service
// and delivered to an endpoint subscribed to it (issue 37 item 2: `contact_import.completed` was documented,
// subscribable, and never sent). The test walks the document's names, not a list of its own: a name added to the
// document without a path that raises it fails here, in `has a path for every documented event`.
//
// One organization, one endpoint subscribed to every name, the delivery harness's receiver, and the real workers
// (dispatch, receipts, imports, exports, registry reviews, deliveries) on the harness's pg-boss.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchTuning } from '../src/domain/messaging/dispatch.ts';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';
import { startDeliveryHarness, type DeliveryHarness } from './support/webhook-harness.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

type Doc = { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: object } } } } }> };
const doc = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as Doc & Record<string, unknown>;
const documented = Object.keys(doc.webhooks);

let harness: DeliveryHarness;
let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let endpointId: string;
let senderNumber: string;
let seq = 0;
const received: Array<{ type: string; body: Record<string, unknown> }> = [];

beforeAll(async () => {
  dispatchTuning.backoffBaseSeconds = 0.2;
  harness = await startDeliveryHarness(
    'unused',
    (req, body) => {
      if (req.url?.startsWith('/events')) received.push({ type: (JSON.parse(body) as { type: string }).type, body: JSON.parse(body) });
    },
    { workers: true },
  );
  srv = harness.srv;
  org = await srv.newOrg('Every event org');
  key = org.apiKey.secret;
  const ep = await call(srv, 'POST', '/v1/webhook-endpoints', { key, body: { url: `${harness.base}/events`, events: documented } });
  expect(ep.status, ep.text).toBe(201);
  endpointId = ep.body.data.id;
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
}, 120_000);
afterAll(() => harness.close());

/** A contact whose number ends in `suffix` (carrier sandbox rules), in UTC, with a quiet period of `quiet`. */
async function contact(suffix: string, quiet: { start: string; end: string } = { start: '23:59', end: '00:00' }) {
  const phone = `+1415${String(++seq + 500).padStart(7 - suffix.length, '0')}${suffix}`;
  return srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone,
      attributes: '{}',
      rcs_capable: Number(suffix.at(-1)) < 5,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
      quiet_hours_start: quiet.start,
      quiet_hours_end: quiet.end,
    })
    .returning(['id', 'phone'])
    .executeTakeFirstOrThrow();
}

async function send(contactId: string, messageType = 'TRANSACTIONAL'): Promise<{ messageId: string; status: string }> {
  const res = await call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, messageType, content: { type: 'text', text: 'Hi' } },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** An inbound message as the carrier delivers it (signed callback). */
async function inbound(from: string, fields: { text?: string; postback?: string; channel?: string }): Promise<void> {
  const body = JSON.stringify({
    type: 'inbound',
    providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
    from,
    to: senderNumber,
    channel: fields.channel ?? 'SMS',
    at: new Date().toISOString(),
    ...fields,
  });
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

/** The paths that raise each event: a request (or a carrier's callback) an integrator's system makes. */
const raisers: Record<string, () => Promise<void>> = {
  // An RCS handset: queued at acceptance, then sent, delivered and read from the simulator's receipts.
  'message.queued': async () => void (await send((await contact('0001')).id)),
  'message.sent': async () => {}, // raised by the message.queued path's dispatch
  'message.delivered': async () => {}, // the same message's receipt
  'message.read': async () => {}, // the same message's read receipt (RCS)
  'message.failed': async () => void (await send((await contact('0777')).id)), // refused at send by the carrier
  // MARKETING inside the recipient's quiet hours: held at acceptance; revoking it is allowed until it is sent.
  'message.held': async () => {},
  'message.revoked': async () => {
    const held = await send((await contact('0002', { start: '00:00', end: '23:59' })).id, 'MARKETING');
    expect(held.status).toBe('held');
    const revoke = await call(srv, 'POST', `/v1/messages/${held.messageId}/revoke`, { key });
    expect(revoke.status, revoke.text).toBe(200);
  },
  'message.received': async () => inbound((await contact('0003')).phone, { text: 'hello' }),
  'message.button_tapped': async () => inbound((await contact('0004')).phone, { text: 'Yes', postback: 'confirm', channel: 'RCS' }),
  'contact.opted_out': async () => {},
  'contact.opted_in': async () => {
    const { phone } = await contact('0005');
    await inbound(phone, { text: 'STOP' });
    await inbound(phone, { text: 'START' });
  },
  'conversation.handed_off': async () => {
    const c = await contact('0006');
    await inbound(c.phone, { text: 'I need a person' });
    const conversation = await srv.context.db
      .selectFrom('conversations')
      .select('id')
      .where('contact_id', '=', c.id)
      .executeTakeFirstOrThrow();
    // Handed to a human from a bot (as a bot's flow does when it gives up): one that is already a human's raises nothing.
    await srv.context.db.updateTable('conversations').set({ handled_by: 'bot' }).where('id', '=', conversation.id).execute();
    const res = await call(srv, 'POST', `/v1/conversations/${conversation.id}/handoff`, { key, body: { to: 'human' } });
    expect(res.status, res.text).toBe(200);
  },
  'blast.status_changed': async () => {
    const c = await contact('0007');
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: { name: 'Every event', senderId: org.senderId, contentJson: { type: 'text', text: 'Sale' }, contactIds: [c.id] },
    });
    expect(blast.status, blast.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/blasts/${blast.body.id}/send`, { key })).status).toBe(200);
  },
  // An RCS agent launched and submitted: the sandbox registry reviews it (submission) and activates it (sender).
  'sender_id.status_changed': async () => {},
  'submission.status_changed': async () => {
    const agent = await call(srv, 'POST', '/v1/sender-ids', {
      key,
      body: {
        type: 'RCS_AGENT',
        name: 'Every event agent',
        provider: 'PROVIDER_A',
        rcsAgent: { displayName: 'Acme', description: 'Acme orders.', logoUrl: 'https://cdn.example.com/acme-224.png' },
      },
    });
    expect(agent.status, agent.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/sender-ids/${agent.body.data.id}/launch`, { key })).status).toBe(200);
    const submit = await call(srv, 'POST', `/v1/sender-ids/${agent.body.data.id}/submit`, {
      key,
      body: { useCaseDescription: 'Order updates for Acme customers.', sampleMessages: ['Your order has shipped.'] },
    });
    expect(submit.status, submit.text).toBe(200);
  },
  'contact_import.completed': async () => {
    const form = new FormData();
    form.append('file', new Blob(['phone,name\n+14155550101,Ann\nnot-a-phone,Bob\n'], { type: 'text/csv' }), 'contacts.csv');
    const res = await call(srv, 'POST', '/v1/contacts/import', { key, rawBody: form });
    expect(res.status, res.text).toBe(202);
  },
  'analytics_export.completed': async () => {
    const res = await call(srv, 'POST', '/v1/analytics/export', { key, body: { type: 'overview' } });
    expect(res.status, res.text).toBe(200);
  },
  test: async () => {
    const res = await call(srv, 'POST', `/v1/webhook-endpoints/${endpointId}/test`, { key, body: { event: 'test' } });
    expect(res.status, res.text).toBe(200);
  },
};

describe('every documented event is raised and delivered', () => {
  it('has a path for every documented event', () => {
    expect(documented.length).toBeGreaterThan(10);
    expect(documented.filter((name) => !(name in raisers))).toEqual([]);
  });

  it('delivers each documented event to a subscribed endpoint, with the documented payload', async () => {
    for (const name of documented) await raisers[name]?.();
    const missing = () => documented.filter((name) => !received.some((r) => r.type === name));
    await until(
      async () => missing(),
      (left) => left.length === 0,
      'a delivery of every documented event',
      30_000,
    );
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, 'doc');
    for (const name of documented) {
      const validate = ajv.getSchema(`doc#/webhooks/${name}/post/requestBody/content/application~1json/schema`)!;
      const delivery = received.find((r) => r.type === name)!;
      expect(validate(delivery.body), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const imported = received.find((r) => r.type === 'contact_import.completed')!.body.data;
    expect(imported).toMatchObject({ status: 'completed', totalRows: 2, created: 1, failed: 1, senderIdId: null, contactPhone: null });
  }, 60_000);
});
