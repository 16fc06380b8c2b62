// The sandbox registry's review states through HTTP (README "Carrier sandbox"; src/providers/simulator-registry.ts):
// changes requested and the resubmission that answers them, a suspension after approval that stops a 10DLC
// program's senders until refresh-status lifts it, an expired campaign renewed by registering again, a sender
// suspended by the carrier, and vetting that raises the 10DLC throughput class. Each with the webhook events the
// document lists (`submission.status_changed`, `sender_id.status_changed`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let contactId: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true, config: { webhookAllowPrivate: true } });
  org = await srv.newOrg('Registry review org');
  key = org.apiKey.secret;
  const ep = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['submission.status_changed', 'sender_id.status_changed'] },
  });
  expect(ep.status, JSON.stringify(ep.body)).toBe(201);
  contactId = (await call(srv, 'POST', '/v1/contacts', { key, body: { phone: '+14155550166' } })).body.id;
});
afterAll(() => srv.close());

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
const SUBMIT = {
  useCaseDescription: 'Appointment reminders for patients of Acme Dental clinics.',
  sampleMessages: ['Your appointment is tomorrow at 10:00.'],
};

let line = 0;
/** A 10DLC sender with SMS enabled and a purchased number waiting for its campaign (PENDING, as after a purchase). */
async function tenDlc(name: string): Promise<string> {
  const res = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'LONG_CODE', name } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.data.id as string;
  expect((await call(srv, 'POST', `/v1/sender-ids/${id}/protocols`, { key, body: { type: 'SMS' } })).status).toBeLessThan(300);
  await srv.context.db
    .insertInto('sender_numbers')
    .values({
      organization_id: org.organizationId,
      sender_id: id,
      number: `+1628555${String(1000 + ++line)}`,
      inventory_type: 'Local',
      provider: 'PROVIDER_A',
      source: 'PURCHASED',
      status: 'PENDING',
      country_code: 'US',
      capabilities: ['SMS'],
    })
    .execute();
  await srv.context.db.updateTable('sender_ids').set({ status: 'PENDING', provider: 'PROVIDER_A' }).where('id', '=', id).execute();
  return id;
}

const brandOf = (id: string) => call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key });
const campaignOf = (id: string) => call(srv, 'GET', `/v1/sender-ids/${id}/campaign/status`, { key });
const senderOf = (id: string) => call(srv, 'GET', `/v1/sender-ids/${id}`, { key });
const programOf = async (id: string) =>
  (await call(srv, 'GET', '/v1/programs?limit=100', { key })).body.data.find((p: any) =>
    p.senders.some((s: any) => s.senderId === id && s.status === 'ACTIVE'),
  );

async function registerBrand(id: string, brand: Record<string, unknown>, status = 'REGISTERED') {
  const res = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: brand });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return until(
    () => brandOf(id),
    (r) => r.body.data?.status === status,
    `brand ${status}`,
  );
}
async function registerCampaign(id: string, campaign: Record<string, unknown>, status = 'REGISTERED') {
  const res = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, { key, body: campaign });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return until(
    () => campaignOf(id),
    (r) => r.body.data?.status === status,
    `campaign ${status}`,
  );
}

const send = (senderId: string) =>
  call(srv, 'POST', '/v1/messages/send', {
    key,
    body: { contactId, senderId, channelType: 'SMS', messageType: 'TRANSACTIONAL', content: { type: 'text', text: 'Hi' } },
  });

async function eventsOf(senderId: string, type: string): Promise<Array<Record<string, any>>> {
  const rows = await srv.context.db
    .selectFrom('webhook_events')
    .select(['body', 'created_at'])
    .where('organization_id', '=', org.organizationId)
    .where('type', '=', type)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => JSON.parse(r.body).data).filter((d) => d.senderIdId === senderId);
}

describe('vetting', () => {
  it('requestVetting: a VET_HIGH brand scores 85 and its senders send at 75/s; unvetted at 4/s, VET_LOW (30) too', async () => {
    const high = await tenDlc('Vetted high');
    const vetted = await registerBrand(high, { ...BRAND, displayName: 'Acme VET_HIGH', requestVetting: true });
    expect(vetted.body.data).toMatchObject({ vettingScore: 85, identityStatus: 'VETTED_VERIFIED' });
    await registerCampaign(high, CAMPAIGN);
    await until(
      () => senderOf(high),
      (r) => r.body.data.status === 'ACTIVE',
      'the sender ACTIVE',
    );
    expect((await senderOf(high)).body.data.throughputPerSecond).toBe(75);

    const low = await tenDlc('Vetted low');
    expect((await registerBrand(low, { ...BRAND, displayName: 'Acme VET_LOW', requestVetting: true })).body.data.vettingScore).toBe(30);
    const plain = await tenDlc('Not vetted');
    expect((await registerBrand(plain, BRAND)).body.data).toMatchObject({ vettingScore: null, identityStatus: 'VERIFIED' });
    for (const id of [low, plain]) {
      await registerCampaign(id, CAMPAIGN);
      await until(
        () => senderOf(id),
        (r) => r.body.data.status === 'ACTIVE',
        'the sender ACTIVE',
      );
      expect((await senderOf(id)).body.data.throughputPerSecond).toBe(4);
    }
  });
});

describe('changes requested', () => {
  it('a CHANGES brand and campaign are rejected naming the field to add; registered again with it, they are REGISTERED', async () => {
    const id = await tenDlc('Changes');
    const brand = { ...BRAND, displayName: 'Acme CHANGES' };
    const asked = await registerBrand(id, brand, 'REJECTED');
    expect(asked.body.data.rejectionReasons).toEqual([expect.stringMatching(/\(website\)/)]);
    const last = (await eventsOf(id, 'submission.status_changed')).at(-1)!;
    expect(last).toMatchObject({ submissionType: 'BRAND', status: 'REJECTED', reasons: asked.body.data.rejectionReasons });
    const fixed = await registerBrand(id, { ...brand, website: 'https://www.acmedental.example' });
    expect(fixed.body.data).toMatchObject({ rejectionReasons: [] });

    const campaign = { ...CAMPAIGN, description: `${CAMPAIGN.description} CHANGES` };
    const rejected = await registerCampaign(id, campaign, 'REJECTED');
    expect(rejected.body.data.rejectionReasons).toEqual([expect.stringMatching(/\(privacyPolicyUrl\)/)]);
    await registerCampaign(id, { ...campaign, privacyPolicyUrl: 'https://www.acmedental.example/privacy' });
  });

  it('a CHANGES sender submission is rejected naming optInEvidenceUrl; submitted again with it, approved', async () => {
    const res = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'TOLL_FREE', name: 'CHANGES toll-free' } });
    const id = res.body.data.id as string;
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT })).status).toBe(200);
    await until(
      () => senderOf(id),
      (r) => r.body.data.status === 'REJECTED',
      'the sender REJECTED',
    );
    const refreshed = await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key });
    expect(refreshed.body.data.submission).toMatchObject({
      status: 'rejected',
      rejectionReasons: [expect.stringMatching(/\(optInEvidenceUrl\)/)],
    });
    const again = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, {
      key,
      body: { ...SUBMIT, optInEvidenceUrl: 'https://www.acmedental.example/consent.png' },
    });
    expect(again.status).toBe(200);
    await until(
      () => senderOf(id),
      (r) => r.body.data.status === 'ACTIVE',
      'the sender ACTIVE',
    );
  });
});

describe('suspension and expiry', () => {
  it('a SUSPEND campaign is suspended after approval: its senders answer SENDER_NOT_READY and the program is DRAFT until refresh-status lifts it', async () => {
    const id = await tenDlc('Suspended campaign');
    await registerBrand(id, BRAND);
    const suspended = await registerCampaign(id, { ...CAMPAIGN, description: `${CAMPAIGN.description} SUSPEND` }, 'SUSPENDED');
    expect(suspended.body.data.rejectionReasons.length).toBeGreaterThan(0);
    const refused = await send(id);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({ code: 'SENDER_NOT_READY', details: [{ field: 'body.senderId', code: 'RESOLVE_SUSPENSION' }] });
    const program = await programOf(id);
    expect(program).toMatchObject({ status: 'DRAFT', readiness: { ready: false }, nextAction: { code: 'RESOLVE_SUSPENSION' } });
    const status = await call(srv, 'GET', `/v1/programs/${program.id}/status`, { key });
    expect(status.body.data).toMatchObject({ customerStatus: 'SUSPENDED', campaignStatus: 'SUSPENDED' });
    expect((await senderOf(id)).body.data.throughputPerSecond).toBe(1); // no REGISTERED campaign: the unregistered class

    const refreshed = await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key });
    expect(refreshed.body.data).toMatchObject({ changed: true, campaignStatus: 'REGISTERED' });
    expect((await send(id)).status).toBe(200);
    expect(await programOf(id)).toMatchObject({ status: 'ACTIVE' });
    expect((await senderOf(id)).body.data.throughputPerSecond).toBe(4);
    const campaignEvents = (await eventsOf(id, 'submission.status_changed')).filter((e) => e.submissionType === 'CAMPAIGN');
    expect(campaignEvents.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'PENDING'],
      ['PENDING', 'IN_REVIEW'],
      ['IN_REVIEW', 'REGISTERED'],
      ['REGISTERED', 'SUSPENDED'],
      ['SUSPENDED', 'REGISTERED'],
    ]);
    expect(campaignEvents[3]!.reasons).toEqual(suspended.body.data.rejectionReasons);
  });

  it('an EXPIRE campaign expires after approval: SENDER_NOT_READY with RENEW_CAMPAIGN; registering it again renews it', async () => {
    const id = await tenDlc('Expiring campaign');
    await registerBrand(id, BRAND);
    const expired = await registerCampaign(id, { ...CAMPAIGN, description: `${CAMPAIGN.description} EXPIRE` }, 'EXPIRED');
    expect(expired.body.data.expiresAt).not.toBeNull(); // the registry's validity it was given
    const refused = await send(id);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.details[0]).toMatchObject({ code: 'RENEW_CAMPAIGN' });
    expect(await programOf(id)).toMatchObject({ status: 'DRAFT' });
    await registerCampaign(id, CAMPAIGN);
    await until(
      () => programOf(id),
      (p) => p.status === 'ACTIVE',
      'the program ACTIVE again',
    );
    expect((await send(id)).status).toBe(200);
    const events = (await eventsOf(id, 'submission.status_changed')).filter((e) => e.submissionType === 'CAMPAIGN');
    expect(events.map((e) => e.status)).toContain('EXPIRED');
  });

  it('a SUSPEND sender is suspended by the carrier after approval and reinstated at refresh-status, with events', async () => {
    const res = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'TOLL_FREE', name: 'SUSPEND toll-free' } });
    const id = res.body.data.id as string;
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT })).status).toBe(200);
    const suspended = await until(
      () => senderOf(id),
      (r) => r.body.data.status === 'SUSPENDED',
      'the sender SUSPENDED',
    );
    expect(suspended.body.data).toMatchObject({ suspendedBy: 'CARRIER', statusReason: expect.stringMatching(/carrier suspended/) });
    // A carrier suspension cannot be lifted through reactivate.
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/reactivate`, { key })).status).toBe(409);
    const refreshed = await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key });
    expect(refreshed.body.data).toMatchObject({ changed: true, senderStatus: 'ACTIVE' });
    expect((await senderOf(id)).body.data).toMatchObject({ status: 'ACTIVE', suspendedBy: null });
    const status = await eventsOf(id, 'sender_id.status_changed');
    expect(status.map((e) => [e.previousStatus, e.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'ACTIVE'],
      ['ACTIVE', 'SUSPENDED'],
      ['SUSPENDED', 'ACTIVE'],
    ]);
  });
});
