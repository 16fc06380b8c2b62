// Every write path that stores contact fields, attributes, conversation previews or captured text, fed the
// largest values it takes (characters outside the BMP included: the document counts code points, as JSON Schema
// does), then every read operation that shows what it stored: none may answer 500. Responses are validated
// against the document here (VALIDATE_RESPONSES), so a stored value beyond a documented bound is a 500.
// Write paths: POST/PUT /v1/contacts, bulk tagging, CSV import, POST /v1/events (creates the contact), inbound
// messages (the carrier's callback), POST /v1/messages/send, a bot's capture. Reads: GET /v1/contacts,
// GET /v1/contacts/{id}, POST /v1/segments/preview, GET /v1/conversations, GET /v1/conversations/{id}, its
// messages, and the MCP tool listConversations.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { up } from '../src/db/migrations/0040_conversation_previews_within_bound.ts';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Org = Awaited<ReturnType<TestServer['newOrg']>>;

let srv: TestServer;
const clients: Client[] = [];
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer({ workers: true }); // the import's job runs in this process
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await srv.close();
});

const phone = () => `+1415557${String(1000 + ++seq).padStart(4, '0')}`;
/** `n` characters as the document counts them, each two UTF-16 units. */
const astral = (n: number) => '😀'.repeat(n);
const codePoints = (s: string) => [...s].length;

async function readsOf(org: Org) {
  const key = org.apiKey.secret;
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(srv, method, path, { key, ...(body === undefined ? {} : { body }) });
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 500)}`).toBe(200);
    return res.body;
  };
  const contacts = (await ok('GET', '/v1/contacts?limit=100')).data as Array<{ id: string }>;
  const byId = new Map<string, any>();
  for (const c of contacts) byId.set(c.id, await ok('GET', `/v1/contacts/${c.id}`));
  // The sample is the 10 newest: every test organization here keeps at most 10 contacts, so all are shown.
  expect(contacts.length).toBeLessThanOrEqual(10);
  const preview = (await ok('POST', '/v1/segments/preview', { conditions: [] })).data;
  expect(preview.count).toBe(contacts.length);
  const conversations = (await ok('GET', '/v1/conversations?limit=100')).data as Array<{ id: string }>;
  const conversationById = new Map<string, any>();
  const messagesOf = new Map<string, any[]>();
  for (const c of conversations) {
    conversationById.set(c.id, (await ok('GET', `/v1/conversations/${c.id}`)).data);
    messagesOf.set(c.id, (await ok('GET', `/v1/conversations/${c.id}/messages?limit=100`)).data);
  }
  const mcp = new Client({ name: 'write-read-limits.test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${srv.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  clients.push(mcp);
  const listed = (await mcp.callTool({ name: 'listConversations', arguments: { limit: 100 } })) as CallToolResult;
  expect(listed.isError, JSON.stringify(listed.content).slice(0, 500)).toBeFalsy();
  expect((listed.structuredContent as { data: unknown[] }).data).toHaveLength(conversations.length);
  return { contacts: byId, sample: preview.sample as any[], conversations: conversationById, messagesOf };
}

describe('contacts written at their limits read back', () => {
  it('through the API, bulk tagging, the CSV import and an event', async () => {
    const org = await srv.newOrg('Limits: contacts');
    const key = org.apiKey.secret;
    const tagIds: string[] = [];
    for (let i = 0; i < 51; i++) {
      const res = await call(srv, 'POST', '/v1/tags', { key, body: { name: `${astral(45)}${String(i).padStart(5, '0')}` } });
      expect(res.status, res.text).toBe(201);
      tagIds.push(res.body.data?.id ?? res.body.id);
    }
    const attributes = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`k${i}_${'x'.repeat(58)}`.slice(0, 64), i % 2 ? astral(1000) : 'é'.repeat(1000)]),
    );
    const created = await call(srv, 'POST', '/v1/contacts', {
      key,
      body: { phone: phone(), name: astral(200), attributes, tags: tagIds.slice(0, 50) },
    });
    expect(created.status, created.text).toBe(201);
    const replaced = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone() } });
    const put = await call(srv, 'PUT', `/v1/contacts/${replaced.body.id}`, {
      key,
      body: { phone: replaced.body.phone, name: 'é'.repeat(200), attributes, tags: tagIds.slice(1, 51) },
    });
    expect(put.status, put.text).toBe(200);
    // Bulk tagging a contact that carries 50 tags already adds nothing to it.
    const bulk = await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [tagIds[50]], contactIds: [created.body.id] } });
    expect(bulk.status, bulk.text).toBe(200);

    // The import: a name of 200 characters and attribute values of 1,000, each character two UTF-16 units
    // (within the document's bounds); one character more is a rejected row, never a stored value.
    const header = ['phone', 'name', ...Array.from({ length: 100 }, (_, i) => `a${i}`)];
    const full = [phone(), astral(200), ...Array.from({ length: 100 }, () => astral(1000))];
    const longName = [phone(), astral(201), ...Array.from({ length: 100 }, () => '')];
    const longValue = [phone(), 'Ok', astral(1001), ...Array.from({ length: 99 }, () => '')];
    const csv = [header, full, longName, longValue].map((r) => r.join(',')).join('\n');
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'limits.csv');
    const upload = await call(srv, 'POST', '/v1/contacts/import', { key, rawBody: form });
    expect(upload.status, upload.text).toBe(202);
    let job = upload.body;
    for (let i = 0; i < 200 && !['completed', 'failed'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await call(srv, 'GET', `/v1/contacts/import/${upload.body.jobId}`, { key })).body;
    }
    expect(job).toMatchObject({ status: 'completed', importedRows: 1, errorCount: 2 });
    expect(job.errors.map((e: { row: number; code: string; column: string }) => [e.row, e.code, e.column])).toEqual([
      [3, 'INVALID_VALUE', 'name'],
      [4, 'INVALID_VALUE', 'a0'],
    ]);

    // An event naming a new phone creates the contact; its properties (50 keys of 1,000 characters) are the event's.
    const properties = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, astral(1000)]));
    const event = await call(srv, 'POST', '/v1/events', { key, body: { event: 'limits.test', phone: phone(), properties } });
    expect(event.status, event.text).toBe(200);

    const reads = await readsOf(org);
    expect(reads.contacts.size).toBe(4);
    const imported = [...reads.contacts.values()].find((c) => c.phone === full[0]);
    expect(imported).toMatchObject({ name: astral(200), attributes: { a0: astral(1000), a99: astral(1000) } });
    expect(reads.contacts.get(created.body.id)).toMatchObject({ name: astral(200), attributes });
    expect(reads.contacts.get(created.body.id).tags).toHaveLength(50);
    expect(reads.sample.map((c) => c.id)).toContain(created.body.id);
  });
});

describe('conversations written at their limits read back', () => {
  /** An organization with its sender's number, and an inbound message as the carrier posts it (signed): the callback's status. */
  async function orgWithInbound(name: string) {
    const org = await srv.newOrg(name);
    const senderNumber = (
      await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
    ).phone_number!;
    const deliver = async (from: string, text: string | null, extra: Record<string, unknown> = {}): Promise<number> => {
      const body = JSON.stringify({
        type: 'inbound',
        providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
        from,
        to: senderNumber,
        channel: 'SMS',
        text,
        at: new Date().toISOString(),
        ...extra,
      });
      const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
        body,
      });
      return res.status;
    };
    const conversationOf = async (contactPhone: string) => {
      const contacts = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(contactPhone)}`, { key: org.apiKey.secret })).body
        .data;
      return (await call(srv, 'GET', `/v1/conversations?contactId=${contacts[0].id}`, { key: org.apiKey.secret })).body.data[0] as {
        id: string;
        contactId: string;
      };
    };
    return { org, key: org.apiKey.secret, deliver, conversationOf };
  }

  it('from inbound messages and sends: the preview is the first 100 characters, `[media]` for media without a caption', async () => {
    const { org, key, deliver } = await orgWithInbound('Limits: previews');
    // Inbound: 150 characters; 1,600 characters outside the BMP; media without a caption.
    const long = phone();
    expect(await deliver(long, 'x'.repeat(150))).toBe(204);
    const wide = phone();
    expect(await deliver(wide, astral(1600))).toBe(204);
    const media = phone();
    expect(await deliver(media, null, { mediaUrl: 'https://cdn.example.com/in/photo.jpg' })).toBe(204);
    // Sends: the longest text; a card whose 200-character title is its only text; media without a caption.
    const send = async (content: unknown) => {
      const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone() } });
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: { contactId: contact.body.id, messageType: 'TRANSACTIONAL', content },
      });
      expect(res.status, res.text).toBe(200);
      return contact.body.phone as string;
    };
    const text = await send({ type: 'text', text: astral(1600) });
    const card = await send({ type: 'card', title: astral(200) });
    const picture = await send({ type: 'media', mediaUrl: 'https://cdn.example.com/out/photo.jpg' });

    const reads = await readsOf(org);
    const previews = new Map([...reads.conversations.values()].map((c) => [c.contactPhone, c.lastMessagePreview as string | null]));
    expect(Object.fromEntries(previews)).toEqual({
      [long]: 'x'.repeat(100),
      [wide]: astral(100),
      [media]: '[media]',
      [text]: astral(100),
      [card]: astral(100),
      [picture]: '[media]',
    });
  });

  it('an inbound message from a sender that is no phone number stores no contact (a contact is an E.164 phone)', async () => {
    const { org, deliver } = await orgWithInbound('Limits: senders');
    expect(await deliver('AMAZON', 'Your parcel is on its way')).toBe(204);
    expect(await deliver('72404', 'Reply YES to confirm')).toBe(204);
    const reads = await readsOf(org);
    expect(reads.contacts.size).toBe(0);
    expect(reads.conversations.size).toBe(0);
  });

  it('a bot’s capture keeps the first 1,000 characters of a reply, the bound of what {{…}} fills', async () => {
    const { org, key, deliver, conversationOf } = await orgWithInbound('Limits: bots');
    expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'answer', type: 'text' } })).status).toBe(201);
    const bot = await call(srv, 'POST', '/v1/bots', {
      key,
      body: {
        name: 'Echo',
        channel: 'RCS',
        draftFlow: {
          nodes: [
            { id: 'start', type: 'START' },
            {
              id: 'ask',
              type: 'QUESTION',
              content: { type: 'text', text: 'Tell me everything.' },
              capture: { variable: 'answer', from: 'reply' },
            },
            { id: 'echo', type: 'END', content: { type: 'text', text: 'You said: {{answer}}' } },
          ],
          edges: [
            { id: 'e1', source: 'start', target: 'ask' },
            { id: 'e2', source: 'ask', target: 'echo' },
          ],
        },
      },
    });
    expect(bot.status, bot.text).toBe(201);
    expect((await call(srv, 'POST', `/v1/bots/${bot.body.id}/publish`, { key })).status).toBe(200);
    const talker = phone();
    expect(await deliver(talker, 'hi')).toBe(204);
    const talk = await conversationOf(talker);
    expect((await call(srv, 'POST', `/v1/conversations/${talk.id}/handoff`, { key, body: { to: 'bot', botId: bot.body.id } })).status).toBe(
      200,
    );
    expect(await deliver(talker, astral(1500))).toBe(204);

    const reads = await readsOf(org);
    const echoed = reads.messagesOf
      .get(talk.id)!
      .map((m) => m.content.text as string)
      .filter((t) => t?.startsWith('You said: '));
    expect(echoed).toEqual(['You said: ' + astral(1000)]);
    expect(codePoints(echoed[0]!)).toBe(1010);
  });

  it('migration 0040 cuts the previews stored before to 100 characters, so their conversations read again', async () => {
    const { org, key, deliver, conversationOf } = await orgWithInbound('Limits: stored previews');
    const from = phone();
    expect(await deliver(from, 'hello')).toBe(204);
    const { id } = await conversationOf(from);
    // A preview as the server stored it before (200 characters).
    await srv.context.db
      .updateTable('conversations')
      .set({ last_message_preview: `${astral(150)}${'y'.repeat(50)}` })
      .where('id', '=', id)
      .execute();
    expect((await call(srv, 'GET', `/v1/conversations/${id}`, { key })).status).toBe(500);
    await up(srv.context.db as never);
    const reads = await readsOf(org);
    expect(reads.conversations.get(id).lastMessagePreview).toBe(astral(100));
  });
});
