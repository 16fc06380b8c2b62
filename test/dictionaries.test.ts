// Dictionaries section through HTTP: intents, variable definitions, folders (dictionary categories), usage and
// rewrite (rename everywhere). These organizations have no bots, so usage answers zero bots and a rewrite renames
// the entry alone (0 bots updated, 0 references rewritten), keeping its id; test/bots.test.ts covers flows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
let otherKey: string;

beforeAll(async () => {
  srv = await startTestServer();
  key = (await srv.newOrg('Dictionaries org')).apiKey.secret;
  otherKey = (await srv.newOrg('Other dictionaries org')).apiKey.secret;
});
afterAll(() => srv.close());

const UNKNOWN = '00000000-0000-4000-8000-00000000dead';

const notFoundNaming = (field: string) => ({
  code: 'NOT_FOUND',
  details: [{ field, message: 'no such dictionary category in this organization', code: 'not_found' }],
});

async function folder(name: string, k = key, sortOrder?: number) {
  const res = await call(srv, 'POST', '/v1/dictionary-categories', {
    key: k,
    body: { name, ...(sortOrder === undefined ? {} : { sortOrder }) },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; name: string; sortOrder: number };
}

async function intent(value: string, extra: Record<string, unknown> = {}, k = key) {
  const res = await call(srv, 'POST', '/v1/intents', { key: k, body: { value, ...extra } });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; value: string; label: string; categoryId: string | null; active: boolean };
}

async function variable(body: Record<string, unknown>, k = key) {
  const res = await call(srv, 'POST', '/v1/variable-definitions', { key: k, body });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; name: string; type: string; items: string[] | null; categoryId: string | null };
}

describe('intents', () => {
  it('creates with a normalized value, default label and active, and lists by value', async () => {
    const sales = await folder('Intent folder');
    const a = await intent(' Book_Demo ', { categoryId: sales.id, description: 'Demo please' });
    expect(a).toMatchObject({ value: 'book_demo', label: 'book_demo', active: true, categoryId: sales.id, description: 'Demo please' });
    const b = await intent('Alpha', { label: 'First', active: false });
    expect(b).toMatchObject({ value: 'alpha', label: 'First', active: false, categoryId: null, description: null });

    const list = await call(srv, 'GET', '/v1/intents', { key });
    expect(list.status).toBe(200);
    const values = list.body.data.map((i: { value: string }) => i.value);
    expect(values).toEqual([...values].sort());
    expect(values).toEqual(expect.arrayContaining(['alpha', 'book_demo']));
    // A whole list by default (issue 37 item 6): every intent in one page.
    expect(list.body.pagination).toEqual({ page: 1, limit: values.length, total: values.length, hasMore: false });
  });

  it('409 ALREADY_EXISTS for a value that normalizes to an existing one', async () => {
    await intent('dup_value');
    const res = await call(srv, 'POST', '/v1/intents', { key, body: { value: '  DUP_value' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ALREADY_EXISTS');
  });

  it('404 naming body.categoryId for an unknown or foreign folder (nothing stored); 400 for a blank value', async () => {
    const foreign = await folder('Foreign folder', otherKey);
    for (const categoryId of [UNKNOWN, foreign.id]) {
      const res = await call(srv, 'POST', '/v1/intents', { key, body: { value: 'misfiled', categoryId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject(notFoundNaming('body.categoryId'));
    }
    const list = await call(srv, 'GET', '/v1/intents', { key });
    expect(list.body.data.map((i: { value: string }) => i.value)).not.toContain('misfiled');
    const blank = await call(srv, 'POST', '/v1/intents', { key, body: { value: '   ' } });
    expect(blank.status).toBe(400);
  });

  it('updates label, description, folder and active; an equal value is accepted, another is TOKEN_IMMUTABLE', async () => {
    const f = await folder('Update folder');
    const i = await intent('talk_to_agent');
    const res = await call(srv, 'PATCH', `/v1/intents/${i.id}`, {
      key,
      body: { value: ' Talk_To_Agent ', label: 'Talk to an agent', description: 'Human please', categoryId: f.id, active: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: i.id,
      value: 'talk_to_agent',
      label: 'Talk to an agent',
      description: 'Human please',
      categoryId: f.id,
      active: false,
    });

    const unfile = await call(srv, 'PATCH', `/v1/intents/${i.id}`, { key, body: { categoryId: null, description: null } });
    expect(unfile.body.data).toMatchObject({ categoryId: null, description: null, label: 'Talk to an agent' });

    const immutable = await call(srv, 'PATCH', `/v1/intents/${i.id}`, { key, body: { value: 'talk_to_human', label: 'Changed' } });
    expect(immutable.status).toBe(400);
    expect(immutable.body.code).toBe('TOKEN_IMMUTABLE');
    expect(immutable.body.details).toEqual([expect.objectContaining({ field: 'body.value' })]);
    const after = await call(srv, 'GET', '/v1/intents', { key });
    expect(after.body.data.find((x: { id: string }) => x.id === i.id).label).toBe('Talk to an agent');

    const badFolder = await call(srv, 'PATCH', `/v1/intents/${i.id}`, { key, body: { categoryId: UNKNOWN, label: 'Never' } });
    expect(badFolder.status).toBe(404);
    expect(badFolder.body).toMatchObject(notFoundNaming('body.categoryId'));
    const empty = await call(srv, 'PATCH', `/v1/intents/${i.id}`, { key, body: {} });
    expect(empty.status).toBe(400);
  });

  it('usage answers zero bots (no bot flows exist yet)', async () => {
    const i = await intent('usage_intent');
    const res = await call(srv, 'GET', `/v1/intents/${i.id}/usage`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      intentId: i.id,
      value: 'usage_intent',
      botCount: 0,
      draftNodeCount: 0,
      publishedNodeCount: 0,
      bots: [],
    });
  });

  it('rewrite renames the value keeping the id; same value is a no-op; taken value is 409', async () => {
    const i = await intent('book_call');
    await intent('taken_value');
    const res = await call(srv, 'POST', `/v1/intents/${i.id}/rewrite`, { key, body: { newValue: ' Request_Call ' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: i.id,
      kind: 'intent',
      old: 'book_call',
      new: 'request_call',
      botsUpdated: 0,
      referencesRewritten: 0,
    });
    const list = await call(srv, 'GET', '/v1/intents', { key });
    expect(list.body.data.find((x: { id: string }) => x.id === i.id).value).toBe('request_call');

    const again = await call(srv, 'POST', `/v1/intents/${i.id}/rewrite`, { key, body: { newValue: 'request_call' } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ old: 'request_call', new: 'request_call', botsUpdated: 0, referencesRewritten: 0 });

    const clash = await call(srv, 'POST', `/v1/intents/${i.id}/rewrite`, { key, body: { newValue: 'TAKEN_VALUE' } });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('ALREADY_EXISTS');
    const blank = await call(srv, 'POST', `/v1/intents/${i.id}/rewrite`, { key, body: { newValue: ' ' } });
    expect(blank.status).toBe(400);
  });

  it('deletes; a second delete is 404', async () => {
    const i = await intent('to_delete');
    const res = await call(srv, 'DELETE', `/v1/intents/${i.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id: i.id });
    expect((await call(srv, 'DELETE', `/v1/intents/${i.id}`, { key })).status).toBe(404);
    // the value is free again
    await intent('to_delete');
  });
});

describe('variable definitions', () => {
  it('creates with a normalized name, items only for lists, and lists by name', async () => {
    const f = await folder('Variable folder');
    const plan = await variable({ name: ' Plan ', type: 'list', items: ['Starter', 'Growth'], categoryId: f.id });
    expect(plan).toMatchObject({ name: 'plan', type: 'list', items: ['Starter', 'Growth'], categoryId: f.id });
    const date = await variable({ name: 'Preferred_Date', type: 'date' });
    expect(date).toMatchObject({ name: 'preferred_date', type: 'date', items: null, categoryId: null });

    const list = await call(srv, 'GET', '/v1/variable-definitions', { key });
    expect(list.status).toBe(200);
    const names = list.body.data.map((v: { name: string }) => v.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['plan', 'preferred_date']));
  });

  it('400 for items with a non-list type, a list without items, a bad name, a foreign folder; 409 for a duplicate', async () => {
    for (const body of [
      { name: 'v1', type: 'text', items: ['a'] },
      { name: 'v2', type: 'list' },
      { name: 'bad name!', type: 'text' },
      { name: 'v3', type: 'list', items: ['a', 'a'] },
    ]) {
      const res = await call(srv, 'POST', '/v1/variable-definitions', { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const foreign = await folder('Foreign variable folder', otherKey);
    const f = await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'v4', type: 'text', categoryId: foreign.id } });
    expect(f.status).toBe(404);
    expect(f.body).toMatchObject(notFoundNaming('body.categoryId'));

    await variable({ name: 'company_size', type: 'number' });
    const dup = await call(srv, 'POST', '/v1/variable-definitions', { key, body: { name: 'Company_Size', type: 'text' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
  });

  it('updates type/items/folder by the documented rules; another name is TOKEN_IMMUTABLE', async () => {
    const v = await variable({ name: 'tier', type: 'list', items: ['A', 'B'] });
    const items = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { items: ['A', 'B', 'C'] } });
    expect(items.status).toBe(200);
    expect(items.body.data).toMatchObject({ type: 'list', items: ['A', 'B', 'C'] });

    const toText = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { type: 'text', name: 'TIER' } });
    expect(toText.status).toBe(200);
    expect(toText.body.data).toMatchObject({ name: 'tier', type: 'text', items: null });

    const itemsAlone = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { items: ['X'] } });
    expect(itemsAlone.status).toBe(400);
    expect(itemsAlone.body.details).toEqual([expect.objectContaining({ field: 'body.items' })]);
    const listNoItems = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { type: 'list' } });
    expect(listNoItems.status).toBe(400);
    const toList = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { type: 'list', items: ['Gold'] } });
    expect(toList.body.data).toMatchObject({ type: 'list', items: ['Gold'] });

    const f = await folder('Tier folder');
    const filed = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { categoryId: f.id } });
    expect(filed.body.data).toMatchObject({ categoryId: f.id, type: 'list', items: ['Gold'] });

    const foreignFolder = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { categoryId: UNKNOWN } });
    expect(foreignFolder.status).toBe(404);
    expect(foreignFolder.body).toMatchObject(notFoundNaming('body.categoryId'));

    const immutable = await call(srv, 'PATCH', `/v1/variable-definitions/${v.id}`, { key, body: { name: 'level', categoryId: null } });
    expect(immutable.status).toBe(400);
    expect(immutable.body.code).toBe('TOKEN_IMMUTABLE');
    expect(immutable.body.details).toEqual([expect.objectContaining({ field: 'body.name' })]);
  });

  it('usage and rewrite (id kept, no-op, 409); delete', async () => {
    const v = await variable({ name: 'plan_name', type: 'text' });
    await variable({ name: 'taken_name', type: 'text' });
    const usage = await call(srv, 'GET', `/v1/variable-definitions/${v.id}/usage`, { key });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toEqual({
      variableId: v.id,
      name: 'plan_name',
      botCount: 0,
      draftNodeCount: 0,
      publishedNodeCount: 0,
      bots: [],
    });

    const res = await call(srv, 'POST', `/v1/variable-definitions/${v.id}/rewrite`, { key, body: { newName: 'Subscription_Plan' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: v.id,
      kind: 'variable',
      old: 'plan_name',
      new: 'subscription_plan',
      botsUpdated: 0,
      referencesRewritten: 0,
    });
    const same = await call(srv, 'POST', `/v1/variable-definitions/${v.id}/rewrite`, { key, body: { newName: 'subscription_plan' } });
    expect(same.body).toMatchObject({ old: 'subscription_plan', new: 'subscription_plan', referencesRewritten: 0 });
    const clash = await call(srv, 'POST', `/v1/variable-definitions/${v.id}/rewrite`, { key, body: { newName: 'taken_name' } });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('ALREADY_EXISTS');
    const bad = await call(srv, 'POST', `/v1/variable-definitions/${v.id}/rewrite`, { key, body: { newName: 'no spaces' } });
    expect(bad.status).toBe(400);

    const del = await call(srv, 'DELETE', `/v1/variable-definitions/${v.id}`, { key });
    expect(del.body).toEqual({ success: true, id: v.id });
    expect((await call(srv, 'DELETE', `/v1/variable-definitions/${v.id}`, { key })).status).toBe(404);
  });
});

describe('dictionary categories', () => {
  it('places new folders last unless sortOrder is given, lists by sortOrder then name, 409 on a duplicate name', async () => {
    const k = (await srv.newOrg('Folders org')).apiKey.secret;
    const a = await folder('Sales', k);
    const b = await folder('Support', k);
    expect([a.sortOrder, b.sortOrder]).toEqual([0, 1]);
    const c = await folder('Billing', k, 0);
    expect(c.sortOrder).toBe(0);
    const list = await call(srv, 'GET', '/v1/dictionary-categories', { key: k });
    expect(list.body.data.map((f: { name: string }) => f.name)).toEqual(['Billing', 'Sales', 'Support']);

    const dup = await call(srv, 'POST', '/v1/dictionary-categories', { key: k, body: { name: '  sales ' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    const blank = await call(srv, 'POST', '/v1/dictionary-categories', { key: k, body: { name: '  ' } });
    expect(blank.status).toBe(400);

    const huge = await call(srv, 'POST', '/v1/dictionary-categories', { key: k, body: { name: 'Huge', sortOrder: 2 ** 31 } });
    expect(huge.status).toBe(400);
    expect(huge.body.details).toEqual([expect.objectContaining({ field: 'body.sortOrder' })]);
    const top = await folder('Top', k, 2 ** 31 - 1);
    const after = await folder('After top', k);
    expect([top.sortOrder, after.sortOrder]).toEqual([2 ** 31 - 1, 2 ** 31 - 1]);
  });

  it('renames and moves a folder; 409 for another folder’s name; its own name in another case is fine', async () => {
    const k = (await srv.newOrg('Rename folders org')).apiKey.secret;
    const a = await folder('One', k);
    await folder('Two', k);
    const res = await call(srv, 'PATCH', `/v1/dictionary-categories/${a.id}`, { key: k, body: { name: ' Uno ', sortOrder: 5 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: a.id, name: 'Uno', sortOrder: 5 });
    const self = await call(srv, 'PATCH', `/v1/dictionary-categories/${a.id}`, { key: k, body: { name: 'UNO' } });
    expect(self.status).toBe(200);
    const clash = await call(srv, 'PATCH', `/v1/dictionary-categories/${a.id}`, { key: k, body: { name: 'two' } });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('ALREADY_EXISTS');
  });

  it('delete unfiles the folder’s intents and variable definitions', async () => {
    const f = await folder('Doomed folder');
    const i = await intent('filed_intent', { categoryId: f.id });
    const v = await variable({ name: 'filed_var', type: 'text', categoryId: f.id });
    const res = await call(srv, 'DELETE', `/v1/dictionary-categories/${f.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id: f.id });
    const intents = await call(srv, 'GET', '/v1/intents', { key });
    expect(intents.body.data.find((x: { id: string }) => x.id === i.id).categoryId).toBeNull();
    const vars = await call(srv, 'GET', '/v1/variable-definitions', { key });
    expect(vars.body.data.find((x: { id: string }) => x.id === v.id).categoryId).toBeNull();
    expect((await call(srv, 'DELETE', `/v1/dictionary-categories/${f.id}`, { key })).status).toBe(404);
  });

  it('reorder sets listed folders to their index, skips unknown and foreign ids, leaves others; duplicates are 400', async () => {
    const k = (await srv.newOrg('Reorder org')).apiKey.secret;
    const a = await folder('A', k);
    const b = await folder('B', k);
    const c = await folder('C', k);
    const d = await folder('D', k, 9);
    const foreign = await folder('Foreign reorder', otherKey);
    const res = await call(srv, 'POST', '/v1/dictionary-categories/reorder', {
      key: k,
      body: { ids: [c.id, UNKNOWN, foreign.id, a.id, b.id] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((f: { name: string; sortOrder: number }) => [f.name, f.sortOrder])).toEqual([
      ['C', 0],
      ['A', 3],
      ['B', 4],
      ['D', 9],
    ]);
    expect(d.sortOrder).toBe(9);
    const foreignAfter = await call(srv, 'GET', '/v1/dictionary-categories', { key: otherKey });
    expect(foreignAfter.body.data.find((f: { id: string }) => f.id === foreign.id).sortOrder).toBe(foreign.sortOrder);

    const dup = await call(srv, 'POST', '/v1/dictionary-categories/reorder', { key: k, body: { ids: [a.id, a.id] } });
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe('VALIDATION_ERROR');
    const upper = await call(srv, 'POST', '/v1/dictionary-categories/reorder', { key: k, body: { ids: [a.id, a.id.toUpperCase()] } });
    expect(upper.status).toBe(400);
  });
});

describe('tenancy and scopes', () => {
  it('another organization’s ids answer 404 on every id operation and are not listed', async () => {
    const i = await intent('private_intent', {}, otherKey);
    const v = await variable({ name: 'private_var', type: 'text' }, otherKey);
    const f = await folder('Private folder', otherKey);
    const attempts: Array<[string, string, unknown?]> = [
      ['PATCH', `/v1/intents/${i.id}`, { label: 'x' }],
      ['DELETE', `/v1/intents/${i.id}`],
      ['GET', `/v1/intents/${i.id}/usage`],
      ['POST', `/v1/intents/${i.id}/rewrite`, { newValue: 'stolen' }],
      ['PATCH', `/v1/variable-definitions/${v.id}`, { categoryId: null }],
      ['DELETE', `/v1/variable-definitions/${v.id}`],
      ['GET', `/v1/variable-definitions/${v.id}/usage`],
      ['POST', `/v1/variable-definitions/${v.id}/rewrite`, { newName: 'stolen' }],
      ['PATCH', `/v1/dictionary-categories/${f.id}`, { name: 'stolen' }],
      ['DELETE', `/v1/dictionary-categories/${f.id}`],
      ['PATCH', `/v1/intents/${UNKNOWN}`, { label: 'x' }],
      ['POST', `/v1/variable-definitions/${UNKNOWN}/rewrite`, { newName: 'x' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(srv, method, path, { key, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    const ids = async (path: string) => (await call(srv, 'GET', path, { key })).body.data.map((x: { id: string }) => x.id);
    expect(await ids('/v1/intents')).not.toContain(i.id);
    expect(await ids('/v1/variable-definitions')).not.toContain(v.id);
    expect(await ids('/v1/dictionary-categories')).not.toContain(f.id);
    // the same tokens are free in this organization
    await intent('private_intent');
    await variable({ name: 'private_var', type: 'text' });
    await folder('Private folder');
  });

  it('a read-only key reads but cannot write (403)', async () => {
    const org = await srv.newOrg('Read-only dictionaries org');
    const ro = await srv.newKey(org.organizationId, ['dictionaries:read']);
    expect((await call(srv, 'GET', '/v1/intents', { key: ro.secret })).status).toBe(200);
    expect((await call(srv, 'GET', '/v1/variable-definitions', { key: ro.secret })).status).toBe(200);
    expect((await call(srv, 'GET', '/v1/dictionary-categories', { key: ro.secret })).status).toBe(200);
    const res = await call(srv, 'POST', '/v1/intents', { key: ro.secret, body: { value: 'nope' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect((await call(srv, 'POST', '/v1/dictionary-categories/reorder', { key: ro.secret, body: { ids: [UNKNOWN] } })).status).toBe(403);
  });
});

describe('flow references (the bots, called directly)', () => {
  it('usage sums and orders the bots that reference a token; a rewrite reaches their draft and published flows', async () => {
    const org = await srv.newOrg('Flow references org');
    const k = org.apiKey.secret;
    const i = await intent('flow_intent', {}, k);
    const v = await variable({ name: 'flow_var', type: 'text' }, k);
    const flow = {
      nodes: [
        { id: 'start', type: 'START' },
        {
          id: 'm',
          type: 'MESSAGE',
          content: { type: 'text', text: 'Hi {{flow_var}}' },
          buttons: [{ type: 'reply', text: 'Go', intent: 'flow_intent' }],
        },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { id: 'e1', source: 'start', target: 'm' },
        { id: 'e2', source: 'm', target: 'end', intent: 'flow_intent' },
      ],
    };
    const make = async (name: string) => {
      const res = await call(srv, 'POST', '/v1/bots', { key: k, body: { name, channel: 'RCS', draftFlow: flow } });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    await make('Zeta bot'); // draft only
    const alpha = await make('Alpha bot');
    expect((await call(srv, 'POST', `/v1/bots/${alpha}/publish`, { key: k })).status).toBe(200);

    const usage = await call(srv, 'GET', `/v1/intents/${i.id}/usage`, { key: k });
    expect(usage.body.data).toMatchObject({ botCount: 2, draftNodeCount: 2, publishedNodeCount: 1 });
    expect(usage.body.data.bots.map((b: { name: string }) => b.name)).toEqual(['Alpha bot', 'Zeta bot']);

    const ok = await call(srv, 'POST', `/v1/intents/${i.id}/rewrite`, { key: k, body: { newValue: 'flow_intent_2' } });
    expect(ok.body).toMatchObject({ id: i.id, old: 'flow_intent', new: 'flow_intent_2', botsUpdated: 2, referencesRewritten: 6 });
    const bot = (await call(srv, 'GET', `/v1/bots/${alpha}`, { key: k })).body;
    expect(bot.publishedFlow.edges[1].intent).toBe('flow_intent_2');

    const vr = await call(srv, 'POST', `/v1/variable-definitions/${v.id}/rewrite`, { key: k, body: { newName: 'flow_var_2' } });
    expect(vr.body).toMatchObject({ kind: 'variable', botsUpdated: 2, referencesRewritten: 3 });
    const vu = await call(srv, 'GET', `/v1/variable-definitions/${v.id}/usage`, { key: k });
    expect(vu.body.data).toMatchObject({ variableId: v.id, name: 'flow_var_2', botCount: 2 });
  });
});
