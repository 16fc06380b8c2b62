// The compliance gate, tested directly against the real database with fixed clocks and time zones.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateCompliance, type ComplianceDecision, type MessageType } from '../src/domain/compliance/gate.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let orgA: string; // consent, DNC, opt-out and quiet-hours cases (no content rules)
let orgB: string; // content rules
let orgC: string; // another tenant listing the same phones

beforeAll(async () => {
  srv = await startTestServer();
  const orgs = await Promise.all(['Gate A', 'Gate B', 'Gate C'].map(async (n) => (await srv.newOrg(n)).organizationId));
  [orgA, orgB, orgC] = orgs as [string, string, string];
});
afterAll(() => srv.close());

// Fixed clocks. New York is UTC-4 in June: 18:00Z = 14:00 local (day), 03:00Z = 23:00 local (night).
const DAY = new Date('2026-06-10T18:00:00Z');
const NIGHT = new Date('2026-06-11T03:00:00Z');
const NY_MORNING = '2026-06-11T12:00:00.000Z';

type Setup = {
  phone?: string;
  timeZone?: string | null;
  quiet?: [string, string];
  consent?: 'NONE' | 'TRANSACTIONAL' | 'MARKETING';
  dnc?: boolean;
  optedOut?: boolean;
  /** Override expiry relative to the evaluation time, in hours (negative: already expired). */
  overrideHours?: number;
  /** DNC and opt-out of the same phone in another organization. */
  otherOrgBlocks?: boolean;
};

let phoneSeq = 0;
const nextPhone = () => `+1212555${String(1000 + phoneSeq++).slice(-4)}`;

async function contactFor(org: string, s: Setup, now: Date) {
  const db = srv.context.db;
  const phone = s.phone ?? nextPhone();
  const contact = await db
    .insertInto('contacts')
    .values({
      organization_id: org,
      phone,
      phone_country: 'US',
      attributes: '{}',
      time_zone: s.timeZone === undefined ? 'America/New_York' : s.timeZone,
      quiet_hours_start: s.quiet?.[0] ?? null,
      quiet_hours_end: s.quiet?.[1] ?? null,
      consent_type: s.consent ?? 'MARKETING',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (s.dnc) await db.insertInto('dnc_entries').values({ organization_id: org, phone, source: 'API' }).execute();
  if (s.optedOut)
    await db
      .insertInto('opt_outs')
      .values({ organization_id: org, phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: now })
      .execute();
  if (s.otherOrgBlocks) {
    await db.insertInto('dnc_entries').values({ organization_id: orgC, phone, source: 'API' }).execute();
    await db
      .insertInto('opt_outs')
      .values({ organization_id: orgC, phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: now })
      .execute();
  }
  if (s.overrideHours !== undefined) {
    const expires = new Date(now.getTime() + s.overrideHours * 3_600_000);
    await db
      .insertInto('compliance_overrides')
      .values({
        organization_id: org,
        contact_id: contact.id,
        type: 'CONSENT_GRANT',
        reason: 'test',
        actor: randomUUID(),
        audit_log_id: randomUUID(),
        created_at: new Date(expires.getTime() - 86_400_000),
        expires_at: expires,
      })
      .execute();
  }
  return contact;
}

const summary = (d: ComplianceDecision) => ({
  decision: d.decision,
  codes: d.reasons.map((r) => r.code).sort(),
  until: d.decision === 'hold' ? d.until.toISOString() : null,
});

describe('evaluateCompliance: consent, DNC, opt-out, overrides, quiet hours', () => {
  // [name, setup, message type, now, expected decision, expected reason codes (sorted), expected hold-until]
  const cases: Array<[string, Setup, MessageType, Date, ComplianceDecision['decision'], string[], string | null]> = [
    ['transactional, no consent needed', { consent: 'NONE' }, 'TRANSACTIONAL', DAY, 'allow', [], null],
    ['service, no consent needed', { consent: 'NONE' }, 'SERVICE', NIGHT, 'allow', [], null],
    ['marketing with marketing consent by day', {}, 'MARKETING', DAY, 'allow', [], null],
    ['marketing without consent', { consent: 'NONE' }, 'MARKETING', DAY, 'block', ['NO_CONSENT'], null],
    ['marketing with transactional consent only', { consent: 'TRANSACTIONAL' }, 'MARKETING', DAY, 'block', ['NO_CONSENT'], null],
    ['DNC blocks every type', { dnc: true }, 'TRANSACTIONAL', DAY, 'block', ['DNC_LISTED'], null],
    ['DNC is not lifted by an override', { dnc: true, overrideHours: 5 }, 'SERVICE', DAY, 'block', ['DNC_LISTED'], null],
    ['opt-out blocks every type', { optedOut: true }, 'TRANSACTIONAL', DAY, 'block', ['OPTED_OUT'], null],
    ['active override lifts an opt-out', { optedOut: true, overrideHours: 5 }, 'TRANSACTIONAL', DAY, 'allow', [], null],
    ['active override grants marketing consent', { consent: 'NONE', overrideHours: 1 }, 'MARKETING', DAY, 'allow', [], null],
    [
      'expired override no longer applies',
      { consent: 'NONE', optedOut: true, overrideHours: -1 },
      'MARKETING',
      DAY,
      'block',
      ['NO_CONSENT', 'OPTED_OUT'],
      null,
    ],
    [
      'override expiring exactly now no longer applies',
      { consent: 'NONE', overrideHours: 0 },
      'MARKETING',
      DAY,
      'block',
      ['NO_CONSENT'],
      null,
    ],
    ['override does not lift quiet hours', { consent: 'NONE', overrideHours: 5 }, 'MARKETING', NIGHT, 'hold', ['QUIET_HOURS'], NY_MORNING],
    ['marketing at night is held until 08:00 local', {}, 'MARKETING', NIGHT, 'hold', ['QUIET_HOURS'], NY_MORNING],
    ['transactional at night goes', {}, 'TRANSACTIONAL', NIGHT, 'allow', [], null],
    ['block beats hold, both reported', { consent: 'NONE' }, 'MARKETING', NIGHT, 'block', ['NO_CONSENT', 'QUIET_HOURS'], null],
    [
      'every reason reported',
      { consent: 'NONE', dnc: true, optedOut: true },
      'MARKETING',
      NIGHT,
      'block',
      ['DNC_LISTED', 'NO_CONSENT', 'OPTED_OUT', 'QUIET_HOURS'],
      null,
    ],
    [
      'widened quiet hours hold earlier and longer',
      { quiet: ['20:00', '09:00'] },
      'MARKETING',
      new Date('2026-06-11T00:30:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-06-11T13:00:00.000Z',
    ],
    [
      'widened quiet hours: 19:59 local still goes',
      { quiet: ['20:00', '09:00'] },
      'MARKETING',
      new Date('2026-06-10T23:59:00Z'),
      'allow',
      [],
      null,
    ],
    [
      'explicit zone wins over the number',
      { phone: '+14155550100', timeZone: 'Europe/Paris' },
      'MARKETING',
      new Date('2026-06-10T20:00:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-06-11T06:00:00.000Z',
    ],
    [
      'inferred zone from the area code (415 → Los Angeles)',
      { phone: '+14155550101', timeZone: null },
      'MARKETING',
      new Date('2026-06-11T05:00:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-06-11T15:00:00.000Z',
    ],
    ['inferred zone, daytime there', { phone: '+14155550102', timeZone: null }, 'MARKETING', DAY, 'allow', [], null],
    [
      'no zone at all (+800): quiet hours in UTC',
      { phone: '+80012345678', timeZone: null },
      'MARKETING',
      new Date('2026-06-10T22:00:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-06-11T08:00:00.000Z',
    ],
    [
      'DST spring forward: held until 08:00 EDT',
      {},
      'MARKETING',
      new Date('2026-03-08T03:00:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-03-08T12:00:00.000Z',
    ],
    [
      'DST fall back: held until 08:00 EST',
      {},
      'MARKETING',
      new Date('2026-11-01T04:00:00Z'),
      'hold',
      ['QUIET_HOURS'],
      '2026-11-01T13:00:00.000Z',
    ],
    ['after midnight local', {}, 'MARKETING', new Date('2026-06-11T07:59:00Z'), 'hold', ['QUIET_HOURS'], NY_MORNING],
    ['another organization’s DNC and opt-out do not apply', { otherOrgBlocks: true }, 'MARKETING', DAY, 'allow', [], null],
  ];
  for (const [name, setup, messageType, now, decision, codes, until] of cases) {
    it(name, async () => {
      const contact = await contactFor(orgA, setup, now);
      const d = await evaluateCompliance({
        db: (await tenantFor(srv.context, orgA)).db,
        organizationId: orgA,
        contact,
        messageType,
        content: 'Hello',
        now,
      });
      expect(summary(d)).toEqual({ decision, codes, until });
    });
  }
});

describe('evaluateCompliance: content rules', () => {
  beforeAll(async () => {
    const rule = (name: string, pattern: string, patternType: string, action: string, extra: Record<string, unknown> = {}) => ({
      organization_id: orgB,
      name,
      pattern,
      pattern_type: patternType,
      action,
      case_sensitive: false,
      message_types: ['MARKETING', 'TRANSACTIONAL', 'SERVICE'],
      enabled: true,
      ...extra,
    });
    await srv.context.db
      .insertInto('content_rules')
      .values([
        rule('No cannabis', '\\b(cbd|thc)\\b', 'regex', 'block', { message_types: ['MARKETING'] }),
        rule('Payday wording', 'payday loan', 'keyword', 'flag'),
        rule('Disabled', 'hello', 'keyword', 'block', { enabled: false }),
        rule('Gambling', 'casino', 'keyword', 'block'),
      ])
      .execute();
    // The same words are harmless in another organization.
    await srv.context.db
      .insertInto('content_rules')
      .values({ ...rule('Other org', 'harmless', 'keyword', 'block'), organization_id: orgC })
      .execute();
  });

  // [name, message type, text, now, decision, codes, until, matched rule names]
  const cases: Array<[string, MessageType, string, Date, ComplianceDecision['decision'], string[], string | null, string[]]> = [
    ['clean text', 'MARKETING', 'hello there, harmless text', DAY, 'allow', [], null, []],
    ['blocking regex', 'MARKETING', 'Fresh CBD oil', DAY, 'block', ['CONTENT_BLOCKED'], null, ['No cannabis']],
    ['rule limited to MARKETING does not apply to TRANSACTIONAL', 'TRANSACTIONAL', 'Your CBD order shipped', DAY, 'allow', [], null, []],
    [
      'flagging keyword: allowed, reported',
      'TRANSACTIONAL',
      'About your Payday  Loan',
      DAY,
      'allow',
      ['CONTENT_FLAGGED'],
      null,
      ['Payday wording'],
    ],
    [
      'flag and block together',
      'MARKETING',
      'payday loan at the casino',
      DAY,
      'block',
      ['CONTENT_BLOCKED', 'CONTENT_FLAGGED'],
      null,
      ['Gambling', 'Payday wording'],
    ],
    [
      'flag with quiet hours: held, flag reported',
      'MARKETING',
      'payday loan offer',
      NIGHT,
      'hold',
      ['CONTENT_FLAGGED', 'QUIET_HOURS'],
      NY_MORNING,
      ['Payday wording'],
    ],
    ['keyword is whole words only', 'MARKETING', 'casinos near you', DAY, 'allow', [], null, []],
  ];
  for (const [name, messageType, content, now, decision, codes, until, ruleNames] of cases) {
    it(name, async () => {
      const contact = await contactFor(orgB, {}, now);
      const d = await evaluateCompliance({
        db: (await tenantFor(srv.context, orgB)).db,
        organizationId: orgB,
        contact,
        messageType,
        content,
        now,
      });
      expect(summary(d)).toEqual({ decision, codes, until });
      expect(
        d.reasons
          .filter((r) => r.rule)
          .map((r) => r.rule!.name)
          .sort(),
      ).toEqual(ruleNames);
    });
  }

  it('a deleted or changed rule stops applying at once', async () => {
    const contact = await contactFor(orgB, {}, DAY);
    const ask = async () =>
      evaluateCompliance({
        db: (await tenantFor(srv.context, orgB)).db,
        organizationId: orgB,
        contact,
        messageType: 'SERVICE',
        content: 'casino night',
        now: DAY,
      });
    expect((await ask()).decision).toBe('block');
    await srv.context.db
      .updateTable('content_rules')
      .set({ enabled: false })
      .where('organization_id', '=', orgB)
      .where('name', '=', 'Gambling')
      .execute();
    expect((await ask()).decision).toBe('allow');
  });
});
