// Pass-through fees in usage (issue 32), through HTTP, the review jobs and the carrier simulator: a campaign
// REGISTERED charges its monthly fee and its purchased number's monthly cost that day; the monthly job
// (chargeMonthlyFees, what billing.monthly-fees runs, with its clock injected) charges the next month on the
// anniversary, once however often it runs, and not for a released number (nor its deactivated sender's campaign);
// a vetting request charges its fee; brand/campaign filters keep each fee where it belongs; another organization
// sees none of it. Also: the sandbox sender cannot be registered, as it cannot be attached.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeMonthlyFees } from '../src/domain/submissions/fees.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

process.env.SANDBOX_REGISTRY_STEP_MS = '100';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ workers: true });
  org = await srv.newOrg('Fees org');
  other = await srv.newOrg('Other fees org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

const BRAND = {
  entityType: 'PRIVATE_PROFIT',
  displayName: 'Fees Dental',
  companyName: 'Fees Dental Group LLC',
  taxId: '12-3456789',
  email: 'compliance@fees.example',
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
  description: 'Appointment reminders, confirmations and rescheduling notices for patients of Fees Dental clinics.',
  messageFlow: 'Patients opt in by ticking the SMS consent box on the online booking form at fees.example/book.',
  sampleMessages: ['Fees Dental: your appointment is tomorrow at 10:00. Reply C to confirm. STOP to opt out.'],
};

const iso = (d: Date) => d.toISOString().slice(0, 10);

/** The same day next month (UTC), the last day of that month when it has no such day: the first anniversary. */
function nextAnniversary(d: Date): Date {
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 0)).getUTCDate();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, Math.min(d.getUTCDate(), last), 12));
}

/** Buys a Local number of PROVIDER_A (1.15 USD a month): its PENDING LONG_CODE sender and lease. */
async function buyNumber(areaCode: string): Promise<{ senderId: string; numberId: string }> {
  const found = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
    key,
    body: { inventoryType: 'Local', leadingNumber: areaCode, provider: 'PROVIDER_A', limit: 20 },
  });
  expect(found.status, found.text).toBe(200);
  // Any ordinary purchasable number: other files of a full run buy from the same area codes (the inventory is one
  // per provider), so the first line may be gone; tails 13, 17 and 18 are the simulator's magic numbers.
  const row = found.body.data.find((r: { number: string; purchasable: boolean }) => r.purchasable && !/1[378]$/.test(r.number));
  expect(row, 'an ordinary number for sale').toBeDefined();
  const bought = await call(srv, 'POST', '/v1/sender-ids/numbers/purchase', {
    key,
    body: { numberKey: row.numberKey, number: row.number, selectionProof: row.selectionProof, inventoryType: 'Local' },
  });
  expect(bought.status, bought.text).toBe(201);
  expect(bought.body.data.number.monthlyCost).toEqual({ amount: '1.15', currency: 'USD' });
  return { senderId: bought.body.data.sender.id, numberId: bought.body.data.number.id };
}

async function registerBrand(senderId: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(srv, 'POST', `/v1/sender-ids/${senderId}/brand/register`, { key, body });
  expect(res.status, res.text).toBe(200);
  await until(
    () => call(srv, 'GET', `/v1/sender-ids/${senderId}/brand/status`, { key }),
    (r) => r.body.data?.status === 'REGISTERED',
    'brand REGISTERED',
  );
  return res.body.data.id;
}

async function registerCampaign(senderId: string): Promise<{ id: string; registeredAt: string }> {
  const res = await call(srv, 'POST', `/v1/sender-ids/${senderId}/campaign/register`, { key, body: CAMPAIGN });
  expect(res.status, res.text).toBe(200);
  const done = await until(
    () => call(srv, 'GET', `/v1/sender-ids/${senderId}/campaign/status`, { key }),
    (r) => r.body.data?.status === 'REGISTERED',
    'campaign REGISTERED',
  );
  expect(done.body.data.monthlyFee).toEqual({ amount: '10.00', currency: 'USD' });
  return { id: res.body.data.id, registeredAt: done.body.data.registeredAt };
}

type Line = { item: string; quantity: number; unitPrice: unknown; cost: { amount: string } };
async function usage(query: string, k = key) {
  const res = await call(srv, 'GET', `/v1/analytics/usage?${query}`, { key: k });
  expect(res.status, res.text).toBe(200);
  const lines = res.body.data.lines as Line[];
  const fee = (item: string) => {
    const l = lines.find((x) => x.item === item)!;
    return [l.quantity, l.cost.amount] as const;
  };
  return { data: res.body.data, fee };
}

describe('monthly fees: campaign and purchased number', () => {
  let kept: { senderId: string; numberId: string; brandId: string; campaignId: string };
  let released: { senderId: string; numberId: string; brandId: string; campaignId: string };
  let today: Date;
  let anniversary: Date;

  beforeAll(async () => {
    const a = await buyNumber('206');
    const aBrand = await registerBrand(a.senderId, BRAND);
    const aCampaign = await registerCampaign(a.senderId);
    kept = { ...a, brandId: aBrand, campaignId: aCampaign.id };
    const b = await buyNumber('312');
    const bBrand = await registerBrand(b.senderId, { ...BRAND, displayName: 'Released Dental' });
    const bCampaign = await registerCampaign(b.senderId);
    released = { ...b, brandId: bBrand, campaignId: bCampaign.id };
    today = new Date(aCampaign.registeredAt);
    expect(iso(new Date(bCampaign.registeredAt))).toBe(iso(today));
    anniversary = nextAnniversary(today);
  });

  it('a campaign REGISTERED: usage the same day shows its 10.00 USD monthly fee, its number’s 1.15 USD and its 15.00 USD vetting', async () => {
    const lease = await call(srv, 'GET', '/v1/sender-ids/numbers?limit=100', { key });
    expect(lease.body.data.find((n: { id: string }) => n.id === kept.numberId)).toMatchObject({ status: 'ACTIVE' });
    const { data, fee } = await usage(`startDate=${iso(today)}&endDate=${iso(today)}&campaignId=${kept.campaignId}`);
    expect(fee('campaign_fee')).toEqual([1, '10.0000']);
    expect(fee('number_fee')).toEqual([1, '1.1500']);
    expect(fee('vetting_fee')).toEqual([0, '0.0000']);
    expect(fee('campaign_vetting_fee')).toEqual([1, '15.0000']);
    expect(fee('brand_fee')).toEqual([0, '0.0000']); // the brand's own: not the campaign's
    expect(data.lines.map((l: Line) => l.item)).toEqual([
      'text_segment',
      'rich_message',
      'capability_check',
      'pass_through_fee',
      'campaign_fee',
      'number_fee',
      'vetting_fee',
      'brand_fee',
      'campaign_vetting_fee',
    ]);
    expect(data.lines.find((l: Line) => l.item === 'campaign_fee').unitPrice).toBeNull();
    expect(data.total.amount).toBe('26.1500');
    expect(data.timeline).toEqual([expect.objectContaining({ date: iso(today), cost: { amount: '26.1500', currency: 'USD' } })]);
    // Both campaigns, both numbers and both brands, organization-wide.
    const orgWide = await usage(`startDate=${iso(today)}&endDate=${iso(today)}`);
    expect(orgWide.fee('campaign_fee')).toEqual([2, '20.0000']);
    expect(orgWide.fee('brand_fee')).toEqual([2, '8.0000']);
    expect(orgWide.fee('campaign_vetting_fee')).toEqual([2, '30.0000']);
  });

  it('the monthly job charges the next month on the anniversary, once however often it runs; a released number and its deactivated sender’s campaign are not charged', async () => {
    const release = await call(srv, 'DELETE', `/v1/sender-ids/numbers/${released.numberId}/release`, { key });
    expect(release.status, release.text).toBe(200);
    const range = `startDate=${iso(today)}&endDate=${iso(anniversary)}`;
    // The day before the anniversary: still the first month, already charged.
    // The job runs for every organization (other test files' campaigns share the database in a full run): count
    // this organization's charges.
    const ours = async () =>
      Number(
        (
          await srv.context.db
            .selectFrom('pass_through_charges')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('organization_id', '=', org.organizationId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await ours();
    await chargeMonthlyFees(srv.context.db, new Date(anniversary.getTime() - 86_400_000));
    expect(await ours()).toBe(before);
    await chargeMonthlyFees(srv.context.db, anniversary);
    expect(await ours()).toBe(before + 2);
    await chargeMonthlyFees(srv.context.db, anniversary); // run again: nothing more for anyone already charged
    expect(await ours()).toBe(before + 2);
    const keptUsage = await usage(`${range}&campaignId=${kept.campaignId}`);
    expect(keptUsage.fee('campaign_fee')).toEqual([2, '20.0000']);
    expect(keptUsage.fee('number_fee')).toEqual([2, '2.3000']);
    const second = keptUsage.data.timeline.find((p: { date: string }) => p.date === iso(anniversary));
    expect(second.cost.amount).toBe('11.1500');
    const releasedUsage = await usage(`${range}&campaignId=${released.campaignId}`);
    expect(releasedUsage.fee('campaign_fee')).toEqual([1, '10.0000']);
    expect(releasedUsage.fee('number_fee')).toEqual([1, '1.1500']);
    // The whole range for the organization: the total is the sum of the lines, the timeline sums to it. The
    // one-time fees (two brands, two campaigns) are not charged again on the anniversary.
    const all = await usage(range);
    expect(all.fee('campaign_fee')).toEqual([3, '30.0000']);
    expect(all.fee('number_fee')).toEqual([3, '3.4500']);
    expect(all.fee('brand_fee')).toEqual([2, '8.0000']);
    expect(all.fee('campaign_vetting_fee')).toEqual([2, '30.0000']);
    expect(all.data.total.amount).toBe('71.4500');
    const units = all.data.timeline.reduce(
      (n: number, p: { cost: { amount: string } }) => n + Math.round(Number(p.cost.amount) * 10_000),
      0,
    );
    expect(units).toBe(714_500);
    // Monthly granularity: each fee in the month its period starts.
    const monthly = await usage(`${range}&granularity=month`);
    expect(monthly.data.timeline.map((p: { cost: { amount: string } }) => p.cost.amount)).toEqual(['60.3000', '11.1500']);
  });

  it('the brand filter keeps its own campaign’s and number’s fees; another organization sees none of it', async () => {
    const range = `startDate=${iso(today)}&endDate=${iso(anniversary)}`;
    const byBrand = await usage(`${range}&brandId=${kept.brandId}`);
    expect(byBrand.fee('campaign_fee')).toEqual([2, '20.0000']);
    expect(byBrand.fee('number_fee')).toEqual([2, '2.3000']);
    expect(byBrand.fee('brand_fee')).toEqual([1, '4.0000']);
    expect(byBrand.fee('campaign_vetting_fee')).toEqual([1, '15.0000']);
    expect((await usage(`${range}&brandId=${kept.brandId}&campaignId=${released.campaignId}`)).fee('campaign_fee')).toEqual([0, '0.0000']);
    const theirs = await usage(range, other.apiKey.secret);
    for (const item of ['campaign_fee', 'number_fee', 'vetting_fee', 'brand_fee', 'campaign_vetting_fee'])
      expect(theirs.fee(item)).toEqual([0, '0.0000']);
    expect(theirs.data.total.amount).toBe('0.0000');
    expect((await usage(`${range}&campaignId=${kept.campaignId}`, other.apiKey.secret)).fee('campaign_fee')).toEqual([0, '0.0000']);
  });

  it('the usage export’s cost includes the fees', async () => {
    const res = await call(srv, 'POST', '/v1/analytics/export', {
      key,
      headers: { accept: 'text/csv' },
      body: { type: 'usage', startDate: iso(today), endDate: iso(today), filters: { campaignId: kept.campaignId } },
    });
    expect(res.status, res.text).toBe(200);
    const rows = res.text.trimEnd().split('\r\n');
    expect(rows[0]).toBe('date,textSegments,richMessages,capabilityChecks,cost,currency');
    expect(rows[1]).toBe(`${iso(today)},0,0,0,26.1500,USD`);
  });
});

describe('vetting fee', () => {
  it('a brand registered with requestVetting charges 40.00 USD that day, to its brand only', async () => {
    const sender = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'LONG_CODE', name: 'Vetted' } });
    expect(sender.status, sender.text).toBe(201);
    const plain = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'LONG_CODE', name: 'Not vetted' } });
    const brandId = await registerBrand(sender.body.data.id, { ...BRAND, displayName: 'Vetted VET_HIGH', requestVetting: true });
    const plainBrand = await registerBrand(plain.body.data.id, { ...BRAND, displayName: 'Plain', requestVetting: false });
    const day = iso(new Date());
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${brandId}`)).fee('vetting_fee')).toEqual([1, '40.0000']);
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${plainBrand}`)).fee('vetting_fee')).toEqual([0, '0.0000']);
    // Each brand registration bears the registry's 4.00 USD, vetted or not.
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${brandId}`)).fee('brand_fee')).toEqual([1, '4.0000']);
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${plainBrand}`)).fee('brand_fee')).toEqual([1, '4.0000']);
    expect((await usage(`startDate=${day}&endDate=${day}`)).fee('vetting_fee')).toEqual([1, '40.0000']);
    // Not a monthly fee: the monthly job does not charge it again.
    await chargeMonthlyFees(srv.context.db, nextAnniversary(new Date()));
    expect((await usage(`startDate=${day}&endDate=${iso(nextAnniversary(new Date()))}`)).fee('vetting_fee')).toEqual([1, '40.0000']);
    expect((await usage(`startDate=${day}&endDate=${day}`, other.apiKey.secret)).fee('vetting_fee')).toEqual([0, '0.0000']);
  });
});

describe('registration fees', () => {
  it('a brand registration rejected, then sent again, bears the registry’s 4.00 USD for each time it was sent', async () => {
    const sender = await call(srv, 'POST', '/v1/sender-ids', { key, body: { type: 'LONG_CODE', name: 'Rejected brand' } });
    expect(sender.status, sender.text).toBe(201);
    const id = sender.body.data.id;
    const first = await call(srv, 'POST', `/v1/sender-ids/${id}/brand/register`, { key, body: { ...BRAND, displayName: 'Brand REJECT' } });
    expect(first.status, first.text).toBe(200);
    await until(
      () => call(srv, 'GET', `/v1/sender-ids/${id}/brand/status`, { key }),
      (r) => r.body.data?.status === 'REJECTED',
      'brand REJECTED',
    );
    const day = iso(new Date());
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${first.body.data.id}`)).fee('brand_fee')).toEqual([1, '4.0000']);
    const again = await registerBrand(id, { ...BRAND, displayName: 'Brand accepted' });
    expect((await usage(`startDate=${day}&endDate=${day}&brandId=${again}`)).fee('brand_fee')).toEqual([1, '4.0000']);
    // Organization-wide, each registration sent once: two brand fees of this sender among the organization's.
    const rows = await srv.context.db
      .selectFrom('pass_through_charges')
      .select(['brand_id', 'amount_units'])
      .where('organization_id', '=', org.organizationId)
      .where('kind', '=', 'brand_registration')
      .where('brand_id', 'in', [first.body.data.id, again])
      .execute();
    expect(rows.map((r) => Number(r.amount_units))).toEqual([40_000, 40_000]);
  });
});

describe('toll-free number fee', () => {
  it('a purchased Toll-Free number is billed from the day its verification is approved (no campaign registers it)', async () => {
    const me = await srv.newOrg('Toll-free fees org');
    const k = me.apiKey.secret;
    const draft = await call(srv, 'POST', '/v1/sender-ids', { key: k, body: { type: 'TOLL_FREE', name: 'Support line' } });
    expect(draft.status, draft.text).toBe(201);
    const senderId = draft.body.data.id as string;
    const found = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key: k,
      body: { inventoryType: 'Toll-Free', leadingNumber: '844', provider: draft.body.data.provider ?? 'PROVIDER_A', limit: 5 },
    });
    // Any ordinary purchasable number: other files of a full run buy from the same area codes (the inventory is one
    // per provider), so the first line may be gone; tails 13, 17 and 18 are the simulator's magic numbers.
    const row = found.body.data.find((r: { number: string; purchasable: boolean }) => r.purchasable && !/1[378]$/.test(r.number));
    expect(row, 'an ordinary number for sale').toBeDefined();
    const bought = await call(srv, 'POST', '/v1/sender-ids/numbers/purchase', {
      key: k,
      headers: { 'Idempotency-Key': 'toll-free-fee' },
      body: { numberKey: row.numberKey, number: row.number, selectionProof: row.selectionProof, draftSenderId: senderId },
    });
    expect(bought.status, bought.text).toBe(201);
    const monthly = bought.body.data.number.monthlyCost.amount as string;
    const day = iso(new Date());
    expect((await usage(`startDate=${day}&endDate=${day}`, k)).fee('number_fee')).toEqual([0, '0.0000']);
    const submitted = await call(srv, 'POST', `/v1/sender-ids/${senderId}/submit`, {
      key: k,
      body: { useCaseDescription: 'Order updates for customers.', sampleMessages: ['Your order shipped. STOP to opt out.'] },
    });
    expect(submitted.status, submitted.text).toBe(200);
    await until(
      () => call(srv, 'GET', `/v1/sender-ids/${senderId}`, { key: k }),
      (r) => r.body.data.status === 'ACTIVE',
      'the toll-free sender ACTIVE',
    );
    const lease = (await call(srv, 'GET', '/v1/sender-ids/numbers', { key: k })).body.data[0];
    expect(lease).toMatchObject({ status: 'ACTIVE', billingStartedAt: expect.any(String) });
    expect((await usage(`startDate=${day}&endDate=${day}`, k)).fee('number_fee')).toEqual([1, `${monthly}00`]);
  });
});

describe('the sandbox sender and brand registration agree', () => {
  it('registering a brand or campaign for the sandbox sender is refused as attaching it is: 422 sandbox_sender, nothing stored', async () => {
    const me = await srv.newOrg('Sandbox registration org');
    const k = me.apiKey.secret;
    for (const kind of ['brand', 'campaign'] as const) {
      const res = await call(srv, 'POST', `/v1/sender-ids/${me.senderId}/${kind}/register`, {
        key: k,
        body: kind === 'brand' ? BRAND : CAMPAIGN,
      });
      expect(res.status, res.text).toBe(422);
      expect(res.body).toMatchObject({ code: 'UNPROCESSABLE' });
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'path.id', code: 'sandbox_sender' })]);
    }
    expect((await call(srv, 'GET', `/v1/sender-ids/${me.senderId}/brand/status`, { key: k })).body).toEqual({ data: null });
    expect((await call(srv, 'GET', '/v1/programs', { key: k })).body.data).toEqual([]);
    // The manual attach answers the same code and reason.
    const sender = await call(srv, 'POST', '/v1/sender-ids', { key: k, body: { type: 'LONG_CODE', name: 'Own number' } });
    await call(srv, 'POST', `/v1/sender-ids/${sender.body.data.id}/brand/register`, { key: k, body: BRAND });
    const programId = (await call(srv, 'GET', '/v1/programs', { key: k })).body.data[0].id;
    const attach = await call(srv, 'POST', `/v1/programs/${programId}/senders`, {
      key: k,
      body: { senderId: me.senderId, role: 'FALLBACK' },
    });
    expect(attach.status).toBe(422);
    const brand = await call(srv, 'POST', `/v1/sender-ids/${me.senderId}/brand/register`, { key: k, body: BRAND });
    expect({ code: brand.body.code, message: brand.body.message }).toEqual({ code: attach.body.code, message: attach.body.message });
  });
});
