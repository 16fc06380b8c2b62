// Compliance section through HTTP: content rules (list with filters, create, update, delete) and keyword rules
// (merged list, global rules immutable, organization CRUD).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  [owner, other] = await Promise.all([srv.newOrg('Rules org'), srv.newOrg('Rules other org')]);
});
afterAll(() => srv.close());

const CANNABIS = {
  name: 'No cannabis promotions',
  pattern: '\\b(cbd|thc|cannabis)\\b',
  patternType: 'regex',
  action: 'block',
  messageTypes: ['MARKETING'],
};
const PAYDAY = { name: 'Review payday wording', pattern: 'payday loan', patternType: 'keyword', action: 'flag' };

describe('content rules', () => {
  it('creates with defaults, lists newest first with filters, updates and deletes', async () => {
    const org = await srv.newOrg('Content CRUD org');
    const key = org.apiKey.secret;
    const a = await call(srv, 'POST', '/v1/content-rules', { key, body: CANNABIS });
    expect(a.status).toBe(201);
    expect(a.body.data).toMatchObject({ ...CANNABIS, caseSensitive: false, enabled: true, id: expect.any(String) });
    const b = await call(srv, 'POST', '/v1/content-rules', { key, body: PAYDAY });
    expect(b.body.data).toMatchObject({
      ...PAYDAY,
      caseSensitive: false,
      enabled: true,
      messageTypes: ['MARKETING', 'TRANSACTIONAL', 'SERVICE'],
    });

    const list = async (q = '') => (await call(srv, 'GET', `/v1/content-rules${q}`, { key })).body;
    const names = async (q = '') => (await list(q)).data.map((r: { name: string }) => r.name);
    expect(await names()).toEqual([PAYDAY.name, CANNABIS.name]);
    expect(await names('?action=block')).toEqual([CANNABIS.name]);
    expect(await names('?patternType=keyword')).toEqual([PAYDAY.name]);
    expect(await names('?search=CANNABIS')).toEqual([CANNABIS.name]); // pattern, case-insensitive
    expect(await names('?search=review')).toEqual([PAYDAY.name]); // name
    expect(await names('?search=%25')).toEqual([]); // a literal %, not a wildcard
    expect(await names('?action=flag&patternType=regex')).toEqual([]);
    expect((await list('?limit=1')).pagination).toEqual({ page: 1, limit: 1, total: 2, hasMore: true });
    const bad = await call(srv, 'GET', '/v1/content-rules?action=delete', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('query.action');

    const upd = await call(srv, 'PATCH', `/v1/content-rules/${a.body.data.id}`, { key, body: { action: 'flag', enabled: false } });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ ...CANNABIS, action: 'flag', enabled: false });
    expect(new Date(upd.body.data.updatedAt) >= new Date(a.body.data.updatedAt)).toBe(true);

    const del = await call(srv, 'DELETE', `/v1/content-rules/${a.body.data.id}`, { key });
    expect(del.body).toEqual({ success: true, id: a.body.data.id });
    expect((await call(srv, 'DELETE', `/v1/content-rules/${a.body.data.id}`, { key })).status).toBe(404);
    expect(await names()).toEqual([PAYDAY.name]);
  });

  // Regexes run on RE2 (linear time): what it cannot run — backreferences, lookaround, syntax errors, programs
  // that expand too much — is refused when saved.
  const refused = ['(\\w+)\\1', '(?<q>a)\\k<q>', '(?=free)\\w+', '(?<!\\d)\\d{10}', '(unclosed', '\\p{L}{100}', '.{1000}'];
  for (const pattern of refused) {
    it(`refuses the regex ${pattern} with UNSAFE_REGEX`, async () => {
      const res = await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: { ...CANNABIS, pattern } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'UNSAFE_REGEX', details: [{ field: 'body.pattern', message: expect.any(String) }] });
    });
  }

  // Shapes that backtrack catastrophically or polynomially in V8 are harmless on RE2.
  const nowSafe = ['(a+)+$', '(a|a)*', '(.*a){20}', '([a-z]+)*@', '(.*)*x', '\\w*\\w*\\w*y'];
  for (const pattern of nowSafe) {
    it(`accepts the regex ${pattern}`, async () => {
      const org = await srv.newOrg(`Now safe ${pattern}`);
      const res = await call(srv, 'POST', '/v1/content-rules', { key: org.apiKey.secret, body: { ...CANNABIS, pattern } });
      expect(res.status).toBe(201);
      expect(res.body.data.pattern).toBe(pattern);
    });
  }

  it('matches polynomial patterns against a 1,600-character message correctly in a preview', async () => {
    const org = await srv.newOrg('Polynomial rules org');
    const key = org.apiKey.secret;
    const rules = [
      { name: 'star', pattern: '(.*)*x' },
      { name: 'words', pattern: '\\w*\\w*\\w*y' },
    ];
    for (const r of rules) {
      const res = await call(srv, 'POST', '/v1/content-rules', {
        key,
        body: { ...r, patternType: 'regex', action: 'block', messageTypes: ['TRANSACTIONAL'] },
      });
      expect(res.status).toBe(201);
    }
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550121' } });
    expect(contact.status).toBe(201);
    const preview = async (text: string) => {
      const res = await call(srv, 'POST', '/v1/messages/preview', {
        key,
        body: { contactId: contact.body.id, messageType: 'TRANSACTIONAL', channelType: 'SMS', content: { type: 'text', text } },
      });
      expect(res.status).toBe(200);
      return res.body.data.warnings
        .filter((w: { code: string }) => w.code === 'CONTENT_BLOCKED')
        .map((w: { message: string }) => w.message)
        .sort();
    };
    expect(await preview('a'.repeat(1600))).toEqual([]);
    expect(await preview(`${'a'.repeat(1599)}y`)).toEqual(['Content rule "words" matched.']);
    expect(await preview(`${'a'.repeat(1599)}x`)).toEqual(['Content rule "star" matched.']);
    expect(await preview(`${' '.repeat(1598)}xy`)).toEqual(['Content rule "star" matched.', 'Content rule "words" matched.']);
  });

  it('re-checks a pattern when the pattern or its type changes', async () => {
    const kw = (await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: { ...PAYDAY, pattern: '(?<=a)b' } })).body
      .data;
    expect(kw.pattern).toBe('(?<=a)b'); // literal text for a keyword rule
    const toRegex = await call(srv, 'PATCH', `/v1/content-rules/${kw.id}`, { key: owner.apiKey.secret, body: { patternType: 'regex' } });
    expect(toRegex.status).toBe(400);
    expect(toRegex.body.code).toBe('UNSAFE_REGEX');

    const re = (await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: CANNABIS })).body.data;
    const badPattern = await call(srv, 'PATCH', `/v1/content-rules/${re.id}`, { key: owner.apiKey.secret, body: { pattern: '(x)\\1' } });
    expect(badPattern.status).toBe(400);
    expect(badPattern.body.details[0].field).toBe('body.pattern');
    const unchanged = await call(srv, 'GET', '/v1/content-rules?patternType=regex', { key: owner.apiKey.secret });
    expect(unchanged.body.data.find((r: { id: string }) => r.id === re.id).pattern).toBe(CANNABIS.pattern);
    const ok = await call(srv, 'PATCH', `/v1/content-rules/${re.id}`, { key: owner.apiKey.secret, body: { pattern: '\\bkratom\\b' } });
    expect(ok.body.data.pattern).toBe('\\bkratom\\b');
  });

  it('validates bodies: required fields, an empty update, unknown message types', async () => {
    const missing = await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: { name: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['body.pattern', 'body.patternType', 'body.action']),
    );
    const rule = (await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: PAYDAY })).body.data;
    expect((await call(srv, 'PATCH', `/v1/content-rules/${rule.id}`, { key: owner.apiKey.secret, body: {} })).status).toBe(400);
    expect(
      (await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: { ...PAYDAY, messageTypes: ['SPAM'] } })).status,
    ).toBe(400);
  });

  it('allows at most 200 rules per organization (422)', async () => {
    const org = await srv.newOrg('Content limit org');
    await srv.context.db
      .insertInto('content_rules')
      .values(
        Array.from({ length: 199 }, (_, i) => ({
          organization_id: org.organizationId,
          name: `rule ${i}`,
          pattern: `word${i}`,
          pattern_type: 'keyword',
          action: 'flag',
          case_sensitive: false,
          message_types: ['MARKETING'],
          enabled: true,
        })),
      )
      .execute();
    expect((await call(srv, 'POST', '/v1/content-rules', { key: org.apiKey.secret, body: PAYDAY })).status).toBe(201);
    const over = await call(srv, 'POST', '/v1/content-rules', { key: org.apiKey.secret, body: PAYDAY });
    expect(over.status).toBe(422);
    expect(over.body.code).toBe('UNPROCESSABLE');
  });

  it('keeps tenants apart: another organization’s rule answers 404 and is not listed', async () => {
    const rule = (await call(srv, 'POST', '/v1/content-rules', { key: owner.apiKey.secret, body: PAYDAY })).body.data;
    expect((await call(srv, 'PATCH', `/v1/content-rules/${rule.id}`, { key: other.apiKey.secret, body: { enabled: false } })).status).toBe(
      404,
    );
    expect((await call(srv, 'DELETE', `/v1/content-rules/${rule.id}`, { key: other.apiKey.secret })).status).toBe(404);
    const theirs = await call(srv, 'GET', '/v1/content-rules', { key: other.apiKey.secret });
    expect(theirs.body.data).toEqual([]);
    const mine = await call(srv, 'GET', '/v1/content-rules', { key: owner.apiKey.secret });
    expect(mine.body.data.find((r: { id: string }) => r.id === rule.id).enabled).toBe(true);
  });
});

const STOP_ID = '00000000-0000-4000-8000-000000000001';
const HELP_ID = '00000000-0000-4000-8000-00000000000a';

describe('keyword rules', () => {
  it('lists the 11 global rules for an organization without rules, sorted by keyword', async () => {
    const org = await srv.newOrg('Keyword globals org');
    const res = await call(srv, 'GET', '/v1/keyword-rules', { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 11, total: 11, hasMore: false }); // whole by default (issue 37 item 6)
    expect(res.body.data.map((r: { keyword: string }) => r.keyword)).toEqual([
      'CANCEL',
      'END',
      'HELP',
      'INFO',
      'QUIT',
      'START',
      'STOP',
      'STOPALL',
      'UNSTOP',
      'UNSUBSCRIBE',
      'YES',
    ]);
    const stop = res.body.data.find((r: { keyword: string }) => r.keyword === 'STOP');
    expect(stop).toEqual({
      id: STOP_ID,
      keyword: 'STOP',
      action: 'OPT_OUT',
      replyText: 'You are unsubscribed and will receive no more messages. Reply START to resubscribe.',
      scope: 'global',
      editable: false,
      overrides: null,
      overriddenBy: null,
      createdAt: null,
      updatedAt: null,
    });
    const help = res.body.data.find((r: { id: string }) => r.id === HELP_ID);
    expect(help).toMatchObject({
      keyword: 'HELP',
      action: 'HELP',
      replyText: 'Msg&data rates may apply. Reply STOP to unsubscribe, START to resubscribe.',
    });
    expect(res.body.data.find((r: { keyword: string }) => r.keyword === 'YES')).toMatchObject({
      id: '00000000-0000-4000-8000-000000000009',
      action: 'OPT_IN',
      replyText: 'You are subscribed again. Reply STOP to unsubscribe.',
    });
  });

  it('merges organization rules and overrides: a global rule comes before the rule overriding it', async () => {
    const org = await srv.newOrg('Keyword merge org');
    const key = org.apiKey.secret;
    const promo = await call(srv, 'POST', '/v1/keyword-rules', {
      key,
      body: { keyword: 'promo', action: 'AUTO_REPLY', replyText: '20% off: FALL20' },
    });
    expect(promo.status).toBe(201);
    expect(promo.body.data).toMatchObject({
      keyword: 'PROMO',
      action: 'AUTO_REPLY',
      replyText: '20% off: FALL20',
      scope: 'organization',
      editable: true,
      overrides: null,
      overriddenBy: null,
      createdAt: expect.any(String),
    });
    const stop = await call(srv, 'POST', '/v1/keyword-rules', {
      key,
      body: { keyword: 'Stop', action: 'OPT_OUT', replyText: 'Acme: bye.' },
    });
    expect(stop.body.data).toMatchObject({ keyword: 'STOP', overrides: STOP_ID, replyText: 'Acme: bye.' });
    const yes = await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'yes', action: 'HELP' } });
    expect(yes.body.data).toMatchObject({
      keyword: 'YES',
      action: 'HELP',
      replyText: 'Msg&data rates may apply. Reply STOP to unsubscribe, START to resubscribe.',
    });

    const list = (await call(srv, 'GET', '/v1/keyword-rules', { key })).body.data as Array<{
      keyword: string;
      scope: string;
      id: string;
      overriddenBy: string | null;
    }>;
    expect(list.map((r) => `${r.keyword}:${r.scope}`)).toEqual([
      'CANCEL:global',
      'END:global',
      'HELP:global',
      'INFO:global',
      'PROMO:organization',
      'QUIT:global',
      'START:global',
      'STOP:global',
      'STOP:organization',
      'STOPALL:global',
      'UNSTOP:global',
      'UNSUBSCRIBE:global',
      'YES:global',
      'YES:organization',
    ]);
    expect(list.find((r) => r.id === STOP_ID)!.overriddenBy).toBe(stop.body.data.id);

    // Deleting the override makes the global rule apply again.
    expect((await call(srv, 'DELETE', `/v1/keyword-rules/${stop.body.data.id}`, { key })).body).toEqual({
      success: true,
      id: stop.body.data.id,
    });
    const after = (await call(srv, 'GET', '/v1/keyword-rules', { key })).body.data as Array<{ id: string; overriddenBy: string | null }>;
    expect(after.find((r) => r.id === STOP_ID)!.overriddenBy).toBeNull();
    expect((await call(srv, 'DELETE', `/v1/keyword-rules/${stop.body.data.id}`, { key })).status).toBe(404);
  });

  it('refuses to edit or delete a global rule (403 GLOBAL_RULE_IMMUTABLE)', async () => {
    const patch = await call(srv, 'PATCH', `/v1/keyword-rules/${STOP_ID}`, { key: owner.apiKey.secret, body: { replyText: 'x' } });
    expect(patch.status).toBe(403);
    expect(patch.body.code).toBe('GLOBAL_RULE_IMMUTABLE');
    const del = await call(srv, 'DELETE', `/v1/keyword-rules/${HELP_ID}`, { key: owner.apiKey.secret });
    expect(del.status).toBe(403);
    expect(del.body.code).toBe('GLOBAL_RULE_IMMUTABLE');
  });

  it('keeps STOP-class overrides opting out and AUTO_REPLY with a text', async () => {
    const org = await srv.newOrg('Keyword rules validation org');
    const key = org.apiKey.secret;
    const stopAsHelp = await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'UNSUBSCRIBE', action: 'HELP' } });
    expect(stopAsHelp.status).toBe(400);
    expect(stopAsHelp.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'body.action' })] });
    const noText = await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'DEALS', action: 'AUTO_REPLY' } });
    expect(noText.status).toBe(400);
    expect(noText.body.details[0].field).toBe('body.replyText');
    const badKeyword = await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'two  spaces', action: 'HELP' } });
    expect(badKeyword.status).toBe(400);
    expect(badKeyword.body.details[0].field).toBe('body.keyword');

    const quit = (await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'quit', action: 'OPT_OUT' } })).body.data;
    expect(quit.replyText).toBe('You are unsubscribed and will receive no more messages. Reply START to resubscribe.');
    const quitToOptIn = await call(srv, 'PATCH', `/v1/keyword-rules/${quit.id}`, { key, body: { action: 'OPT_IN' } });
    expect(quitToOptIn.status).toBe(400);
    expect(quitToOptIn.body.details[0].field).toBe('body.action');
    const quitText = await call(srv, 'PATCH', `/v1/keyword-rules/${quit.id}`, { key, body: { replyText: 'Acme: stopped.' } });
    expect(quitText.body.data).toMatchObject({
      action: 'OPT_OUT',
      replyText: 'Acme: stopped.',
      overrides: '00000000-0000-4000-8000-000000000006',
    });

    const help = (await call(srv, 'POST', '/v1/keyword-rules', { key, body: { keyword: 'MENU', action: 'HELP', replyText: null } })).body
      .data;
    expect(help.replyText).toBe('Msg&data rates may apply. Reply STOP to unsubscribe, START to resubscribe.');
    const toAuto = await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, { key, body: { action: 'AUTO_REPLY', replyText: null } });
    expect(toAuto.status).toBe(400);
    expect(toAuto.body.details[0].field).toBe('body.replyText');
    const auto = await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, {
      key,
      body: { action: 'AUTO_REPLY', replyText: 'Menu: pizza.' },
    });
    expect(auto.body.data).toMatchObject({ action: 'AUTO_REPLY', replyText: 'Menu: pizza.' });
    // Back to an action with a default text: the custom text stays; null asks for the default.
    const back = await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, { key, body: { action: 'OPT_IN' } });
    expect(back.body.data).toMatchObject({ action: 'OPT_IN', replyText: 'Menu: pizza.' });
    const def = await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, { key, body: { replyText: null } });
    expect(def.body.data.replyText).toBe('You are subscribed again. Reply STOP to unsubscribe.');
    expect((await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, { key, body: {} })).status).toBe(400);
    expect((await call(srv, 'PATCH', `/v1/keyword-rules/${help.id}`, { key, body: { keyword: 'OTHER' } })).status).toBe(400);
  });

  it('answers 409 ALREADY_EXISTS for a keyword the organization already has, whatever its case', async () => {
    const org = await srv.newOrg('Keyword duplicate org');
    expect(
      (await call(srv, 'POST', '/v1/keyword-rules', { key: org.apiKey.secret, body: { keyword: 'JOIN', action: 'OPT_IN' } })).status,
    ).toBe(201);
    const dup = await call(srv, 'POST', '/v1/keyword-rules', { key: org.apiKey.secret, body: { keyword: 'join', action: 'HELP' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    // Another organization may use the same keyword.
    const org2 = await srv.newOrg('Keyword duplicate org 2');
    expect(
      (await call(srv, 'POST', '/v1/keyword-rules', { key: org2.apiKey.secret, body: { keyword: 'JOIN', action: 'OPT_IN' } })).status,
    ).toBe(201);
  });

  it('allows at most 100 rules per organization (422)', async () => {
    const org = await srv.newOrg('Keyword limit org');
    await srv.context.db
      .insertInto('keyword_rules')
      .values(
        Array.from({ length: 99 }, (_, i) => ({ organization_id: org.organizationId, keyword: `K${i}`, action: 'HELP', reply_text: 'x' })),
      )
      .execute();
    expect(
      (await call(srv, 'POST', '/v1/keyword-rules', { key: org.apiKey.secret, body: { keyword: 'LAST', action: 'HELP' } })).status,
    ).toBe(201);
    const over = await call(srv, 'POST', '/v1/keyword-rules', { key: org.apiKey.secret, body: { keyword: 'ONEMORE', action: 'HELP' } });
    expect(over.status).toBe(422);
    expect(over.body.code).toBe('UNPROCESSABLE');
  });

  it('keeps tenants apart: another organization’s rule answers 404 and is not listed', async () => {
    const rule = (
      await call(srv, 'POST', '/v1/keyword-rules', { key: owner.apiKey.secret, body: { keyword: 'OWNERONLY', action: 'HELP' } })
    ).body.data;
    expect((await call(srv, 'PATCH', `/v1/keyword-rules/${rule.id}`, { key: other.apiKey.secret, body: { replyText: 'x' } })).status).toBe(
      404,
    );
    expect((await call(srv, 'DELETE', `/v1/keyword-rules/${rule.id}`, { key: other.apiKey.secret })).status).toBe(404);
    const theirs = (await call(srv, 'GET', '/v1/keyword-rules', { key: other.apiKey.secret })).body.data;
    expect(theirs.map((r: { keyword: string }) => r.keyword)).not.toContain('OWNERONLY');
  });

  it('needs the compliance scopes', async () => {
    const key = await srv.newKey(owner.organizationId, ['compliance:read']);
    expect((await call(srv, 'GET', '/v1/keyword-rules', { key: key.secret })).status).toBe(200);
    expect((await call(srv, 'POST', '/v1/keyword-rules', { key: key.secret, body: { keyword: 'X', action: 'HELP' } })).status).toBe(403);
    expect((await call(srv, 'POST', '/v1/content-rules', { key: key.secret, body: PAYDAY })).status).toBe(403);
  });
});
