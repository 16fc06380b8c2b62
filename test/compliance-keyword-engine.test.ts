// The keyword engine, tested directly: what an inbound text matches, and what applying it writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyKeyword, handleInboundKeyword, matchKeyword, normalizeInboundText } from '../src/domain/compliance/keyword-engine.ts';
import { DEFAULT_REPLY_TEXT, effectiveKeywordRules, type OrgKeywordRule } from '../src/domain/compliance/keyword-rules.ts';
import { isOptedOut } from '../src/db/queries/compliance/consent.ts';
import type { TenantDb } from '../src/db/tenant.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let orgId: string;
/** The organization's tenant handle: what the inbound path passes to the keyword engine. */
let db: TenantDb;

beforeAll(async () => {
  srv = await startTestServer();
  orgId = (await srv.newOrg('Keyword engine org')).organizationId;
  db = (await tenantFor(srv.context, orgId)).db;
});
afterAll(() => srv.close());

const orgRule = (keyword: string, action: OrgKeywordRule['action'], replyText: string | null): OrgKeywordRule => ({
  id: `11111111-1111-4111-8111-${keyword.length.toString().padStart(12, '0')}`,
  keyword,
  action,
  replyText,
  createdAt: new Date(),
  updatedAt: new Date(),
});

describe('normalizeInboundText', () => {
  const cases: Array<[string, string]> = [
    ['stop', 'STOP'],
    ['  STOP  ', 'STOP'],
    ['Stop.', 'STOP'],
    ['STOP!!', 'STOP'],
    ['"stop"', 'STOP'],
    ['\tstop\n', 'STOP'],
    ['ＳＴＯＰ', 'STOP'], // full-width
    ['st\u200bop', 'STOP'], // zero-width space
    ['STOP 🛑', 'STOP'],
    ['stop   all', 'STOP ALL'],
    ['stop please', 'STOP PLEASE'],
    ['...', ''],
  ];
  for (const [input, expected] of cases)
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => expect(normalizeInboundText(input)).toBe(expected));
});

describe('matchKeyword', () => {
  const globalsOnly = effectiveKeywordRules([]);
  const withOrg = effectiveKeywordRules([
    orgRule('STOP', 'OPT_OUT', 'Acme: no more texts. Reply START to come back.'),
    orgRule('HELP', 'AUTO_REPLY', 'Call 555-0100.'),
    orgRule('PROMO', 'AUTO_REPLY', '20% off with FALL20'),
    orgRule('YES', 'HELP', DEFAULT_REPLY_TEXT.HELP),
  ]);
  // [rules, text, expected action (null = no match), expected keyword, expected reply, expected scope]
  const cases: Array<[string, ReturnType<typeof effectiveKeywordRules>, string, string | null, string?, string?, string?]> = [
    ['global STOP', globalsOnly, 'stop', 'OPT_OUT', 'STOP', DEFAULT_REPLY_TEXT.OPT_OUT, 'global'],
    ['global with punctuation', globalsOnly, ' Stop. ', 'OPT_OUT', 'STOP'],
    ['STOPALL', globalsOnly, 'stopall', 'OPT_OUT', 'STOPALL'],
    ['UNSUBSCRIBE', globalsOnly, 'Unsubscribe', 'OPT_OUT', 'UNSUBSCRIBE'],
    ['CANCEL', globalsOnly, 'cancel', 'OPT_OUT', 'CANCEL'],
    ['END', globalsOnly, 'end', 'OPT_OUT', 'END'],
    ['QUIT', globalsOnly, 'quit!', 'OPT_OUT', 'QUIT'],
    ['START', globalsOnly, 'start', 'OPT_IN', 'START', DEFAULT_REPLY_TEXT.OPT_IN],
    ['UNSTOP', globalsOnly, 'unstop', 'OPT_IN', 'UNSTOP'],
    ['YES', globalsOnly, 'Yes', 'OPT_IN', 'YES'],
    ['HELP', globalsOnly, 'help?', 'HELP', 'HELP', DEFAULT_REPLY_TEXT.HELP],
    ['INFO', globalsOnly, 'info', 'HELP', 'INFO'],
    ['not the whole message', globalsOnly, 'please stop texting me', null],
    ['misspelled', globalsOnly, 'stopp', null],
    ['spaced letters', globalsOnly, 's t o p', null],
    ['empty', globalsOnly, '   ', null],
    [
      'org override of STOP keeps OPT_OUT with its text',
      withOrg,
      'STOP',
      'OPT_OUT',
      'STOP',
      'Acme: no more texts. Reply START to come back.',
      'organization',
    ],
    ['org override of HELP', withOrg, 'help', 'AUTO_REPLY', 'HELP', 'Call 555-0100.', 'organization'],
    ['org override of YES', withOrg, 'yes', 'HELP', 'YES', DEFAULT_REPLY_TEXT.HELP, 'organization'],
    ['org keyword', withOrg, 'promo', 'AUTO_REPLY', 'PROMO', '20% off with FALL20', 'organization'],
    ['globals still apply next to org rules', withOrg, 'quit', 'OPT_OUT', 'QUIT', DEFAULT_REPLY_TEXT.OPT_OUT, 'global'],
  ];
  for (const [name, rules, text, action, keyword, reply, scope] of cases) {
    it(name, () => {
      const m = matchKeyword(rules, text);
      if (action === null) return expect(m).toBeNull();
      expect(m).toMatchObject({ action, keyword });
      if (reply !== undefined) expect(m!.replyText).toBe(reply);
      if (scope !== undefined) expect(m!.rule.scope).toBe(scope);
    });
  }
});

describe('applyKeyword', () => {
  async function contact(phone: string) {
    return srv.context.db
      .insertInto('contacts')
      .values({ organization_id: orgId, phone, phone_country: 'US', attributes: '{}' })
      .returning(['id', 'phone'])
      .executeTakeFirstOrThrow();
  }
  const events = (contactId: string) =>
    srv.context.db
      .selectFrom('consent_events')
      .selectAll()
      .where('contact_id', '=', contactId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  it('OPT_OUT opts the phone out and writes an audit entry with keyword, channel and message id; OPT_IN lifts it', async () => {
    const c = await contact('+14155550141');
    const rules = effectiveKeywordRules([]);
    const messageId = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    const out = await applyKeyword(db, { organizationId: orgId, contact: c, channel: 'SMS', messageId }, matchKeyword(rules, 'Stop.')!);
    expect(out).toMatchObject({ action: 'OPT_OUT', replyText: DEFAULT_REPLY_TEXT.OPT_OUT, consentEventId: expect.any(String) });
    expect(await isOptedOut(db, orgId, c.phone)).toBe(true);

    const back = await applyKeyword(
      db,
      { organizationId: orgId, contact: c, channel: 'RCS', messageId: null },
      matchKeyword(rules, 'start')!,
    );
    expect(back.action).toBe('OPT_IN');
    expect(await isOptedOut(db, orgId, c.phone)).toBe(false);

    const log = await events(c.id);
    expect(log.map((e) => [e.action, e.source, e.keyword, e.channel, e.message_id, e.phone])).toEqual([
      ['OPT_OUT', 'KEYWORD', 'STOP', 'SMS', messageId, c.phone],
      ['OPT_IN', 'KEYWORD', 'START', 'RCS', null, c.phone],
    ]);
    expect(log[0]!.id).toBe(out.consentEventId);
  });

  it('HELP and AUTO_REPLY only answer the reply', async () => {
    const c = await contact('+14155550142');
    const out = await applyKeyword(
      db,
      { organizationId: orgId, contact: c, channel: 'SMS', messageId: null },
      matchKeyword(effectiveKeywordRules([]), 'info')!,
    );
    expect(out).toMatchObject({ action: 'HELP', replyText: DEFAULT_REPLY_TEXT.HELP, consentEventId: null });
    expect(await events(c.id)).toEqual([]);
    expect(await isOptedOut(db, orgId, c.phone)).toBe(false);
  });

  it('handleInboundKeyword uses the organization’s rules and answers null when nothing matches', async () => {
    const c = await contact('+14155550143');
    await srv.context.db
      .insertInto('keyword_rules')
      .values({ organization_id: orgId, keyword: 'QUIT', action: 'OPT_OUT', reply_text: 'Bye from Acme.' })
      .execute();
    const inbound = { organizationId: orgId, contact: c, channel: 'SMS' as const, messageId: null };
    expect(await handleInboundKeyword(db, { ...inbound, text: 'what time do you open?' })).toBeNull();
    const out = await handleInboundKeyword(db, { ...inbound, text: ' quit ' });
    expect(out).toMatchObject({ action: 'OPT_OUT', replyText: 'Bye from Acme.', keyword: 'QUIT' });
    expect(out!.rule.scope).toBe('organization');
    expect(await isOptedOut(db, orgId, c.phone)).toBe(true);
  });

  it('rolls back the opt-out when the audit entry cannot be written', async () => {
    const c = await contact('+14155550144');
    const bad = { organizationId: orgId, contact: c, channel: 'SMS' as const, messageId: 'not-a-uuid' };
    await expect(applyKeyword(db, bad, matchKeyword(effectiveKeywordRules([]), 'stop')!)).rejects.toThrow();
    expect(await isOptedOut(db, orgId, c.phone)).toBe(false);
  });
});
