// getAnalyticsBotFunnel through HTTP: real bot sessions driven by inbound messages (the carrier simulator's signed
// callbacks), handoffs and an event trigger refused by the compliance gate; the funnel's exact figures per node
// (entries, contacts, exits by kind, where sessions went, conversion, drop-off), agreement with the bot summary, a
// new published version, the date rules, tenancy and unknown ids.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { signCallback, simulatorSecret } from '../src/providers/simulator.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let senderNumber: string;
let botId: string;
let seq = 0;

// RCS-capable handsets (last digit 0–4).
const phone = () => `+1415557${String(2000 + ++seq * 10).padStart(4, '0')}`;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

const flowV1 = {
  nodes: [
    { id: 'start', type: 'START' },
    {
      id: 'ask',
      type: 'QUESTION',
      name: 'Buy or talk?',
      content: { type: 'text', text: 'Buy now or talk to an agent?' },
      buttons: [
        { type: 'reply', text: 'Buy', intent: 'buy' },
        { type: 'reply', text: 'Agent', intent: 'agent' },
      ],
      capture: { variable: 'interest', from: 'intent' },
    },
    { id: 'confirm', type: 'MESSAGE', content: { type: 'text', text: 'Order placed.' } },
    { id: 'human', type: 'HANDOFF', name: 'Agent', content: { type: 'text', text: 'An agent will answer.' } },
    { id: 'done', type: 'END', name: 'Thanks', content: { type: 'text', text: 'Thanks!' } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'ask' },
    { id: 'e2', source: 'ask', target: 'confirm', intent: 'buy' },
    { id: 'e3', source: 'ask', target: 'human', intent: 'agent' },
    { id: 'e4', source: 'ask', target: 'ask' }, // anything else: ask again
    { id: 'e5', source: 'confirm', target: 'done' },
  ],
};

// Version 2: no agent any more.
const flowV2 = {
  nodes: flowV1.nodes
    .filter((n) => n.id !== 'human')
    .map((n) => (n.id === 'ask' ? { ...n, buttons: [{ type: 'reply', text: 'Buy', intent: 'buy' }] } : n)),
  edges: flowV1.edges.filter((e) => e.id !== 'e3'),
};

async function deliver(from: string, text: string, postback?: string): Promise<void> {
  const body = JSON.stringify({
    type: 'inbound',
    providerMessageId: `SIMIN${randomUUID().replaceAll('-', '')}`,
    from,
    to: senderNumber,
    channel: postback ? 'RCS' : 'SMS',
    text,
    ...(postback ? { postback } : {}),
    at: new Date().toISOString(),
  });
  const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), body) },
    body,
  });
  expect(res.status).toBeLessThan(300);
}

/** A handset writes in, then its conversation is handed to the bot (a session starts): answers the conversation. */
async function converse(p: string): Promise<string> {
  await deliver(p, 'hello');
  const contactId = (await call(srv, 'GET', `/v1/contacts?search=${encodeURIComponent(p)}`, { key })).body.data[0].id as string;
  const conversationId = (await call(srv, 'GET', `/v1/conversations?contactId=${contactId}`, { key })).body.data[0].id as string;
  await handOff(conversationId);
  return conversationId;
}

async function handOff(conversationId: string): Promise<void> {
  const res = await call(srv, 'POST', `/v1/conversations/${conversationId}/handoff`, { key, body: { to: 'bot', botId } });
  expect(res.status, res.text).toBe(200);
}

const funnel = (query = '', k = key, id = botId) => call(srv, 'GET', `/v1/analytics/bots/${id}/funnel${query}`, { key: k });

const kinds = (k: Partial<Record<'advanced' | 'completed' | 'handedOff' | 'errored' | 'abandoned' | 'waiting', number>>) => ({
  advanced: 0,
  completed: 0,
  handedOff: 0,
  errored: 0,
  abandoned: 0,
  waiting: 0,
  ...k,
});

beforeAll(async () => {
  srv = await startTestServer();
  [org, other] = await Promise.all([srv.newOrg('Funnel org'), srv.newOrg('Funnel other org')]);
  key = org.apiKey.secret;
  senderNumber = (
    await srv.context.db.selectFrom('sender_ids').select('phone_number').where('id', '=', org.senderId).executeTakeFirstOrThrow()
  ).phone_number!;
  for (const value of ['buy', 'agent']) expect((await call(srv, 'POST', '/v1/intents', { key, body: { value } })).status).toBe(201);
  expect((await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'interest', type: 'text' } })).status).toBe(201);
  // A MARKETING trigger: a contact without marketing consent is refused at the first message (NO_CONSENT).
  const created = await call(srv, 'POST', '/v1/bots', {
    key,
    body: { name: 'Shop bot', channel: 'RCS', draftFlow: flowV1, triggers: [{ eventName: 'cart.abandoned' }] },
  });
  expect(created.status, created.text).toBe(201);
  botId = created.body.id;
  expect((await call(srv, 'POST', `/v1/bots/${botId}/publish`, { key })).status).toBe(200);
});
afterAll(() => srv.close());

describe('GET /v1/analytics/bots/{id}/funnel', () => {
  it('counts what real sessions did at every node, in flow order, and agrees with the bot summary', async () => {
    const buyer = phone();
    await converse(buyer);
    await deliver(buyer, 'Buy', 'buy'); // ask → confirm → done: completed
    const asker = phone();
    await converse(asker);
    await deliver(asker, 'Agent', 'agent'); // ask → human: handed off
    const looper = phone();
    await converse(looper);
    await deliver(looper, 'hmm'); // no intent: the default edge back to ask, which waits again
    const changer = phone();
    const changed = await converse(changer); // waits at ask …
    await handOff(changed); // … until a new session replaces it: abandoned; the new one waits
    const unconsented = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: phone() } });
    const event = await call(srv, 'POST', '/v1/events', { key, body: { event: 'cart.abandoned', contactId: unconsented.body.id } });
    expect(event.status, event.text).toBe(200);
    expect((event.body.data ?? event.body).messages ?? []).toHaveLength(0); // refused at ask: errored

    const res = await funnel(`?startDate=${today()}&endDate=${today()}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      botId,
      version: 1,
      period: { startDate: today(), endDate: today() },
      entered: 5,
      completed: 1,
      completionRate: 0.2,
      sessions: 6,
      completions: 1,
      handoffs: 1,
      steps: [
        {
          nodeId: 'start',
          nodeType: 'START',
          label: null,
          position: 0,
          entries: 6,
          contacts: 5,
          exits: 0,
          exitsByKind: kinds({ advanced: 6 }),
          advancedTo: [{ nodeId: 'ask', sessions: 6 }],
          conversionRate: 1,
          dropOff: 0,
          rateFromStart: 1,
        },
        {
          nodeId: 'ask',
          nodeType: 'QUESTION',
          label: 'Buy or talk?',
          position: 1,
          entries: 6,
          contacts: 5,
          exits: 3,
          exitsByKind: kinds({ advanced: 2, errored: 1, abandoned: 1, waiting: 2 }),
          advancedTo: [
            { nodeId: 'confirm', sessions: 1 },
            { nodeId: 'human', sessions: 1 },
          ],
          conversionRate: 0.3333,
          dropOff: 4,
          rateFromStart: 1,
        },
        {
          nodeId: 'confirm',
          nodeType: 'MESSAGE',
          label: null,
          position: 2,
          entries: 1,
          contacts: 1,
          exits: 0,
          exitsByKind: kinds({ advanced: 1 }),
          advancedTo: [{ nodeId: 'done', sessions: 1 }],
          conversionRate: 1,
          dropOff: 0,
          rateFromStart: 0.2,
        },
        {
          nodeId: 'human',
          nodeType: 'HANDOFF',
          label: 'Agent',
          position: 3,
          entries: 1,
          contacts: 1,
          exits: 1,
          exitsByKind: kinds({ handedOff: 1 }),
          advancedTo: [],
          conversionRate: 0,
          dropOff: 1,
          rateFromStart: 0.2,
        },
        {
          nodeId: 'done',
          nodeType: 'END',
          label: 'Thanks',
          position: 4,
          entries: 1,
          contacts: 1,
          exits: 1,
          exitsByKind: kinds({ completed: 1 }),
          advancedTo: [],
          conversionRate: 1,
          dropOff: 0,
          rateFromStart: 0.2,
        },
      ],
    });

    // The summary counts the same sessions, completions and handoffs.
    const summary = await call(srv, 'GET', `/v1/analytics/bots/${botId}`, { key });
    expect(summary.status, summary.text).toBe(200);
    expect(summary.body.data).toMatchObject({ sessions: 6, uniqueContacts: 5, completions: 1, handoffsToHuman: 1 });

    // The looper's session visited ask twice; the funnel counted it once (its latest visit waits).
    const visits = await sql<{ node_id: string; exit: string | null; next_node_id: string | null }>`
      select v.node_id, v.exit, v.next_node_id from bot_node_visits v join contacts c on c.id = v.contact_id
      where v.organization_id = ${org.organizationId} and c.phone = ${looper} order by v.id`.execute(srv.context.db);
    expect(visits.rows).toEqual([
      { node_id: 'start', exit: 'advanced', next_node_id: 'ask' },
      { node_id: 'ask', exit: 'advanced', next_node_id: 'ask' },
      { node_id: 'ask', exit: null, next_node_id: null },
    ]);
  });

  it('after a new version is published, counts every version by node id and leaves removed nodes out of the steps', async () => {
    expect((await call(srv, 'PUT', `/v1/bots/${botId}`, { key, body: { draftFlow: flowV2 } })).status).toBe(200);
    const published = await call(srv, 'POST', `/v1/bots/${botId}/publish`, { key });
    expect(published.status, published.text).toBe(200);
    const version = published.body.publishedVersion as number;
    expect(version).toBeGreaterThan(1);
    const p = phone();
    await converse(p);
    await deliver(p, 'Buy', 'buy');

    const res = await funnel();
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ version, entered: 6, completed: 2, sessions: 7, completions: 2, handoffs: 1 });
    expect(d.steps.map((s: { nodeId: string; position: number; entries: number }) => [s.nodeId, s.position, s.entries])).toEqual([
      ['start', 0, 7],
      ['ask', 1, 7],
      ['confirm', 2, 2],
      ['done', 3, 2],
    ]);
    expect(d.steps[1].advancedTo).toEqual([
      { nodeId: 'confirm', sessions: 2 },
      { nodeId: 'human', sessions: 1 },
    ]);
    const versions = await sql<{ bot_version: number; sessions: string }>`
      select bot_version, count(distinct session_id) as sessions from bot_node_visits
      where organization_id = ${org.organizationId} and bot_id = ${botId} group by 1 order by 1`.execute(srv.context.db);
    expect(versions.rows.map((r) => [r.bot_version, Number(r.sessions)])).toEqual([
      [1, 6],
      [version, 1],
    ]);
    const summary = await call(srv, 'GET', `/v1/analytics/bots/${botId}`, { key });
    expect(summary.body.data).toMatchObject({ sessions: 7, uniqueContacts: 6, completions: 2, handoffsToHuman: 1 });
  });

  it('a reply refused by the compliance gate mid-turn: the next node errored, the session waits at its node again', async () => {
    const p = phone();
    await converse(p);
    await deliver(p, 'STOP'); // the keyword engine's, not a reply to the bot
    await deliver(p, 'Buy', 'buy'); // ask → confirm, whose message the gate refuses (OPTED_OUT)
    const visits = await sql<{ node_id: string; exit: string | null; next_node_id: string | null }>`
      select v.node_id, v.exit, v.next_node_id from bot_node_visits v join contacts c on c.id = v.contact_id
      where v.organization_id = ${org.organizationId} and c.phone = ${p} order by v.id`.execute(srv.context.db);
    expect(visits.rows).toEqual([
      { node_id: 'start', exit: 'advanced', next_node_id: 'ask' },
      { node_id: 'ask', exit: 'advanced', next_node_id: 'confirm' },
      { node_id: 'confirm', exit: 'errored', next_node_id: null },
      { node_id: 'ask', exit: null, next_node_id: null },
    ]);
    const d = (await funnel()).body.data;
    expect(d).toMatchObject({ entered: 7, sessions: 8, completions: 2 });
    const step = (id: string) => d.steps.find((s: { nodeId: string }) => s.nodeId === id);
    // ask: counted once for this session, by its latest visit (waiting); confirm: its refusal.
    expect(step('ask')).toMatchObject({
      entries: 8,
      exitsByKind: kinds({ advanced: 3, errored: 1, abandoned: 1, waiting: 3 }),
      dropOff: 5,
    });
    expect(step('confirm')).toMatchObject({
      entries: 3,
      contacts: 3,
      exits: 1,
      exitsByKind: kinds({ advanced: 2, errored: 1 }),
      conversionRate: 0.6667,
      dropOff: 1,
    });
  });

  it('applies the date rules: the default range ends today, sessions belong to the day they started, 400 for bad ranges', async () => {
    const dflt = await funnel();
    expect(dflt.body.data.period).toEqual({ startDate: daysAgo(29), endDate: today() });
    const past = await funnel(`?startDate=${daysAgo(40)}&endDate=${daysAgo(1)}`);
    expect(past.status, past.text).toBe(200);
    expect(past.body.data).toMatchObject({ entered: 0, completed: 0, completionRate: 0, sessions: 0, completions: 0, handoffs: 0 });
    expect(past.body.data.steps).toHaveLength(4);
    for (const s of past.body.data.steps)
      expect(s).toMatchObject({
        entries: 0,
        contacts: 0,
        exits: 0,
        exitsByKind: kinds({}),
        advancedTo: [],
        conversionRate: 0,
        dropOff: 0,
        rateFromStart: 0,
      });
    const after = await funnel(`?startDate=${today()}&endDate=${daysAgo(1)}`);
    expect(after.status).toBe(400);
    expect(after.body.code).toBe('VALIDATION_ERROR');
    expect(after.body.details[0].field).toBe('query.startDate');
    for (const q of ['?startDate=2026-02-30', '?endDate=yesterday']) {
      const bad = await funnel(q);
      expect(bad.status, q).toBe(400);
      expect(bad.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers an empty funnel for a bot never published', async () => {
    const draft = await call(srv, 'POST', '/v1/bots', { key, body: { name: 'Draft bot', channel: 'RCS' } });
    const res = await funnel(`?startDate=${today()}&endDate=${today()}`, key, draft.body.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      botId: draft.body.id,
      version: null,
      period: { startDate: today(), endDate: today() },
      entered: 0,
      completed: 0,
      completionRate: 0,
      sessions: 0,
      completions: 0,
      handoffs: 0,
      steps: [],
    });
  });

  it('answers 404 for another organization’s bot or an unknown id, 403 without analytics:read', async () => {
    const foreign = await funnel('', other.apiKey.secret);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NOT_FOUND');
    const unknown = await funnel('', key, '00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const readOnly = await srv.newKey(org.organizationId, ['bots:read']);
    expect((await funnel('', readOnly.secret)).status).toBe(403);
  });
});
