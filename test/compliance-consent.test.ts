// Compliance section through HTTP: consent overrides (createComplianceOverride), per-contact TCPA settings
// (updateContactTcpa) and compliance reports (exportComplianceReport).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { evaluateCompliance } from '../src/domain/compliance/gate.ts';
import { tenantFor } from '../src/domain/tenant.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let owner: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  [owner, other] = await Promise.all([srv.newOrg('Consent org'), srv.newOrg('Consent other org')]);
});
afterAll(() => srv.close());

let seq = 0;
async function insertContact(orgId: string, values: Record<string, unknown> = {}) {
  return srv.context.db
    .insertInto('contacts')
    .values({ organization_id: orgId, phone: `+1415555${String(2000 + seq++)}`, phone_country: 'US', attributes: '{}', ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

describe('createComplianceOverride', () => {
  const override = (key: string, body: unknown) => call(srv, 'POST', '/v1/compliance/override', { key, body });

  it('creates a 24-hour override and its ConsentAuditLog entry, and the gate honours it until it expires', async () => {
    const contact = await insertContact(owner.organizationId, { consent_type: 'NONE' });
    await srv.context.db
      .insertInto('opt_outs')
      .values({ organization_id: owner.organizationId, phone: contact.phone, source: 'KEYWORD', keyword: 'STOP', opted_out_at: new Date() })
      .execute();
    const ask = async () =>
      evaluateCompliance({
        db: (await tenantFor(srv.context, owner.organizationId)).db,
        organizationId: owner.organizationId,
        contact,
        messageType: 'TRANSACTIONAL',
        content: 'Your order',
        now: new Date(),
      });
    expect((await ask()).reasons.map((r) => r.code)).toEqual(['OPTED_OUT']);

    const res = await override(owner.apiKey.secret, { contactId: contact.id, reason: 'Re-consented by phone, ticket 48213' });
    expect(res.status).toBe(200);
    const o = res.body.data;
    expect(o).toMatchObject({
      contactId: contact.id,
      type: 'CONSENT_GRANT',
      reason: 'Re-consented by phone, ticket 48213',
      actor: owner.apiKey.id,
    });
    expect(new Date(o.expiresAt).getTime() - new Date(o.createdAt).getTime()).toBe(24 * 3_600_000);

    const entry = await srv.context.db.selectFrom('consent_events').selectAll().where('id', '=', o.auditLogId).executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      organization_id: owner.organizationId,
      contact_id: contact.id,
      phone: contact.phone,
      action: 'OVERRIDE',
      source: 'OVERRIDE',
      actor: owner.apiKey.id,
      reason: 'Re-consented by phone, ticket 48213',
    });
    expect(entry.expires_at!.toISOString()).toBe(new Date(o.expiresAt).toISOString());
    expect(entry.created_at.toISOString()).toBe(new Date(o.createdAt).toISOString());

    expect((await ask()).decision).toBe('allow');
    // The stored consent and opt-out are unchanged.
    const stored = await srv.context.db
      .selectFrom('contacts')
      .select('consent_type')
      .where('id', '=', contact.id)
      .executeTakeFirstOrThrow();
    expect(stored.consent_type).toBe('NONE');

    // Expired: the gate stops applying it.
    await srv.context.db
      .updateTable('compliance_overrides')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', o.id)
      .execute();
    expect((await ask()).reasons.map((r) => r.code)).toEqual(['OPTED_OUT']);
  });

  it('answers 422 DNC_LISTED for a DNC-listed contact and creates nothing', async () => {
    const contact = await insertContact(owner.organizationId);
    expect((await call(srv, 'POST', '/v1/compliance/dnc', { key: owner.apiKey.secret, body: { phone: contact.phone } })).status).toBe(200);
    const res = await override(owner.apiKey.secret, { contactId: contact.id, reason: 'x' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('DNC_LISTED');
    const written = await srv.context.db.selectFrom('consent_events').select('id').where('contact_id', '=', contact.id).execute();
    expect(written).toEqual([]);
    const overrides = await srv.context.db.selectFrom('compliance_overrides').select('id').where('contact_id', '=', contact.id).execute();
    expect(overrides).toEqual([]);
  });

  it('answers 404 naming body.contactId for another organization’s or an unknown contact', async () => {
    const theirs = await insertContact(other.organizationId);
    for (const contactId of [theirs.id, randomUUID()]) {
      const res = await override(owner.apiKey.secret, { contactId, reason: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: [expect.objectContaining({ field: 'body.contactId' })] });
    }
  });

  it('needs compliance:update with a brand or platform admin role', async () => {
    const contact = await insertContact(owner.organizationId);
    const plain = await srv.newKey(owner.organizationId, ['compliance:update']);
    const denied = await override(plain.secret, { contactId: contact.id, reason: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('FORBIDDEN');
    for (const role of ['role:brand_admin', 'role:platform_admin']) {
      const key = await srv.newKey(owner.organizationId, ['compliance:update', role]);
      const res = await override(key.secret, { contactId: contact.id, reason: `by ${role}` });
      expect(res.status).toBe(200);
      expect(res.body.data.actor).toBe(key.id);
    }
    // Each call creates a new override.
    const count = await srv.context.db.selectFrom('compliance_overrides').select('id').where('contact_id', '=', contact.id).execute();
    expect(count).toHaveLength(2);
  });

  it('validates the body', async () => {
    const contact = await insertContact(owner.organizationId);
    const blank = await override(owner.apiKey.secret, { contactId: contact.id, reason: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.details[0].field).toBe('body.reason');
    const badType = await override(owner.apiKey.secret, { contactId: contact.id, reason: 'x', type: 'FOREVER' });
    expect(badType.status).toBe(400);
  });
});

describe('updateContactTcpa', () => {
  const patch = (id: string, body: unknown, key = owner.apiKey.secret) => call(srv, 'PATCH', `/v1/contacts/${id}/tcpa`, { key, body });

  it('updates zone, quiet hours and consent, answers the effective settings and audits the consent change', async () => {
    const contact = await insertContact(owner.organizationId);
    const res = await patch(contact.id, {
      timeZone: 'America/Chicago',
      quietHoursStart: '20:00',
      quietHoursEnd: '09:00',
      consentType: 'MARKETING',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      contactId: contact.id,
      timeZone: 'America/Chicago',
      timeZoneSource: 'explicit',
      quietHoursStart: '20:00',
      quietHoursEnd: '09:00',
      consentType: 'MARKETING',
    });
    const events = await srv.context.db.selectFrom('consent_events').selectAll().where('contact_id', '=', contact.id).execute();
    expect(events.map((e) => [e.action, e.source, e.consent_type, e.actor])).toEqual([
      ['CONSENT_UPDATED', 'API', 'MARKETING', owner.apiKey.id],
    ]);

    // Same consent again: no new entry. Back to an inferred zone (415 → Los Angeles).
    const back = await patch(contact.id, { timeZone: null, consentType: 'MARKETING' });
    expect(back.body.data).toMatchObject({
      timeZone: 'America/Los_Angeles',
      timeZoneSource: 'inferred',
      quietHoursStart: '20:00',
      quietHoursEnd: '09:00',
    });
    expect(await srv.context.db.selectFrom('consent_events').select('id').where('contact_id', '=', contact.id).execute()).toHaveLength(1);
  });

  it('stores the canonical spelling of a zone', async () => {
    const contact = await insertContact(owner.organizationId);
    const res = await patch(contact.id, { timeZone: 'america/chicago' });
    expect(res.body.data).toMatchObject({ timeZone: 'America/Chicago', timeZoneSource: 'explicit' });
  });

  it('answers defaults for a contact without settings, and unknown for a number without a zone', async () => {
    const contact = await insertContact(owner.organizationId, { phone: '+80012345678', phone_country: null });
    const res = await patch(contact.id, { consentType: 'TRANSACTIONAL' });
    expect(res.body.data).toMatchObject({
      timeZone: null,
      timeZoneSource: 'unknown',
      quietHoursStart: '21:00',
      quietHoursEnd: '08:00',
      consentType: 'TRANSACTIONAL',
    });
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown IANA zone', { timeZone: 'Mars/Olympus_Mons' }, 'body.timeZone'],
    ['a malformed zone', { timeZone: 'not a zone' }, 'body.timeZone'],
    ['quiet hours ending before 08:00', { quietHoursEnd: '07:30' }, 'body.quietHoursEnd'],
    ['quiet hours starting after 21:00', { quietHoursStart: '21:30' }, 'body.quietHoursStart'],
    ['quiet hours that do not cross midnight', { quietHoursStart: '10:00', quietHoursEnd: '18:00' }, 'body.quietHoursEnd'],
    ['a malformed time', { quietHoursStart: '9pm' }, 'body.quietHoursStart'],
    ['an empty body', {}, 'body'],
  ];
  for (const [name, body, field] of invalid) {
    it(`refuses ${name}`, async () => {
      const contact = await insertContact(owner.organizationId);
      const res = await patch(contact.id, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  }

  it('checks the resulting quiet hours, not only the fields sent', async () => {
    const contact = await insertContact(owner.organizationId, { quiet_hours_start: '19:00' });
    const res = await patch(contact.id, { quietHoursEnd: '19:30' });
    expect(res.status).toBe(400);
    expect(res.body.details[0].field).toBe('body.quietHoursEnd');
    const ok = await patch(contact.id, { quietHoursEnd: '10:00' });
    expect(ok.body.data).toMatchObject({ quietHoursStart: '19:00', quietHoursEnd: '10:00' });
  });

  it('answers 404 for another organization’s contact and leaves it unchanged; 403 without the scope', async () => {
    const theirs = await insertContact(other.organizationId);
    const res = await patch(theirs.id, { consentType: 'MARKETING' });
    expect(res.status).toBe(404);
    const row = await srv.context.db.selectFrom('contacts').select('consent_type').where('id', '=', theirs.id).executeTakeFirstOrThrow();
    expect(row.consent_type).toBe('NONE');
    const key = await srv.newKey(owner.organizationId, ['compliance:read']);
    expect((await patch(theirs.id, { consentType: 'MARKETING' }, key.secret)).status).toBe(403);
  });
});

describe('exportComplianceReport', () => {
  let org: Awaited<ReturnType<TestServer['newOrg']>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    org = await srv.newOrg('Reports org');
    const db = srv.context.db;
    const contactId = randomUUID(); // a deleted contact: its entries still appear
    const event = (name: string, action: string, createdAt: string, extra: Record<string, unknown> = {}) => {
      ids[name] = randomUUID();
      return {
        id: ids[name],
        organization_id: org.organizationId,
        contact_id: contactId,
        phone: '+14155550123',
        action,
        source: 'KEYWORD',
        created_at: new Date(createdAt),
        ...extra,
      };
    };
    await db
      .insertInto('consent_events')
      .values([
        event('before', 'OPT_OUT', '2025-12-31T23:59:59Z', { keyword: 'STOP', channel: 'SMS' }),
        event('optOut', 'OPT_OUT', '2026-01-10T19:44:03Z', { keyword: 'STOP', channel: 'SMS', message_id: randomUUID() }),
        event('optIn', 'OPT_IN', '2026-01-11T08:00:00Z', { keyword: 'START', channel: 'RCS' }),
        event('override', 'OVERRIDE', '2026-01-12T10:00:00Z', {
          source: 'OVERRIDE',
          reason: 'Called in, said "yes", ok',
          actor: randomUUID(),
          expires_at: new Date('2026-01-13T10:00:00Z'),
        }),
        event('lastSecond', 'OPT_OUT', '2026-01-31T23:59:59Z', { keyword: 'QUIT', channel: 'SMS' }),
        event('after', 'OPT_OUT', '2026-02-01T00:00:00Z', { keyword: 'STOP', channel: 'SMS' }),
      ])
      .execute();
    const dnc = (name: string, phone: string, createdAt: string, reason: string | null) => {
      ids[name] = randomUUID();
      return {
        id: ids[name],
        organization_id: org.organizationId,
        phone,
        source: 'API',
        reason,
        actor: org.apiKey.id,
        created_at: new Date(createdAt),
      };
    };
    await db
      .insertInto('dnc_entries')
      .values([
        dnc('dncIn', '+14155550188', '2026-01-05T09:30:00Z', 'Asked, by email\nnever again'),
        dnc('dncNull', '+14155550189', '2026-01-06T09:30:00Z', null),
        dnc('dncOut', '+14155550190', '2026-03-01T00:00:00Z', null),
      ])
      .execute();
  });

  const report = (path: string, key = org.apiKey.secret) => call(srv, 'GET', `/v1/compliance/reports/${path}`, { key });

  it('consent: every audit entry in the inclusive date range, oldest first, as a JSON attachment', async () => {
    const res = await report('consent?startDate=2026-01-01&endDate=2026-01-31');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="consent-report-2026-01-01-to-2026-01-31.json"');
    expect(res.body.map((r: { id: string }) => r.id)).toEqual([ids.optOut, ids.optIn, ids.override, ids.lastSecond]);
    expect(res.body[2]).toMatchObject({
      action: 'OVERRIDE',
      source: 'OVERRIDE',
      reason: 'Called in, said "yes", ok',
      expiresAt: '2026-01-13T10:00:00.000Z',
      keyword: null,
      channel: null,
    });
    expect(Object.keys(res.body[0])).toEqual([
      'id',
      'contactId',
      'phone',
      'action',
      'source',
      'consentType',
      'keyword',
      'channel',
      'messageId',
      'actor',
      'reason',
      'createdAt',
      'expiresAt',
    ]);
  });

  it('opt-outs: only OPT_OUT entries, with the opt-out columns', async () => {
    const res = await report('opt-outs?startDate=2026-01-01&endDate=2026-01-31');
    expect(res.body.map((r: { id: string }) => r.id)).toEqual([ids.optOut, ids.lastSecond]);
    expect(Object.keys(res.body[0])).toEqual(['id', 'contactId', 'phone', 'keyword', 'channel', 'messageId', 'createdAt']);
    expect(res.body[1]).toMatchObject({ keyword: 'QUIT', channel: 'SMS', messageId: null });
  });

  it('dnc as CSV: header row, same columns, escaped fields, empty cells for null', async () => {
    const res = await report('dnc?startDate=2026-01-01&endDate=2026-01-31&format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="dnc-report-2026-01-01-to-2026-01-31.csv"');
    expect(res.text.split('\r\n')[0]).toBe('id,phone,reason,source,actor,createdAt');
    const rows = parse(res.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toEqual([
      {
        id: ids.dncIn,
        phone: '+14155550188',
        reason: 'Asked, by email\nnever again',
        source: 'API',
        actor: org.apiKey.id,
        createdAt: '2026-01-05T09:30:00.000Z',
      },
      { id: ids.dncNull, phone: '+14155550189', reason: '', source: 'API', actor: org.apiKey.id, createdAt: '2026-01-06T09:30:00.000Z' },
    ]);
  });

  it('consent as CSV matches the JSON rows', async () => {
    const json = (await report('consent?startDate=2026-01-01&endDate=2026-01-31')).body as Array<Record<string, string | null>>;
    const csv = parse((await report('consent?startDate=2026-01-01&endDate=2026-01-31&format=csv')).text, { columns: true }) as Array<
      Record<string, string>
    >;
    expect(csv).toEqual(json.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v ?? '']))));
  });

  it('defaults to the last 30 days', async () => {
    const res = await report('dnc');
    expect(res.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const start = new Date(Date.parse(`${today}T00:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="dnc-report-${start}-to-${today}.json"`);
    expect(res.body).toEqual([]);
  });

  it('answers 404 NOT_FOUND for an unknown report type', async () => {
    const res = await report('messages?startDate=2026-01-01&endDate=2026-01-31');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  const badRanges: Array<[string, string]> = [
    ['start after end', 'startDate=2026-02-01&endDate=2026-01-31'],
    ['longer than 366 days', 'startDate=2025-01-01&endDate=2026-01-02'],
    ['not a date', 'startDate=yesterday'],
    ['unknown format', 'format=xml'],
  ];
  for (const [name, q] of badRanges) {
    it(`answers 400 for ${name}`, async () => {
      const res = await report(`consent?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details[0].field).toMatch(/^query\./);
    });
  }

  it('shows only the caller’s organization', async () => {
    for (const type of ['consent', 'opt-outs', 'dnc']) {
      const res = await report(`${type}?startDate=2026-01-01&endDate=2026-01-31`, other.apiKey.secret);
      expect(res.body).toEqual([]);
    }
  });
});
