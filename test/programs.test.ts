// Programs through HTTP: how a program comes to exist (a brand registration creates it), readiness as each
// missing piece is added (brand, campaign, an attached PRIMARY sender, its protocols and activity), attach and
// detach (duplicate 409, 422 without a compatible protocol, the audit trail), billing of the sender's number
// lease starting only when the campaign is REGISTERED, list filters and paging, tenancy and scopes.
import { until } from './support/wait.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  [org, other] = await Promise.all([srv.newOrg('Programs org'), srv.newOrg('Other programs org')]);
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function sender(body: Record<string, unknown>, k = key): Promise<string> {
  const res = await call(srv, 'POST', '/v1/sender-ids', { key: k, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
}

const BRAND = {
  entityType: 'PRIVATE_PROFIT',
  displayName: 'Acme Dental',
  companyName: 'Acme Dental Group LLC',
  taxId: '12-3456789',
  email: 'compliance@acmedental.example',
  phone: '+14155550100',
  street: '500 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postalCode: '94105',
  country: 'US',
  vertical: 'HEALTHCARE',
};
const CAMPAIGN = {
  useCase: 'ACCOUNT_NOTIFICATION',
  description: 'Appointment reminders, confirmations and rescheduling notices for patients of Acme Dental clinics.',
  messageFlow: 'Patients opt in by ticking the SMS consent box on the online booking form at acmedental.example/book.',
  sampleMessages: ['Acme Dental: your appointment is tomorrow at 10:00. Reply C to confirm. STOP to opt out.'],
};

const checks = (body: any) =>
  Object.fromEntries(body.data.readiness.checks.map((c: { code: string; status: string }) => [c.code, c.status]));

describe('a program from brand registration to LIVE', () => {
  let senderId: string;
  let programId: string;
  let leaseId: string;

  beforeAll(async () => {
    senderId = await sender({ type: 'LONG_CODE', name: 'Reminders' });
    expect((await call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key })).body.data.throughputPerSecond).toBe(1); // no campaign yet
    const enabled = await call(srv, 'POST', `/v1/sender-ids/${senderId}/protocols`, { key, body: { type: 'SMS' } });
    expect(enabled.status, JSON.stringify(enabled.body)).toBeLessThan(300);
    // A purchased number waiting for its campaign (PENDING, not billed): the sender is PENDING.
    const lease = await srv.context.db
      .insertInto('sender_numbers')
      .values({
        organization_id: org.organizationId,
        sender_id: senderId,
        number: `+1415555${String(Date.now()).slice(-4)}`,
        inventory_type: 'Local',
        provider: 'PROVIDER_A',
        source: 'PURCHASED',
        status: 'PENDING',
        country_code: 'US',
        capabilities: ['SMS'],
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    leaseId = lease.id;
    await srv.context.db.updateTable('sender_ids').set({ status: 'PENDING', provider: 'PROVIDER_A' }).where('id', '=', senderId).execute();
  });

  it('no program before a brand is registered; the brand registration creates it, named after the brand', async () => {
    const before = await call(srv, 'GET', '/v1/programs', { key });
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual([]);
    expect((await call(srv, 'POST', `/v1/sender-ids/${senderId}/brand/register`, { key, body: BRAND })).status).toBe(200);
    const list = await call(srv, 'GET', '/v1/programs', { key });
    expect(list.body.data).toHaveLength(1);
    const p = list.body.data[0];
    programId = p.id;
    expect(p).toMatchObject({ name: 'Acme Dental', status: 'DRAFT', channels: ['RCS', 'SMS', 'MMS'], campaign: null });
    // The sender the brand was registered for is attached as PRIMARY at once.
    expect(p.senders).toEqual([expect.objectContaining({ senderId, role: 'PRIMARY', status: 'ACTIVE', protocols: ['SMS'] })]);
    expect(p.brand).toMatchObject({ displayName: 'Acme Dental' });
    expect(JSON.stringify(p)).not.toMatch(/PROVIDER_/);
    const status = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(status.status).toBe(200);
    expect(status.body.data).toMatchObject({ programId, status: 'DRAFT', campaignStatus: null, customerStatus: 'SETUP_REQUIRED' });
    expect(checks(status.body)).toMatchObject({ CAMPAIGN_REGISTERED: 'FAILED', PRIMARY_SENDER_ATTACHED: 'PASSED' });
    expect(status.body.data.nextAction).toMatchObject({ code: 'REGISTER_CAMPAIGN', owner: 'CUSTOMER' });
    expect(status.body.data.requiredActions.map((a: { code: string }) => a.code)).toEqual(['REGISTER_CAMPAIGN']);
  });

  it('brand REGISTERED passes its check', async () => {
    const res = await until(
      () => call(srv, 'GET', `/v1/programs/${programId}/status`, { key }),
      (r) => r.body.data.brandStatus === 'REGISTERED',
    );
    expect(checks(res.body).BRAND_REGISTERED).toBe('PASSED');
  });

  it('attaching: the brand’s sender again 409, another organization’s sender 404, no compatible protocol 422', async () => {
    const dup = await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId, role: 'FALLBACK' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    const theirs = await sender({ type: 'LONG_CODE', name: 'Theirs' }, other.apiKey.secret);
    const foreign = await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId: theirs, role: 'TEST' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.details[0].field).toBe('body.senderId');
    for (const role of ['PRIMARY', 'TEST']) {
      const sandbox = await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId: org.senderId, role } });
      expect(sandbox.status).toBe(422);
      expect(sandbox.body.details).toEqual([expect.objectContaining({ field: 'body.senderId', code: 'sandbox_sender' })]);
    }
    const bare = await sender({ type: 'LONG_CODE', name: 'No protocols' });
    const incompatible = await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId: bare, role: 'FALLBACK' } });
    expect(incompatible.status).toBe(422);
    const status = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(checks(status.body)).toMatchObject({
      PRIMARY_SENDER_ATTACHED: 'PASSED',
      SENDERS_ACTIVE: 'PENDING',
      CAMPAIGN_REGISTERED: 'FAILED',
    });
  });

  it('the campaign under review is a wait; the lease is not billed before REGISTERED', async () => {
    expect((await call(srv, 'POST', `/v1/sender-ids/${senderId}/campaign/register`, { key, body: CAMPAIGN })).status).toBe(200);
    const status = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(['PENDING', 'IN_REVIEW']).toContain(status.body.data.campaignStatus);
    expect(checks(status.body).CAMPAIGN_REGISTERED).toBe('PENDING');
    expect(status.body.data.customerStatus).toBe('IN_REVIEW');
    expect(status.body.data.nextAction).toMatchObject({ owner: 'REVIEWER', code: 'WAIT_FOR_CAMPAIGN_REVIEW' });
    const lease = await srv.context.db.selectFrom('sender_numbers').selectAll().where('id', '=', leaseId).executeTakeFirstOrThrow();
    expect(lease.billing_started_at).toBeNull();
  });

  it('campaign REGISTERED: billing starts, the attached sender becomes ACTIVE, the program is ready and ACTIVE (LIVE)', async () => {
    const res = await until(
      () => call(srv, 'GET', `/v1/programs/${programId}`, { key }),
      (r) => r.body.data.status === 'ACTIVE',
    );
    expect(res.body.data).toMatchObject({ readiness: { ready: true }, requiredActions: [], nextAction: null });
    expect(res.body.data.campaign).toMatchObject({ status: 'REGISTERED', useCase: 'ACCOUNT_NOTIFICATION' });
    const status = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(status.body.data.customerStatus).toBe('LIVE');
    const lease = await srv.context.db.selectFrom('sender_numbers').selectAll().where('id', '=', leaseId).executeTakeFirstOrThrow();
    expect(lease.billing_started_at).not.toBeNull();
    expect(lease.status).toBe('ACTIVE');
    // The 10DLC class of a registered, unvetted campaign (it was 1 msg/s before), and dispatch's limit with it.
    expect((await call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key })).body.data).toMatchObject({
      status: 'ACTIVE',
      sendReady: true,
      throughputPerSecond: 4,
    });
  });

  it('a detached PRIMARY stops sending with SENDER_NOT_READY naming the program’s next action; attached again it sends', async () => {
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550177' } });
    const send = () =>
      call(srv, 'POST', '/v1/messages/send', {
        key,
        body: {
          contactId: contact.body.id,
          senderId,
          channelType: 'SMS',
          messageType: 'TRANSACTIONAL',
          content: { type: 'text', text: 'Hi' },
        },
      });
    expect((await send()).status).toBe(200); // LIVE
    expect((await call(srv, 'DELETE', `/v1/programs/${programId}/senders/${senderId}`, { key })).status).toBe(200);
    const status = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(status.body.data.nextAction).toMatchObject({ code: 'ATTACH_PRIMARY_SENDER' });
    // Its readiness dropped: the ACTIVE program is back to DRAFT (SETUP_REQUIRED), and ACTIVE again once fixed.
    expect(status.body.data).toMatchObject({ status: 'DRAFT', customerStatus: 'SETUP_REQUIRED' });
    const refused = await send();
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({ code: 'SENDER_NOT_READY', details: [{ field: 'body.senderId', code: 'ATTACH_PRIMARY_SENDER' }] });
    expect((await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId, role: 'PRIMARY' } })).status).toBe(201);
    expect((await call(srv, 'GET', `/v1/programs/${programId}/status`, { key })).body.data).toMatchObject({
      status: 'ACTIVE',
      customerStatus: 'LIVE',
    });
    expect((await send()).status).toBe(200);
  });

  it('detach ends the attachment (kept as audit trail); detaching twice is 404; attaching again adds a row', async () => {
    const res = await call(srv, 'DELETE', `/v1/programs/${programId}/senders/${senderId}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ senderId, status: 'DETACHED' });
    expect(res.body.data.detachedAt).not.toBeNull();
    expect((await call(srv, 'DELETE', `/v1/programs/${programId}/senders/${senderId}`, { key })).status).toBe(404);
    const after = await call(srv, 'GET', `/v1/programs/${programId}/status`, { key });
    expect(after.body.data.readiness.ready).toBe(false);
    expect(after.body.data.nextAction).toMatchObject({ code: 'ATTACH_PRIMARY_SENDER' });
    // Without the program's campaign the sender is back to the unregistered class.
    expect((await call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key })).body.data.throughputPerSecond).toBe(1);
    expect((await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId, role: 'PRIMARY' } })).status).toBe(201);
    expect((await call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key })).body.data.throughputPerSecond).toBe(4);
    const p = await call(srv, 'GET', `/v1/programs/${programId}`, { key });
    expect(p.body.data.senders.map((s: { status: string }) => s.status)).toEqual(['ACTIVE', 'DETACHED', 'DETACHED']);
    expect(p.body.data.status).toBe('ACTIVE');
  });

  it('list filters by status and pages; another organization gets 404; a read-only key cannot attach (403)', async () => {
    const second = await sender({ type: 'LONG_CODE', name: 'Second' });
    expect(
      (await call(srv, 'POST', `/v1/sender-ids/${second}/brand/register`, { key, body: { ...BRAND, displayName: 'Second brand' } })).status,
    ).toBe(200);
    const active = await call(srv, 'GET', '/v1/programs?status=ACTIVE', { key });
    expect(active.body.data.map((p: { id: string }) => p.id)).toEqual([programId]);
    const drafts = await call(srv, 'GET', '/v1/programs?status=DRAFT', { key });
    expect(drafts.body.data.map((p: { name: string }) => p.name)).toEqual(['Second brand']);
    const page = await call(srv, 'GET', '/v1/programs?limit=1&page=2', { key });
    expect(page.body.pagination).toMatchObject({ page: 2, limit: 1, total: 2, hasMore: false });
    expect(page.body.data[0].id).toBe(programId);

    for (const path of [`/v1/programs/${programId}`, `/v1/programs/${programId}/status`]) {
      expect((await call(srv, 'GET', path, { key: other.apiKey.secret })).status).toBe(404);
    }
    expect((await call(srv, 'DELETE', `/v1/programs/${programId}/senders/${senderId}`, { key: other.apiKey.secret })).status).toBe(404);
    expect((await call(srv, 'GET', '/v1/programs', { key: other.apiKey.secret })).body.data).toEqual([]);
    const reader = await srv.newKey(org.organizationId, ['programs:read']);
    expect(
      (await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key: reader.secret, body: { senderId: second, role: 'TEST' } }))
        .status,
    ).toBe(403);
  });

  it('deleting a sender ends its attachments (kept as the audit trail)', async () => {
    const deleted = await call(srv, 'DELETE', `/v1/sender-ids/${senderId}`, { key });
    expect(deleted.status).toBe(200);
    const p = await call(srv, 'GET', `/v1/programs/${programId}`, { key });
    const mine = p.body.data.senders.filter((s: { senderId: string }) => s.senderId === senderId);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((s: { status: string }) => s.status === 'DETACHED')).toBe(true);
    expect(p.body.data.status).toBe('DRAFT'); // its PRIMARY gone, the program is no longer ready
  });
});

describe('archiving a program', () => {
  it('POST /v1/programs/{id}/archive: ARCHIVED and read-only, attachments ended, sends refused, repeat 200', async () => {
    const senderId = await sender({ type: 'LONG_CODE', name: 'Archived' });
    expect((await call(srv, 'POST', `/v1/sender-ids/${senderId}/protocols`, { key, body: { type: 'SMS' } })).status).toBeLessThan(300);
    await srv.context.db.updateTable('sender_ids').set({ status: 'PENDING', provider: 'PROVIDER_A' }).where('id', '=', senderId).execute();
    expect(
      (await call(srv, 'POST', `/v1/sender-ids/${senderId}/brand/register`, { key, body: { ...BRAND, displayName: 'Retired' } })).status,
    ).toBe(200);
    const programId = (await call(srv, 'GET', '/v1/programs?limit=100', { key })).body.data.find((p: any) => p.name === 'Retired').id;
    await until(
      () => call(srv, 'GET', `/v1/sender-ids/${senderId}/brand/status`, { key }),
      (r) => r.body.data.status === 'REGISTERED',
    );
    expect((await call(srv, 'POST', `/v1/sender-ids/${senderId}/campaign/register`, { key, body: CAMPAIGN })).status).toBe(200);
    await until(
      () => call(srv, 'GET', `/v1/programs/${programId}`, { key }),
      (r) => r.body.data.status === 'ACTIVE',
    );

    expect((await call(srv, 'POST', `/v1/programs/${programId}/archive`, { key: other.apiKey.secret })).status).toBe(404);
    const reader = await srv.newKey(org.organizationId, ['programs:read']);
    expect((await call(srv, 'POST', `/v1/programs/${programId}/archive`, { key: reader.secret })).status).toBe(403);
    const archived = await call(srv, 'POST', `/v1/programs/${programId}/archive`, { key });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body.data).toMatchObject({ id: programId, status: 'ARCHIVED' });
    expect(archived.body.data.senders).toEqual([expect.objectContaining({ senderId, status: 'DETACHED' })]);
    expect((await call(srv, 'GET', `/v1/programs/${programId}/status`, { key })).body.data.customerStatus).toBe('ARCHIVED');
    const again = await call(srv, 'POST', `/v1/programs/${programId}/archive`, { key });
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('ARCHIVED');
    const attach = await call(srv, 'POST', `/v1/programs/${programId}/senders`, { key, body: { senderId, role: 'PRIMARY' } });
    expect(attach.status).toBe(409);
    expect(attach.body.code).toBe('INVALID_STATE');
    expect((await call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key })).body.data.throughputPerSecond).toBe(1);
    const contact = await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550178' } });
    const refused = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: contact.body.id,
        senderId,
        channelType: 'SMS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'Hi' },
      },
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.code).toBe('SENDER_NOT_READY');
    expect((await call(srv, 'GET', '/v1/programs?status=ARCHIVED', { key })).body.data.map((p: { id: string }) => p.id)).toEqual([
      programId,
    ]);
  });
});
