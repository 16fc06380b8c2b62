// Sender IDs section, numbers, through HTTP: searchSenderIdNumbers, purchaseSenderIdNumber (selection proof,
// Toll-Free drafts, Idempotency-Key, reconciliation), importSenderIdNumber, releaseSenderIdNumber,
// listSenderIdNumbers. Every test uses its own area code or toll-free prefix: bought numbers leave the inventory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchNumbers } from '../src/domain/sender-ids/numbers.ts';
import { issueSelectionProof, verifySelectionProof } from '../src/domain/sender-ids/selection-proof.ts';
import type { Services, Tenant } from '../src/domain/tenant.ts';
import { ProviderError } from '../src/providers/provider.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import type { SenderIdStatus } from '../src/db/tables/enums.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let other: Awaited<ReturnType<TestServer['newOrg']>>;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Numbers org');
  other = await srv.newOrg('Other numbers org');
});
afterAll(() => srv.close());

type Row = {
  numberKey: string;
  number: string;
  inventoryType: string;
  provider: string;
  purchasable: boolean;
  selectionProof: string | null;
  capabilities: string[];
  region: string | null;
};

async function search(body: Record<string, unknown>, key = org.apiKey.secret): Promise<Row[]> {
  const res = await call(srv, 'POST', '/v1/sender-ids/numbers/search', { key, body });
  expect(res.status).toBe(200);
  return res.body.data;
}

const evidence = (r: Row) => ({ numberKey: r.numberKey, number: r.number, selectionProof: r.selectionProof! });

const purchase = (body: Record<string, unknown>, opts: { key?: string; idem?: string } = {}) =>
  call(srv, 'POST', '/v1/sender-ids/numbers/purchase', {
    key: opts.key ?? org.apiKey.secret,
    body,
    headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {},
  });

async function draft(organizationId: string, type: 'TOLL_FREE' | 'LONG_CODE', status: SenderIdStatus = 'DRAFT'): Promise<string> {
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: organizationId,
      name: `${type} draft`,
      type,
      status,
      provider: 'PROVIDER_A',
      phone_number: null,
      is_sandbox: false,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function leases(organizationId: string) {
  return srv.context.db.selectFrom('sender_numbers').selectAll().where('organization_id', '=', organizationId).execute();
}

async function assigned(number: string) {
  return srv.context.db.selectFrom('simulator_numbers').selectAll().where('number', '=', number).executeTakeFirst();
}

describe('searchSenderIdNumbers', () => {
  it('finds Local numbers by state and area code; purchasable rows carry a 15-minute proof', async () => {
    const rows = await search({ inventoryType: 'Local', region: 'CA', leadingNumber: '415', limit: 50 });
    expect(rows.length).toBe(40); // 20 lines at each provider
    for (const r of rows) {
      expect(r.number).toMatch(/^\+1415555\d{4}$/);
      expect(r.region).toBe('CA');
      expect(r.inventoryType).toBe('Local');
      expect(Boolean(r.selectionProof)).toBe(r.purchasable);
    }
    expect(rows.filter((r) => !r.purchasable).map((r) => r.number.slice(-2))).toEqual(['09', '09']);
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/search', {
      key: org.apiKey.secret,
      body: { inventoryType: 'Local', leadingNumber: '415', limit: 1 },
    });
    const expires = new Date(res.body.data[0].selectionProofExpiresAt).getTime() - Date.now();
    expect(expires).toBeGreaterThan(14 * 60_000);
    expect(expires).toBeLessThanOrEqual(15 * 60_000);
    // a state filter narrows Local search
    expect(await search({ inventoryType: 'Local', region: 'NY', leadingNumber: '415' })).toEqual([]);
  });

  it('filters by provider and capability, and finds Toll-Free by 8XX prefix plus digits', async () => {
    const b = await search({ inventoryType: 'Local', leadingNumber: '510', provider: 'PROVIDER_B', limit: 50 });
    expect(b.every((r) => r.provider === 'PROVIDER_B')).toBe(true);
    const mms = await search({ inventoryType: 'Local', leadingNumber: '510', capabilities: ['MMS'], limit: 50 });
    expect(mms.some((r) => r.number.endsWith('13'))).toBe(false);
    const tf = await search({ inventoryType: 'Toll-Free', leadingNumber: '8445550', limit: 50 });
    expect(tf.length).toBeGreaterThan(0);
    expect(tf.every((r) => r.number.startsWith('+18445550') && r.region === null)).toBe(true);
  });

  it('answers from the providers that answered; 502 UPSTREAM_ERROR only when none did', async () => {
    const real = srv.providers;
    const flaky = (down: string[]) =>
      ({
        providers: {
          slot: (name: 'PROVIDER_A' | 'PROVIDER_B') => ({
            name,
            searchNumbers: (q: { provider: string }) =>
              down.includes(q.provider) ? Promise.reject(new ProviderError('down')) : real.slot(name).searchNumbers!(q as never),
          }),
        },
      }) as unknown as Services;
    const tenant = { organizationId: org.organizationId } as Tenant;
    const some = await searchNumbers(tenant, flaky(['PROVIDER_A']), { inventoryType: 'Local', leadingNumber: '718', limit: 50 });
    expect(some.length).toBe(20);
    expect(some.every((r) => r.row.provider === 'PROVIDER_B')).toBe(true);
    await expect(searchNumbers(tenant, flaky(['PROVIDER_A', 'PROVIDER_B']), { inventoryType: 'Local' })).rejects.toMatchObject({
      status: 502,
      code: 'UPSTREAM_ERROR',
    });
  });

  it('refuses a state with Toll-Free and a Toll-Free prefix that is not 8XX', async () => {
    for (const body of [
      { inventoryType: 'Toll-Free', region: 'CA' },
      { inventoryType: 'Toll-Free', leadingNumber: '415' },
    ]) {
      const res = await call(srv, 'POST', '/v1/sender-ids/numbers/search', { key: org.apiKey.secret, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('purchaseSenderIdNumber: the selection proof fails closed before any provider call', () => {
  it('refuses each defect with SELECTION_PROOF_INVALID and leaves nothing behind', async () => {
    const [row, second] = (await search({ inventoryType: 'Local', leadingNumber: '212', provider: 'PROVIDER_A' })).filter(
      (r) => r.purchasable,
    );
    const otherRow = (await search({ inventoryType: 'Local', leadingNumber: '212', provider: 'PROVIDER_A' }, other.apiKey.secret)).find(
      (r) => r.number === row!.number,
    )!;
    const sig = row!.selectionProof!;
    const flipped = sig.slice(0, -2) + (sig.at(-2) === 'A' ? 'B' : 'A') + sig.at(-1);
    const [head, payload] = sig.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), exp: 4102444800 })).toString('base64url')}.${sig.split('.')[2]}`;
    const expired = issueSelectionProof(
      { org: org.organizationId, nk: row!.numberKey, n: row!.number, it: 'Local', p: 'PROVIDER_A', c: ['SMS'], m: '1.15' },
      new Date(Date.now() - 16 * 60_000),
    ).proof;
    const tollFreeDraft = await draft(org.organizationId, 'LONG_CODE');
    await srv.context.db.updateTable('sender_ids').set({ provider: 'PROVIDER_B' }).where('id', '=', tollFreeDraft).execute();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['altered signature', { ...evidence(row!), selectionProof: flipped }, 'body.selectionProof'],
      ['altered payload', { ...evidence(row!), selectionProof: forged }, 'body.selectionProof'],
      ['not a proof', { ...evidence(row!), selectionProof: 'x' }, 'body.selectionProof'],
      ['expired', { ...evidence(row!), selectionProof: expired }, 'body.selectionProof'],
      ['another organization', evidence(otherRow), 'body.selectionProof'],
      ['another number', { ...evidence(row!), number: second!.number }, 'body.number'],
      ['another numberKey', { ...evidence(row!), numberKey: second!.numberKey }, 'body.numberKey'],
      ['another row’s proof', { ...evidence(row!), selectionProof: second!.selectionProof }, 'body.numberKey'],
      ['inventory type contradicts', { ...evidence(row!), inventoryType: 'Toll-Free' }, 'body.inventoryType'],
      ['draft at another provider', { ...evidence(row!), draftSenderId: tollFreeDraft }, 'body.draftSenderId'],
    ];
    const senders = async () =>
      await srv.context.db
        .selectFrom('sender_ids')
        .select(['id', 'status', 'phone_number'])
        .where('organization_id', '=', org.organizationId)
        .orderBy('id')
        .execute();
    const sendersBefore = await senders();
    for (const [what, body, field] of cases) {
      const res = await purchase(body);
      expect(await senders(), what).toEqual(sendersBefore);
      expect(res.status, what).toBe(400);
      expect(res.body.code, what).toBe('SELECTION_PROOF_INVALID');
      expect(
        res.body.details.map((d: { field: string }) => d.field),
        what,
      ).toContain(field);
      expect(await leases(org.organizationId), what).toEqual([]);
      expect(await assigned(row!.number), what).toBeUndefined();
      expect(await assigned(second!.number), what).toBeUndefined();
    }
    const expiredAnswer = await purchase({ ...evidence(row!), selectionProof: expired });
    expect(expiredAnswer.body.details[0]).toMatchObject({ code: 'expired' });
    // the untouched row is still for sale
    expect((await search({ inventoryType: 'Local', leadingNumber: '212', limit: 50 })).map((r) => r.number)).toContain(row!.number);
  });

  it('judges a missing evidence field as SELECTION_PROOF_INVALID (the service rule)', () => {
    // Over HTTP a body without a required field is refused by request validation first (VALIDATION_ERROR): see the report.
    expect(() => verifySelectionProof({ organizationId: org.organizationId, numberKey: 'nk', number: '+14155550100' })).toThrow(
      expect.objectContaining({ status: 400, code: 'SELECTION_PROOF_INVALID' }),
    );
  });
});

describe('purchaseSenderIdNumber: Local', () => {
  it('without a draft creates a PENDING, not send-ready LONG_CODE sender and a non-billed PENDING lease; the number leaves search', async () => {
    const row = (await search({ inventoryType: 'Local', leadingNumber: '206' })).find((r) => r.purchasable)!;
    const res = await purchase({ ...evidence(row), inventoryType: 'Local', name: 'Seattle line' });
    expect(res.status).toBe(201);
    const { sender, number } = res.body.data;
    expect(sender).toMatchObject({
      type: 'LONG_CODE',
      status: 'PENDING',
      sendReady: false,
      name: 'Seattle line',
      address: row.number,
      provider: row.provider,
      numberId: number.id,
      protocols: [],
    });
    expect(number).toMatchObject({
      number: row.number,
      numberKey: row.numberKey,
      source: 'PURCHASED',
      status: 'PENDING',
      billingStartedAt: null,
      senderIdId: sender.id,
      region: 'WA',
      locality: 'Seattle',
    });
    expect(number.monthlyCost).toEqual({ amount: row.provider === 'PROVIDER_A' ? '1.15' : '1.00', currency: 'USD' });
    const stored = await srv.context.db.selectFrom('sender_ids').selectAll().where('id', '=', sender.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      status: 'PENDING',
      send_ready: false,
      phone_number: row.number,
      number_id: number.id,
      country_code: 'US',
    });
    expect((await search({ inventoryType: 'Local', leadingNumber: '206', limit: 50 })).map((r) => r.number)).not.toContain(row.number);
    // another organization cannot buy it any more, even with a proof taken before
    const again = (await search({ inventoryType: 'Local', leadingNumber: '206', limit: 50 }, other.apiKey.secret)).find(
      (r) => r.purchasable,
    )!;
    await purchase(evidence(again), { key: other.apiKey.secret });
    const late = await purchase(evidence(again), { key: other.apiKey.secret });
    expect(late.status).toBe(422);
    expect(late.body.code).toBe('UNPROCESSABLE');
  });

  it('answers 409 PURCHASE_NEEDS_RECONCILIATION (replayed, not retried) when the order outcome is unknown', async () => {
    const row = (await search({ inventoryType: 'Local', leadingNumber: '3125550', provider: 'PROVIDER_A', limit: 50 })).find((r) =>
      r.number.endsWith('0117'),
    )!;
    const res = await purchase(evidence(row), { idem: 'recon-1' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('PURCHASE_NEEDS_RECONCILIATION');
    expect(res.body.reconciliation).toMatchObject({
      retryable: false,
      number: row.number,
      upstreamOrderState: 'UNKNOWN',
      senderIdId: null,
    });
    const replay = await purchase(evidence(row), { idem: 'recon-1' });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const list = await call(srv, 'GET', '/v1/sender-ids/numbers?provider=PROVIDER_A', { key: org.apiKey.secret });
    const lease = list.body.data.find((n: { number: string }) => n.number === row.number);
    expect(lease).toMatchObject({ status: 'NEEDS_RECONCILIATION', senderIdId: null, id: res.body.reconciliation.numberId });
    const release = await call(srv, 'DELETE', `/v1/sender-ids/numbers/${lease.id}/release`, { key: org.apiKey.secret });
    expect(release.status).toBe(409);
    expect(release.body.code).toBe('INVALID_STATE');
  });

  it('answers 502 and stores nothing when the provider refuses the order', async () => {
    const row = (await search({ inventoryType: 'Local', leadingNumber: '3125550', provider: 'PROVIDER_A', limit: 50 })).find((r) =>
      r.number.endsWith('0118'),
    )!;
    const before = (await leases(org.organizationId)).length;
    const res = await purchase(evidence(row));
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('UPSTREAM_ERROR');
    expect((await leases(org.organizationId)).length).toBe(before);
  });
});

describe('purchaseSenderIdNumber: Toll-Free', () => {
  it('needs the Idempotency-Key and an owning TOLL_FREE draft in DRAFT of this organization', async () => {
    const row = (await search({ inventoryType: 'Toll-Free', leadingNumber: '833', provider: 'PROVIDER_A' })).find((r) => r.purchasable)!;
    const mine = await draft(org.organizationId, 'TOLL_FREE');
    const cases: Array<[string, Record<string, unknown>, string | undefined, number, string]> = [
      ['no Idempotency-Key', { ...evidence(row), draftSenderId: mine }, undefined, 400, 'VALIDATION_ERROR'],
      ['no draft', evidence(row), 'tf-a', 400, 'VALIDATION_ERROR'],
      [
        'a LONG_CODE draft',
        { ...evidence(row), draftSenderId: await draft(org.organizationId, 'LONG_CODE') },
        'tf-b',
        400,
        'VALIDATION_ERROR',
      ],
      [
        'another organization’s draft',
        { ...evidence(row), draftSenderId: await draft(other.organizationId, 'TOLL_FREE') },
        'tf-c',
        404,
        'NOT_FOUND',
      ],
      [
        'a draft no longer in DRAFT',
        { ...evidence(row), draftSenderId: await draft(org.organizationId, 'TOLL_FREE', 'PENDING') },
        'tf-d',
        409,
        'INVALID_STATE',
      ],
    ];
    for (const [what, body, idem, status, code] of cases) {
      const res = await purchase(body, idem ? { idem } : {});
      expect(res.status, what).toBe(status);
      expect(res.body.code, what).toBe(code);
      expect(await assigned(row.number), what).toBeUndefined();
    }
  });

  it('parallel retries with one Idempotency-Key buy once; the draft becomes the PENDING sender', async () => {
    const row = (await search({ inventoryType: 'Toll-Free', leadingNumber: '866', provider: 'PROVIDER_A' })).find((r) => r.purchasable)!;
    const mine = await draft(org.organizationId, 'TOLL_FREE');
    const body = { ...evidence(row), inventoryType: 'Toll-Free', draftSenderId: mine };
    const answers = await Promise.all(Array.from({ length: 6 }, () => purchase(body, { idem: 'tf-parallel' })));
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(new Set(created.map((a) => a.body.data.number.id)).size).toBe(1);
    const replay = await purchase(body, { idem: 'tf-parallel' });
    expect(replay.status).toBe(201);
    expect(replay.body.data.number.id).toBe(created[0]!.body.data.number.id);
    expect((await leases(org.organizationId)).filter((l) => l.number === row.number)).toHaveLength(1);
    expect(created[0]!.body.data.sender).toMatchObject({
      id: mine,
      type: 'TOLL_FREE',
      status: 'PENDING',
      sendReady: false,
      address: row.number,
    });
    const sender = await srv.context.db.selectFrom('sender_ids').selectAll().where('id', '=', mine).executeTakeFirstOrThrow();
    expect(sender).toMatchObject({ status: 'PENDING', phone_number: row.number });
    const reused = await purchase({ ...body, name: 'x' }, { idem: 'tf-parallel' });
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('importSenderIdNumber, releaseSenderIdNumber, listSenderIdNumbers', () => {
  it('imports a held number as a PENDING sender without a fee; a number already managed is 409', async () => {
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/import', {
      key: org.apiKey.secret,
      body: { number: '+15105550188', provider: 'PROVIDER_B', inventoryType: 'Local', name: 'Store line (Oakland)' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.sender).toMatchObject({ type: 'LONG_CODE', status: 'PENDING', sendReady: false, provider: 'PROVIDER_B' });
    expect(res.body.data.number).toMatchObject({
      source: 'IMPORTED',
      status: 'PENDING',
      numberKey: null,
      monthlyCost: null,
      region: 'CA',
      locality: 'Oakland',
    });
    const dup = await call(srv, 'POST', '/v1/sender-ids/numbers/import', {
      key: other.apiKey.secret,
      body: { number: '+15105550188', provider: 'PROVIDER_B', inventoryType: 'Local' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
  });

  it('a number another organization holds is 409 from our records, before the provider is asked (which would say 422)', async () => {
    // A number the sandbox provider does not confirm (ends in 0422), leased here to the other organization.
    await srv.context.db
      .insertInto('sender_numbers')
      .values({
        organization_id: other.organizationId,
        number: '+13055550422',
        inventory_type: 'Local',
        provider: 'PROVIDER_A',
        source: 'PURCHASED',
        status: 'ACTIVE',
        country_code: 'US',
        capabilities: ['SMS'],
      })
      .execute();
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/import', {
      key: org.apiKey.secret,
      body: { number: '+13055550422', provider: 'PROVIDER_A', inventoryType: 'Local' },
    });
    expect(res.status, res.text).toBe(409);
    expect(res.body.code).toBe('ALREADY_EXISTS');
    await srv.context.db.deleteFrom('sender_numbers').where('number', '=', '+13055550422').execute();
  });

  it('imports a Toll-Free number onto its TOLL_FREE draft', async () => {
    const mine = await draft(org.organizationId, 'TOLL_FREE');
    const res = await call(srv, 'POST', '/v1/sender-ids/numbers/import', {
      key: org.apiKey.secret,
      body: { number: '+18775550777', provider: 'PROVIDER_A', inventoryType: 'Toll-Free', draftSenderId: mine },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.sender).toMatchObject({ id: mine, type: 'TOLL_FREE', status: 'PENDING', address: '+18775550777' });
    expect(res.body.data.number).toMatchObject({ inventoryType: 'Toll-Free', senderIdId: mine, region: null });
    const again = await call(srv, 'POST', '/v1/sender-ids/numbers/import', {
      key: org.apiKey.secret,
      body: { number: '+18775550778', provider: 'PROVIDER_A', inventoryType: 'Toll-Free', draftSenderId: mine },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');
  });

  it('refuses what the provider does not confirm (422), cannot reach (502), or a type that contradicts the number (400)', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ number: '+13055550422', provider: 'PROVIDER_A', inventoryType: 'Local' }, 422, 'UNPROCESSABLE'],
      [{ number: '+13055550502', provider: 'PROVIDER_A', inventoryType: 'Local' }, 502, 'UPSTREAM_ERROR'],
      [{ number: '+13055550123', provider: 'PROVIDER_A', inventoryType: 'Toll-Free' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const res = await call(srv, 'POST', '/v1/sender-ids/numbers/import', { key: org.apiKey.secret, body });
      expect(res.status).toBe(status);
      expect(res.body.code).toBe(code);
    }
  });

  it('releases once: RELEASED, sender DEACTIVATED, repeat answers the same; another organization gets 404', async () => {
    const row = (await search({ inventoryType: 'Local', leadingNumber: '617' })).find((r) => r.purchasable)!;
    const bought = await purchase(evidence(row));
    const id = bought.body.data.number.id;
    const foreign = await call(srv, 'DELETE', `/v1/sender-ids/numbers/${id}/release`, { key: other.apiKey.secret });
    expect(foreign.status).toBe(404);
    const res = await call(srv, 'DELETE', `/v1/sender-ids/numbers/${id}/release`, { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'RELEASED' });
    expect(res.body.data.releasedAt).not.toBeNull();
    const again = await call(srv, 'DELETE', `/v1/sender-ids/numbers/${id}/release`, { key: org.apiKey.secret });
    expect(again.body.data).toEqual(res.body.data);
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .selectAll()
      .where('id', '=', bought.body.data.sender.id)
      .executeTakeFirstOrThrow();
    expect(sender).toMatchObject({ status: 'DEACTIVATED', send_ready: false, phone_number: null, address: row.number });
    expect(sender.deactivated_at).not.toBeNull();
  });

  it('lists newest first with paging and the provider filter; only the organization’s own numbers', async () => {
    const all = await call(srv, 'GET', '/v1/sender-ids/numbers?limit=2', { key: org.apiKey.secret });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect(all.body.pagination.total).toBe((await leases(org.organizationId)).length);
    expect(all.body.pagination.hasMore).toBe(true);
    const page2 = await call(srv, 'GET', '/v1/sender-ids/numbers?limit=2&page=2', { key: org.apiKey.secret });
    expect(page2.body.data[0].id).not.toBe(all.body.data[0].id);
    const b = await call(srv, 'GET', '/v1/sender-ids/numbers?provider=PROVIDER_B&limit=100', { key: org.apiKey.secret });
    expect(b.body.data.length).toBeGreaterThan(0);
    expect(b.body.data.every((n: { provider: string }) => n.provider === 'PROVIDER_B')).toBe(true);
    const theirs = await call(srv, 'GET', '/v1/sender-ids/numbers?limit=100', { key: other.apiKey.secret });
    const mine = new Set((await leases(org.organizationId)).map((l) => l.id));
    expect(theirs.body.data.length).toBeGreaterThan(0);
    expect(theirs.body.data.some((n: { id: string }) => mine.has(n.id))).toBe(false);
  });

  it('needs sender-ids:create to purchase (403 with a read-only key)', async () => {
    const key = await srv.newKey(org.organizationId, ['sender-ids:read']);
    const row = (await search({ inventoryType: 'Local', leadingNumber: '214' }, key.secret)).find((r) => r.purchasable)!;
    const res = await purchase(evidence(row), { key: key.secret });
    expect(res.status).toBe(403);
    expect(await assigned(row.number)).toBeUndefined();
  });
});
