// The document's own examples work as a client would copy them: the example dictionary (the intents and variable
// definitions of IntentListResponse and VariableDefinitionListResponse) created through the API, then every example
// flow of the Bots section (BotFlow, BotCreateRequest, BotUpdateRequest) published against it. (Every example is
// also valid against its schema: scripts/spec-rules.ts, test/contract.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocument } from '../src/contract/document.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

type Json = Record<string, any>;
const schemas = (loadDocument() as unknown as { components: { schemas: Record<string, Json> } }).components.schemas;
const firstExample = (name: string): Json => {
  const example = schemas[name]?.examples?.[0] as Json | undefined;
  if (!example) throw new Error(`${name} has no example`);
  return structuredClone(example);
};

let srv: TestServer;
let key: string;
let senderId: string;

beforeAll(async () => {
  srv = await startTestServer();
  const org = await srv.newOrg('Document examples');
  key = org.apiKey.secret;
  senderId = org.senderId;
  for (const intent of firstExample('IntentListResponse').data as Json[]) {
    const res = await call(srv, 'POST', '/v1/intents', {
      key,
      body: { value: intent.value, label: intent.label, description: intent.description },
    });
    expect(res.status, res.text).toBe(201);
    if (intent.active === false)
      expect((await call(srv, 'PATCH', `/v1/intents/${res.body.data.id}`, { key, body: { active: false } })).status).toBe(200);
  }
  for (const variable of firstExample('VariableDefinitionListResponse').data as Json[]) {
    const body = { name: variable.name, type: variable.type, ...(variable.items ? { items: variable.items } : {}) };
    const res = await call(srv, 'POST', '/v1/variable-definitions', { key, body });
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(() => srv.close());

describe("the document's example bot", () => {
  const examples: Array<[string, () => Json]> = [
    ['BotCreateRequest', () => firstExample('BotCreateRequest')],
    ['BotFlow', () => ({ name: 'Example flow', channel: 'RCS', draftFlow: firstExample('BotFlow') })],
    ['BotUpdateRequest', () => ({ name: 'Example update', channel: 'RCS', draftFlow: firstExample('BotUpdateRequest').draftFlow })],
  ];
  it.each(examples)('%s publishes against the example dictionary', async (_name, example) => {
    const body = example();
    expect(body.draftFlow, 'the example has a flow').toBeDefined();
    if ('senderId' in body) body.senderId = senderId; // the example's id names another organization's sender
    const created = await call(srv, 'POST', '/v1/bots', { key, body });
    expect(created.status, created.text).toBe(201);
    const published = await call(srv, 'POST', `/v1/bots/${created.body.id}/publish`, { key });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(published.body.status).toBe('PUBLISHED');
  });

  it('a placeholder naming neither a definition nor a contact field still fails validation', async () => {
    const flow = firstExample('BotFlow');
    flow.nodes[1].content.text = 'Hi {{favourite_colour}}';
    const created = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'Unknown placeholder', channel: 'RCS', draftFlow: flow } });
    const published = await call(srv, 'POST', `/v1/bots/${created.body.id}/publish`, { key });
    expect(published.status).toBe(400);
    expect(published.body.validationErrors).toContainEqual(expect.objectContaining({ code: 'UNKNOWN_VARIABLE', nodeId: 'welcome' }));
  });
});
