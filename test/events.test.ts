// Events section through HTTP: POST /v1/events and /v1/events/batch, with a trigger source registered by the test
// (the extension point bots plug into), the recorded event, per-item batch results, idempotent retries and tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../src/domain/messaging/send.ts';
import { ApiError } from '../src/domain/errors.ts';
import { registerTriggerSource } from '../src/domain/events/trigger-sources.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
const TRIGGER_ID = '0e1f2a3b-4c5d-4e6f-8a7b-8c9d0e1f2a3b';
const SKIP_ID = '5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a';
const runs: Array<{ organizationId: string; name: string; contactId: string; properties: Record<string, unknown> }> = [];

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Events org');
  other = await srv.newOrg('Other events org');
  key = org.apiKey.secret;
  // A fake trigger source, as the Bots section registers one: `order.shipped` sends a TRANSACTIONAL text through
  // the one send path; `review.requested` reports a skip.
  registerTriggerSource({
    async run(tenant, services, event) {
      runs.push({ organizationId: tenant.organizationId, name: event.name, contactId: event.contactId, properties: event.properties });
      if (tenant.organizationId !== org.organizationId) return [];
      if (event.name === 'order.shipped') {
        const text = `Order ${String(event.properties.order_id)} shipped`;
        try {
          const m = await send(tenant, services, {
            contactId: event.contactId,
            messageType: 'TRANSACTIONAL',
            content: { type: 'text', text },
            origin: 'event',
          });
          return [{ triggerId: TRIGGER_ID, name: 'Shipping notice', messageIds: [m.id], skipped: [] }];
        } catch (error) {
          if (error instanceof ApiError)
            return [
              { triggerId: TRIGGER_ID, name: 'Shipping notice', messageIds: [], skipped: [{ reason: error.code, message: error.message }] },
            ];
          throw error;
        }
      }
      if (event.name === 'review.requested') {
        return [
          {
            triggerId: SKIP_ID,
            name: 'Review request',
            messageIds: [],
            skipped: [{ reason: 'NO_CONSENT', message: 'Contact has not given marketing consent.' }],
          },
        ];
      }
      return [];
    },
  });
});
afterAll(() => srv.close());

const phone = (n: number) => `+1415555${String(n).padStart(4, '0')}`;

describe('triggerEvent', () => {
  it('records an event that matches no trigger, creating the contact from its phone', async () => {
    const res = await call(srv, 'POST', '/v1/events', {
      key,
      body: { event: 'nothing.configured', phone: phone(1100), properties: { a: 1 } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ event: 'nothing.configured', contactCreated: true, matchedTriggers: [], messages: [], skipped: [] });
    const stored = await srv.context.db.selectFrom('events').selectAll().where('id', '=', res.body.eventId).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      organization_id: org.organizationId,
      name: 'nothing.configured',
      contact_id: res.body.contactId,
      properties: { a: 1 },
    });
    const again = await call(srv, 'POST', '/v1/events', { key, body: { event: 'nothing.configured', phone: phone(1100) } });
    expect(again.body).toMatchObject({ contactId: res.body.contactId, contactCreated: false });
  });

  it('reports what a matching trigger did: the message is in the contact’s conversation', async () => {
    const res = await call(srv, 'POST', '/v1/events', {
      key,
      body: { event: 'order.shipped', phone: phone(1101), properties: { order_id: 'A-1' }, messageType: 'TRANSACTIONAL' },
    });
    expect(res.status).toBe(200);
    expect(res.body.matchedTriggers).toEqual([{ triggerId: TRIGGER_ID, name: 'Shipping notice' }]);
    expect(res.body.messages).toEqual([{ triggerId: TRIGGER_ID, messageId: expect.any(String), status: 'queued' }]);
    expect(res.body.skipped).toEqual([]);
    expect(runs.at(-1)).toMatchObject({ name: 'order.shipped', contactId: res.body.contactId, properties: { order_id: 'A-1' } });

    const convs = await call(srv, 'GET', `/v1/conversations?contactId=${res.body.contactId}`, { key });
    const msgs = await call(srv, 'GET', `/v1/conversations/${convs.body.data[0].id}/messages`, { key });
    expect(msgs.body.data.map((m: { id: string }) => m.id)).toContain(res.body.messages[0].messageId);
  });

  it('reports skipped triggers with their reason', async () => {
    const res = await call(srv, 'POST', '/v1/events', { key, body: { event: 'review.requested', phone: phone(1102) } });
    expect(res.body.matchedTriggers).toEqual([{ triggerId: SKIP_ID, name: 'Review request' }]);
    expect(res.body.messages).toEqual([]);
    expect(res.body.skipped).toEqual([{ triggerId: SKIP_ID, reason: 'NO_CONSENT', message: 'Contact has not given marketing consent.' }]);
  });

  it('answers 404 naming body.contactId for an unknown or another organization’s contact', async () => {
    const theirs = await call(srv, 'POST', '/v1/contacts', { key: other.apiKey.secret, body: { phone: phone(1103) } });
    for (const contactId of ['00000000-0000-4000-8000-000000000000', theirs.body.id]) {
      const res = await call(srv, 'POST', '/v1/events', { key, body: { event: 'order.shipped', contactId } });
      expect(res.status).toBe(404);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.contactId' })]);
    }
  });

  it('never runs another organization’s triggers (tenancy)', async () => {
    const res = await call(srv, 'POST', '/v1/events', {
      key: other.apiKey.secret,
      body: { event: 'order.shipped', phone: phone(1104), messageType: 'TRANSACTIONAL' },
    });
    expect(res.status).toBe(200);
    expect(res.body.matchedTriggers).toEqual([]);
    expect(runs.at(-1)!.organizationId).toBe(other.organizationId);
  });

  it('replays an Idempotency-Key retry without running triggers again', async () => {
    const body = { event: 'order.shipped', phone: phone(1105), properties: { order_id: 'B-2' }, messageType: 'TRANSACTIONAL' };
    const headers = { 'Idempotency-Key': 'evt-retry-1' };
    const first = await call(srv, 'POST', '/v1/events', { key, body, headers });
    const before = runs.length;
    const second = await call(srv, 'POST', '/v1/events', { key, body, headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(runs.length).toBe(before);
    const reused = await call(srv, 'POST', '/v1/events', { key, body: { ...body, event: 'other' }, headers });
    expect(reused.status).toBe(409);
  });

  it('answers 403 without events:send', async () => {
    const limited = await srv.newKey(org.organizationId, ['contacts:read']);
    const res = await call(srv, 'POST', '/v1/events', { key: limited.secret, body: { event: 'x', phone: phone(1106) } });
    expect(res.status).toBe(403);
  });

  it('answers 400 for both or neither contactId and phone', async () => {
    const res = await call(srv, 'POST', '/v1/events', { key, body: { event: 'x' } });
    expect(res.status).toBe(400);
  });
});

describe('triggerEventBatch', () => {
  it('processes a good item and reports a failing one without sinking it', async () => {
    const res = await call(srv, 'POST', '/v1/events/batch', {
      key,
      body: {
        events: [
          { event: 'order.shipped', phone: phone(1110), properties: { order_id: 'C-3' }, messageType: 'TRANSACTIONAL' },
          { event: 'order.shipped', contactId: '00000000-0000-4000-8000-000000000001' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ total: 2, processed: 1, failed: 1, messagesQueued: 1 });
    expect(res.body.data.results[0]).toMatchObject({ index: 0, status: 'processed', error: null });
    expect(res.body.data.results[0].result.messages).toHaveLength(1);
    expect(res.body.data.results[1]).toMatchObject({
      index: 1,
      status: 'failed',
      result: null,
      error: { code: 'NOT_FOUND', details: [expect.objectContaining({ field: 'body.events.1.contactId' })] },
    });
  });

  it('leaves nothing behind for a failed item', async () => {
    const before = await srv.context.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', org.organizationId)
      .executeTakeFirstOrThrow();
    const res = await call(srv, 'POST', '/v1/events/batch', {
      key,
      body: { events: [{ event: 'x', contactId: '00000000-0000-4000-8000-000000000002' }] },
    });
    expect(res.body.data).toMatchObject({ total: 1, processed: 0, failed: 1 });
    const after = await srv.context.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('organization_id', '=', org.organizationId)
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('refuses more than 100 events as a whole (400)', async () => {
    const events = Array.from({ length: 101 }, (_, i) => ({ event: 'x', phone: phone(2000 + i) }));
    const res = await call(srv, 'POST', '/v1/events/batch', { key, body: { events } });
    expect(res.status).toBe(400);
  });
});
