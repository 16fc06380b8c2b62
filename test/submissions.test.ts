// Submissions through HTTP: launchSenderId (every case), submitSenderId (review over time, webhooks, the 502
// path, a second submit while one is open), brand and campaign registration with the sandbox registry (review
// over time, rejection with reasons, 502 with nothing recorded, keyword-rule checks), refreshSenderIdStatus,
// tenancy and scopes. The registry's review steps run as pg-boss jobs, SANDBOX_REGISTRY_STEP_MS apart.
import { until } from './support/wait.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './support/server.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true, config: { webhookAllowPrivate: true } });
  [org, other] = await Promise.all([srv.newOrg('Submissions org'), srv.newOrg('Other submissions org')]);
  key = org.apiKey.secret;
  // An endpoint subscribed to both events: the events are then stored (webhook_events) and delivered.
  const ep = await call(srv, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hooks', events: ['submission.status_changed', 'sender_id.status_changed'] },
  });
  expect(ep.status, JSON.stringify(ep.body)).toBe(201);
});
afterAll(() => srv.close());

/** An RCS agent's details the launch review reads (set through the sender operations). */
const AGENT = {
  displayName: 'Acme Coffee',
  description: 'Orders and offers from Acme Coffee.',
  logoUrl: 'https://cdn.example.com/acme-224.png',
};

async function sender(body: Record<string, unknown>, k = key): Promise<string> {
  const withAgent = body.type === 'RCS_AGENT' && !('rcsAgent' in body) ? { ...body, rcsAgent: AGENT } : body;
  const res = await call(srv, 'POST', '/v1/sender-ids', { key: k, body: withAgent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
}

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

describe('launchSenderId', () => {
  it('moves an RCS agent from TESTING to LAUNCH_PENDING; a repeat answers 200 unchanged', async () => {
    const id = await sender({ type: 'RCS_AGENT', name: 'Agent', provider: 'PROVIDER_A' });
    const first = await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ senderId: id, phase: 'LAUNCH_PENDING', previousPhase: 'TESTING', alreadyPending: false });
    const again = await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ ...first.body.data, previousPhase: 'LAUNCH_PENDING', alreadyPending: true });
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data.rcsAgentPhase).toBe('LAUNCH_PENDING');
  });

  it('answers 409 AGENT_NOT_IN_TESTING in any other phase, changing nothing', async () => {
    for (const phase of ['LAUNCHED', 'REJECTED', 'SUSPENDED'] as const) {
      const id = await sender({ type: 'RCS_AGENT', name: `Agent ${phase}`, provider: 'PROVIDER_A' });
      await srv.context.db.updateTable('sender_ids').set({ rcs_agent_phase: phase }).where('id', '=', id).execute();
      const res = await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('AGENT_NOT_IN_TESTING');
      expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data.rcsAgentPhase).toBe(phase);
    }
  });

  it('answers 400 NOT_RCS_SENDER for another type, 404 for another organization, 403 without the scope', async () => {
    const tf = await sender({ type: 'TOLL_FREE', name: 'Toll free' });
    const res = await call(srv, 'POST', `/v1/sender-ids/${tf}/launch`, { key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('NOT_RCS_SENDER');
    const theirs = await sender({ type: 'RCS_AGENT', name: 'Theirs', provider: 'PROVIDER_A' }, other.apiKey.secret);
    expect((await call(srv, 'POST', `/v1/sender-ids/${theirs}/launch`, { key })).status).toBe(404);
    const reader = await srv.newKey(org.organizationId, ['submissions:read']);
    const forbidden = await call(srv, 'POST', `/v1/sender-ids/${theirs}/launch`, { key: reader.secret });
    expect(forbidden.status).toBe(403);
  });
});

describe('submitSenderId', () => {
  it('sends the RCS agent’s details, set through the sender operations, to the review; incomplete details are a 400 naming them', async () => {
    const id = await sender({ type: 'RCS_AGENT', name: 'Detailless agent', provider: 'PROVIDER_A', rcsAgent: { displayName: 'Bare' } });
    await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
    const incomplete = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(incomplete.status).toBe(400);
    expect(incomplete.body.details.map((d: { field: string }) => d.field)).toEqual(['rcsAgent.description', 'rcsAgent.logoUrl']);
    const patched = await call(srv, 'PATCH', `/v1/sender-ids/${id}`, {
      key,
      body: { rcsAgent: { description: AGENT.description, logoUrl: AGENT.logoUrl } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const stored = await srv.context.db
      .selectFrom('sender_submissions')
      .select('details')
      .where('sender_id', '=', id)
      .executeTakeFirstOrThrow();
    expect((stored.details as { rcsAgent: unknown }).rcsAgent).toEqual({
      displayName: 'Bare',
      description: AGENT.description,
      brandColor: null,
      logoUrl: AGENT.logoUrl,
    });
  });

  it('is reviewed over time: submitted → in_review → approved; the agent is LAUNCHED and the sender ACTIVE, with webhooks', async () => {
    const id = await sender({ type: 'RCS_AGENT', name: 'Reviewed agent', provider: 'PROVIDER_A' });
    const early = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('INVALID_STATE');
    await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
    const missing = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { field: string }) => d.field)).toEqual(['body.useCaseDescription', 'body.sampleMessages']);
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.submission).toMatchObject({
      senderId: id,
      kind: 'RCS_AGENT_LAUNCH',
      status: 'submitted',
      error: null,
      decidedAt: null,
    });
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data.status).toBe('PENDING');
    const twice = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(twice.status).toBe(409);

    const done = await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}`, { key }),
      (r) => r.body.data.status === 'ACTIVE',
    );
    expect(done.body.data).toMatchObject({ rcsAgentPhase: 'LAUNCHED', sendReady: true });
    const refreshed = await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data).toMatchObject({
      senderId: id,
      senderStatus: 'ACTIVE',
      agentPhase: 'LAUNCHED',
      changed: false,
      brandStatus: null,
      campaignStatus: null,
    });
    expect(refreshed.body.data.submission).toMatchObject({ status: 'approved', rejectionReasons: [] });

    const subs = (await eventsOf(id, 'submission.status_changed')).filter((e) => e.submissionType === 'SENDER_ID');
    expect(subs.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'submitted'],
      ['submitted', 'in_review'],
      ['in_review', 'approved'],
    ]);
    const agent = (await eventsOf(id, 'submission.status_changed')).filter((e) => e.submissionType === 'RCS_AGENT');
    expect(agent.map((e) => e.status)).toEqual(['LAUNCH_PENDING', 'LAUNCHED']);
    const status = await eventsOf(id, 'sender_id.status_changed');
    expect(status.map((e) => [e.previousStatus, e.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'ACTIVE'],
    ]);
  });

  it('a rejection carries reasons; the agent and the sender are REJECTED and may be submitted again', async () => {
    const id = await sender({ type: 'RCS_AGENT', name: 'REJECT me', provider: 'PROVIDER_A' });
    await call(srv, 'POST', `/v1/sender-ids/${id}/launch`, { key });
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT })).status).toBe(200);
    const done = await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}`, { key }),
      (r) => r.body.data.status === 'REJECTED',
    );
    expect(done.body.data.rcsAgentPhase).toBe('REJECTED');
    expect(done.body.data.statusReason).toMatch(/rejected/);
    const refreshed = await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key });
    expect(refreshed.body.data.submission.status).toBe('rejected');
    expect(refreshed.body.data.submission.rejectionReasons.length).toBeGreaterThan(0);
    const again = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(again.status).toBe(200);
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data).toMatchObject({
      status: 'PENDING',
      rcsAgentPhase: 'LAUNCH_PENDING',
    });
  });

  it('an upstream failure answers 502 with the failed submission, which is recorded; LONG_CODE is 400', async () => {
    const id = await sender({ type: 'TOLL_FREE', name: 'UPSTREAM down' });
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/submit`, { key, body: SUBMIT });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({
      code: 'UPSTREAM_ERROR',
      senderId: id,
      submission: { status: 'failed', kind: 'TOLL_FREE_VERIFICATION', submittedAt: null },
    });
    expect(res.body.submission.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    const stored = await srv.context.db.selectFrom('sender_submissions').selectAll().where('sender_id', '=', id).execute();
    expect(stored.map((s) => s.status)).toEqual(['failed']);
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data.status).toBe('DRAFT');
    const lc = await sender({ type: 'LONG_CODE', name: 'Ten DLC' });
    expect((await call(srv, 'POST', `/v1/sender-ids/${lc}/submit`, { key, body: SUBMIT })).status).toBe(400);
  });
});

describe('brand and campaign registration', () => {
  it('a brand is reviewed over time to REGISTERED; the campaign then goes PENDING → IN_REVIEW → REGISTERED', async () => {
    const id = await sender({ type: 'LONG_CODE', name: 'Brand sender' });
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key })).body).toEqual({ data: null });
    const early = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, { key, body: CAMPAIGN });
    expect(early.status).toBe(409);
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: BRAND });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      senderId: id,
      status: 'PENDING',
      identityStatus: null,
      registryBrandId: null,
      displayName: 'Acme Dental',
    });
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: BRAND })).status).toBe(409);
    const brand = await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key }),
      (r) => r.body.data.status === 'REGISTERED',
    );
    expect(brand.body.data).toMatchObject({ identityStatus: 'VERIFIED', rejectionReasons: [] });
    expect(brand.body.data.registryBrandId).toMatch(/^B/);

    const noStop = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, {
      key,
      body: { ...CAMPAIGN, sampleMessages: ['Your appointment is tomorrow at 10:00, see you then.'] },
    });
    expect(noStop.status).toBe(400);
    expect(noStop.body.details[0].field).toBe('body.sampleMessages');
    const badKeyword = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, {
      key,
      body: { ...CAMPAIGN, helpKeywords: ['STOP'] },
    });
    expect(badKeyword.status).toBe(400);
    expect(badKeyword.body.details[0]).toMatchObject({ field: 'body.helpKeywords.0' });
    const subUse = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, {
      key,
      body: { ...CAMPAIGN, subUseCases: ['MARKETING', '2FA'] },
    });
    expect(subUse.status).toBe(400);

    const campaign = await call(srv, 'POST', `/v1/sender-ids/${id}/campaign/register`, { key, body: CAMPAIGN });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(200);
    expect(campaign.body.data).toMatchObject({
      status: 'PENDING',
      brandRegistrationId: brand.body.data.id,
      carrierStatuses: [],
      monthlyFee: null,
    });
    const registered = await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}/campaign/status`, { key }),
      (r) => r.body.data.status === 'REGISTERED',
    );
    expect(registered.body.data.monthlyFee).toEqual({ amount: '10.00', currency: 'USD' });
    expect(registered.body.data.carrierStatuses.every((c: { status: string }) => c.status === 'APPROVED')).toBe(true);
    const events = (await eventsOf(id, 'submission.status_changed')).map((e) => `${e.submissionType}:${e.status}`);
    expect(events).toEqual([
      'BRAND:PENDING',
      'BRAND:IN_REVIEW',
      'BRAND:REGISTERED',
      'CAMPAIGN:PENDING',
      'CAMPAIGN:IN_REVIEW',
      'CAMPAIGN:REGISTERED',
    ]);
  });

  it('a rejected brand carries reasons, moves the sender to REJECTED, and may be registered again', async () => {
    const id = await sender({ type: 'LONG_CODE', name: 'Rejected brand' });
    expect(
      (await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: { ...BRAND, displayName: 'REJECT Corp' } })).status,
    ).toBe(200);
    const rejected = await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key }),
      (r) => r.body.data.status === 'REJECTED',
    );
    expect(rejected.body.data.rejectionReasons.length).toBeGreaterThan(0);
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}`, { key })).body.data.status).toBe('REJECTED');
    const last = (await eventsOf(id, 'submission.status_changed')).at(-1)!;
    expect(last).toMatchObject({
      submissionType: 'BRAND',
      previousStatus: 'IN_REVIEW',
      status: 'REJECTED',
      reasons: rejected.body.data.rejectionReasons,
    });
    const again = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: BRAND });
    expect(again.status).toBe(200);
    expect(again.body.data.id).not.toBe(rejected.body.data.id);
  });

  it('an unreachable registry answers 502 and records nothing; refresh-status 502 too', async () => {
    const id = await sender({ type: 'LONG_CODE', name: 'UPSTREAM brand' });
    const res = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: { ...BRAND, displayName: 'UPSTREAM Inc' } });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('UPSTREAM_ERROR');
    expect((await call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key })).body.data).toBeNull();
    expect((await call(srv, 'POST', `/v1/sender-ids/${id}/refresh-status`, { key })).status).toBe(502);
  });

  it('another organization’s sender is 404 on every operation', async () => {
    const theirs = await sender({ type: 'LONG_CODE', name: 'Theirs' }, other.apiKey.secret);
    for (const [method, path, body] of [
      ['GET', 'brand/status', undefined],
      ['GET', 'campaign/status', undefined],
      ['POST', 'brand/register', BRAND],
      ['POST', 'campaign/register', CAMPAIGN],
      ['POST', 'refresh-status', undefined],
      ['POST', 'submit', SUBMIT],
    ] as const) {
      expect((await call(srv, method, `/v1/sender-ids/${theirs}/${path}`, { key, body })).status, path).toBe(404);
    }
  });
});
