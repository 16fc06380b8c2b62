// The one rule for an id that names nothing (the API description's "Errors" section): an id in a request body that
// is not a resource of the caller's organization — another organization's included — answers 404 NOT_FOUND with
// `details` naming the field, dotted with numeric indices (`body.tags.1`); an id in the path is a plain 404.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let mine: Awaited<ReturnType<TestServer['newOrg']>>;
let theirs: Awaited<ReturnType<TestServer['newOrg']>>;
let myContact: string;
let theirContact: string;
let theirConversation: string;
let myConversation: string;

const text = { type: 'text' as const, text: 'Your order has shipped.' };

async function newContact(key: string, phone: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
  expect(res.status, res.text).toBe(201);
  return res.body.id ?? res.body.data.id;
}

async function newTag(key: string, name: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/tags', { key, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function conversationOf(org: { organizationId: string; senderId: string }, contactId: string): Promise<string> {
  const row = await srv.context.db
    .insertInto('conversations')
    .values({ organization_id: org.organizationId, contact_id: contactId, sender_id: org.senderId, source_type: 'api' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const notFoundNaming = (field: string, what: string) => ({
  code: 'NOT_FOUND',
  details: [{ field, message: `no such ${what} in this organization`, code: 'not_found' }],
});

beforeAll(async () => {
  srv = await startTestServer();
  [mine, theirs] = await Promise.all([srv.newOrg('Unknown ids: mine'), srv.newOrg('Unknown ids: theirs')]);
  myContact = await newContact(mine.apiKey.secret, '+14155550111');
  theirContact = await newContact(theirs.apiKey.secret, '+14155550112');
  myConversation = await conversationOf(mine, myContact);
  theirConversation = await conversationOf(theirs, theirContact);
});
afterAll(() => srv.close());

describe('an unknown id in a body answers 404 NOT_FOUND naming the field', () => {
  const send = (body: Record<string, unknown>) =>
    call(srv, 'POST', '/v1/messages/send', { key: mine.apiKey.secret, body: { messageType: 'TRANSACTIONAL', content: text, ...body } });

  it('sendMessage: contactId and senderId, unknown or another organization’s; nothing is stored', async () => {
    for (const contactId of [theirContact, randomUUID()]) {
      const res = await send({ contactId });
      expect(res.status, res.text).toBe(404);
      expect(res.body).toMatchObject(notFoundNaming('body.contactId', 'contact'));
      expect(res.body.message).toBe('Contact not found.');
    }
    for (const senderId of [theirs.senderId, randomUUID()]) {
      const res = await send({ contactId: myContact, senderId });
      expect(res.status, res.text).toBe(404);
      expect(res.body).toMatchObject(notFoundNaming('body.senderId', 'sender ID'));
    }
    const stored = await srv.context.db.selectFrom('messages').select('id').where('organization_id', '=', mine.organizationId).execute();
    expect(stored).toEqual([]);
    // A malformed id is still a validation error, not a 404.
    const malformed = await send({ contactId: 'not-a-uuid' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'body.contactId' })] });
  });

  it('previewMessage: contactId and senderId, as the send would', async () => {
    const preview = (body: Record<string, unknown>) =>
      call(srv, 'POST', '/v1/messages/preview', { key: mine.apiKey.secret, body: { content: text, ...body } });
    const contact = await preview({ contactId: theirContact });
    expect(contact.status).toBe(404);
    expect(contact.body).toMatchObject(notFoundNaming('body.contactId', 'contact'));
    const sender = await preview({ senderId: theirs.senderId });
    expect(sender.status).toBe(404);
    expect(sender.body).toMatchObject(notFoundNaming('body.senderId', 'sender ID'));
    // The organization's own ids preview.
    expect((await preview({ contactId: myContact, senderId: mine.senderId })).status).toBe(200);
  });

  it('handoffConversation: botId (no bot exists yet) after the conversation itself was found', async () => {
    const handoff = (id: string) =>
      call(srv, 'POST', `/v1/conversations/${id}/handoff`, { key: mine.apiKey.secret, body: { to: 'bot', botId: randomUUID() } });
    const res = await handoff(myConversation);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject(notFoundNaming('body.botId', 'bot'));
    // Another organization's conversation is the path's plain 404: no body field is blamed.
    const path = await handoff(theirConversation);
    expect(path.status).toBe(404);
    expect(path.body).toMatchObject({ code: 'NOT_FOUND', message: 'Conversation not found.' });
    expect(path.body.details).toBeUndefined();
  });

  it('sendConversationMessage names no body field: another organization’s conversation is a plain 404', async () => {
    const res = await call(srv, 'POST', `/v1/conversations/${theirConversation}/messages`, {
      key: mine.apiKey.secret,
      body: { messageType: 'TRANSACTIONAL', content: text },
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(res.body.details).toBeUndefined();
  });

  it('createContact, replaceContact and bulk tagging: each unknown tag id by its index, another organization’s included', async () => {
    const key = mine.apiKey.secret;
    const myTag = await newTag(key, 'Known');
    const theirTag = await newTag(theirs.apiKey.secret, 'Theirs');
    const unknown = randomUUID();

    const create = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550113', tags: [myTag, theirTag, unknown] } });
    expect(create.status).toBe(404);
    expect(create.body).toEqual({
      code: 'NOT_FOUND',
      message: 'Tag not found.',
      requestId: expect.any(String),
      details: [
        { field: 'body.tags.1', message: 'no such tag in this organization', code: 'not_found' },
        { field: 'body.tags.2', message: 'no such tag in this organization', code: 'not_found' },
      ],
    });

    const replace = await call(srv, 'PUT', `/v1/contacts/${myContact}`, { key, body: { phone: '+14155550111', tags: [theirTag] } });
    expect(replace.status).toBe(404);
    expect(replace.body).toMatchObject(notFoundNaming('body.tags.0', 'tag'));

    const bulk = await call(srv, 'POST', '/v1/contacts/bulk/tag', { key, body: { tagIds: [myTag, theirTag], contactIds: [myContact] } });
    expect(bulk.status).toBe(404);
    expect(bulk.body).toMatchObject(notFoundNaming('body.tagIds.1', 'tag'));
    const tagged = await srv.context.db.selectFrom('contact_tags').select('tag_id').where('contact_id', '=', myContact).execute();
    expect(tagged).toEqual([]); // nothing changed
  });
});
