// The Google RBM adapter end to end (service-account auth through google-auth-library) against a fake of the RBM
// API and Google's token endpoint written from Google's public reference (test/support/rbm-fake.ts): an RCS send
// through the API whose capability RBM looked up, DELIVERED and READ events, an inbound reply and a STOP written to
// the agent, Google's webhook verification answered, forged events refused; a repeated send is not sent twice; an
// image asset uploaded through files.create once and sent as uploadedRbmFile.
import { generateKeyPairSync, randomInt, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import sharp from 'sharp';
import { dispatchBatch } from '../src/domain/messaging/dispatch.ts';
import { assembleProviders } from '../src/providers/assemble.ts';
import { RbmProvider, type RbmSettings } from '../src/providers/rbm/adapter.ts';
import { setResolverForTests } from '../src/net/destination-guard.ts';
import { startRbmFake, type RbmFake } from './support/rbm-fake.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

let fake: RbmFake;
let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let rbm: RbmProvider;
let settings: RbmSettings & { media: { ownBaseUrl: string; allowPrivate: boolean } };
let revoked: RbmProvider;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provider-rbm-'));
  fake = await startRbmFake();
  settings = {
    clientEmail: fake.clientEmail,
    privateKey: fake.privateKey,
    webhookClientToken: fake.clientToken,
    apiBaseUrl: fake.baseUrl,
    tokenUrl: fake.tokenUrl,
    timeoutMs: 5000,
    // The server's own address is known once it listens (below).
    media: { ownBaseUrl: 'http://127.0.0.1:1', allowPrivate: false },
  };
  rbm = new RbmProvider({ name: 'PROVIDER_A', settings });
  // PROVIDER_B: the same service account with a key Google no longer accepts (revoked and replaced).
  revoked = new RbmProvider({
    name: 'PROVIDER_B',
    settings: {
      clientEmail: fake.clientEmail,
      privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      webhookClientToken: fake.clientToken,
      apiBaseUrl: fake.baseUrl,
      tokenUrl: fake.tokenUrl,
      timeoutMs: 5000,
    },
  });
  srv = await startTestServer({
    workers: true,
    config: { storage: { kind: 'fs', dir } },
    providers: ({ db, queue }) =>
      assembleProviders({ db, queue, endpoint: { baseUrl: undefined }, real: { PROVIDER_A: rbm, PROVIDER_B: revoked } }),
  });
  // Media links point at this API on a loopback address, which Google could not fetch: the adapter uploads.
  srv.context.config.assetBaseUrl = srv.baseUrl;
  settings.media.ownBaseUrl = srv.baseUrl;
  org = await srv.newOrg('RBM org');
  key = org.apiKey.secret;
});
afterAll(async () => {
  await srv?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function agent(provider: 'PROVIDER_A' | 'PROVIDER_B' = 'PROVIDER_A'): Promise<{ id: string; agentId: string }> {
  const agentId = `acme_${randomUUID().slice(0, 8)}_agent@rbm.goog`;
  const row = await srv.context.db
    .insertInto('sender_ids')
    .values({
      organization_id: org.organizationId,
      name: 'Acme agent',
      type: 'RCS_AGENT',
      status: 'ACTIVE',
      provider,
      phone_number: null,
      address: agentId,
      is_sandbox: false,
      updated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, agentId };
}

async function contact(): Promise<{ id: string; phone: string }> {
  const phone = `+1312${randomInt(2_000_000, 9_999_999)}`;
  const res = await call(srv, 'POST', '/v1/contacts', { key, body: { phone } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, phone };
}

const messageRow = (id: string) =>
  srv.context.db
    .selectFrom('messages')
    .select(['status', 'channel', 'provider', 'provider_message_id'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

async function post(event: unknown, token?: string): Promise<Response> {
  const { body, headers } = fake.signedEvent(event, token);
  return fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, { method: 'POST', headers, body });
}

describe('Google RBM', () => {
  it('answers Google’s webhook verification with the secret, and refuses another client token', async () => {
    const ok = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientToken: fake.clientToken, secret: 'abc123' }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ secret: 'abc123' });
    const other = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientToken: 'not-ours', secret: 'abc123' }),
    });
    expect(other.status).toBe(403);
  });

  it('looks the handset up, sends RCS with our message id as RBM’s messageId, then applies DELIVERED and READ', async () => {
    const a = await agent();
    const c = await contact();
    fake.capable.add(c.phone);
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c.id,
        senderId: a.id,
        channelType: 'RCS',
        messageType: 'TRANSACTIONAL',
        content: { type: 'text', text: 'Your table is ready' },
      },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.data.messageId as string;
    const sent = await until(
      () => messageRow(id),
      (m) => m.status !== 'queued' && m.status !== 'sending',
      'the RBM send',
    );
    expect(sent, fake.violations.join('\n')).toMatchObject({ status: 'sent', provider: 'PROVIDER_A', provider_message_id: id });
    expect(fake.requests.some((r) => r.path.startsWith(`/v1/phones/${encodeURIComponent(c.phone)}/capabilities?requestId=`))).toBe(true);
    const create = fake.requests.find(
      (r) => r.method === 'POST' && r.path.startsWith(`/v1/phones/${encodeURIComponent(c.phone)}/agentMessages`),
    )!;
    expect(new URL(create.path, 'http://x').searchParams.get('messageId')).toBe(id);
    expect(new URL(create.path, 'http://x').searchParams.get('agentId')).toBe(a.agentId);
    expect(create.body).toEqual({ contentMessage: { text: 'Your table is ready' } });

    expect(
      (
        await post({
          eventType: 'DELIVERED',
          eventId: randomUUID(),
          messageId: id,
          senderPhoneNumber: c.phone,
          agentId: a.agentId,
          sendTime: new Date().toISOString(),
        })
      ).status,
    ).toBe(204);
    expect(await messageRow(id)).toMatchObject({ status: 'delivered', channel: 'RCS' });
    expect(
      (
        await post({
          eventType: 'READ',
          eventId: randomUUID(),
          messageId: id,
          senderPhoneNumber: c.phone,
          agentId: a.agentId,
          sendTime: new Date().toISOString(),
        })
      ).status,
    ).toBe(204);
    expect(await messageRow(id)).toMatchObject({ status: 'read' });
    expect(fake.violations).toEqual([]);
  });

  it('a repeated send of one message (its first answer lost) reaches RBM with the same messageId and counts as sent once', async () => {
    const a = await agent();
    const c = await contact();
    const message = {
      dedupeKey: randomUUID(),
      organizationId: org.organizationId,
      sender: { id: a.id, type: 'RCS_AGENT', name: 'Acme agent', phoneNumber: null, address: a.agentId },
      from: 'Acme agent',
      to: c.phone,
      channel: 'RCS' as const,
      body: 'Once',
      title: null,
      mediaUrl: null,
      attempt: 1,
      acceptedAt: new Date(),
      fallbackAllowed: false,
    };
    expect(await rbm.send(message)).toEqual({ providerMessageId: message.dedupeKey });
    expect(await rbm.send({ ...message, attempt: 2 })).toEqual({ providerMessageId: message.dedupeKey });
    const creates = fake.requests.filter((r) => r.method === 'POST' && r.path.includes(`messageId=${message.dedupeKey}`));
    expect(creates).toHaveLength(2);
  });

  it('a media link that does not answer fails its own message (retryable), not the rest of the batch', async () => {
    const a = await agent();
    const base = {
      organizationId: org.organizationId,
      sender: { id: a.id, type: 'RCS_AGENT', name: 'Acme agent', phoneNumber: null, address: a.agentId },
      from: 'Acme agent',
      channel: 'RCS' as const,
      title: null,
      attempt: 1,
      acceptedAt: new Date(),
      fallbackAllowed: false,
    };
    // Loopback links allowed here (WEBHOOK_ALLOW_PRIVATE=1, development only), so the link is tried and gets no answer.
    const lenient = new RbmProvider({
      name: 'PROVIDER_A',
      settings: { ...settings, media: { ownBaseUrl: srv.baseUrl, allowPrivate: true } },
    });
    const [broken, fine] = await lenient.sendBatch([
      // Port 1 on loopback: nothing listens, the download gets no answer.
      { ...base, dedupeKey: randomUUID(), to: (await contact()).phone, body: null, mediaUrl: 'http://127.0.0.1:1/image.png' },
      { ...base, dedupeKey: randomUUID(), to: (await contact()).phone, body: 'Still sent', mediaUrl: null },
    ]);
    expect(broken).toMatchObject({ ok: false, error: { retryable: true, outage: false } });
    expect(fine).toMatchObject({ ok: true });
  });

  it('a client’s media link resolving to a private address is never fetched: only its message fails MEDIA_UNAVAILABLE', async () => {
    const a = await agent();
    const c = await contact();
    fake.capable.add(c.phone);
    // The name resolves to loopback (an internal service, or DNS rebinding): the SSRF guard refuses the connection.
    setResolverForTests(async (host) =>
      host === 'media.rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.215.14', family: 4 }],
    );
    try {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: {
          contactId: c.id,
          senderId: a.id,
          channelType: 'RCS',
          messageType: 'TRANSACTIONAL',
          fallbackToSms: false,
          content: { type: 'media', mediaUrl: 'https://media.rebind.test/cat.png' },
        },
      });
      expect(res.status, res.text).toBe(200);
      const id = res.body.data.messageId as string;
      const done = await until(
        () =>
          srv.context.db
            .selectFrom('messages')
            .select(['status', 'error_code', 'error_message'])
            .where('id', '=', id)
            .executeTakeFirstOrThrow(),
        (m) => m.status === 'failed' || m.status === 'sent',
        'the refused media link',
      );
      expect(done).toEqual({
        status: 'failed',
        error_code: 'MEDIA_UNAVAILABLE',
        error_message: 'The media link was refused: destination resolves to a non-public address.',
      });
      expect(fake.requests.some((r) => r.path.includes(`messageId=${id}`))).toBe(false);
    } finally {
      setResolverForTests(null);
    }
  });

  it('takes a reply and a STOP written to the agent through the shared inbound path', async () => {
    const a = await agent();
    const c = await contact();
    const reply = await post({
      senderPhoneNumber: c.phone,
      messageId: `MsG${randomUUID()}`,
      sendTime: new Date().toISOString(),
      agentId: a.agentId,
      text: 'Thanks!',
    });
    expect(reply.status, await reply.text()).toBe(204);
    const inbound = await srv.context.db
      .selectFrom('messages')
      .select(['channel', 'content'])
      .where('contact_id', '=', c.id)
      .where('direction', '=', 'inbound')
      .execute();
    expect(inbound).toEqual([expect.objectContaining({ channel: 'RCS', content: expect.objectContaining({ text: 'Thanks!' }) })]);
    expect(
      (
        await post({
          senderPhoneNumber: c.phone,
          messageId: `MsG${randomUUID()}`,
          sendTime: new Date().toISOString(),
          agentId: a.agentId,
          text: 'STOP',
        })
      ).status,
    ).toBe(204);
    const optOut = await srv.context.db
      .selectFrom('opt_outs')
      .select('phone')
      .where('organization_id', '=', org.organizationId)
      .where('phone', '=', c.phone)
      .executeTakeFirst();
    expect(optOut).toEqual({ phone: c.phone });
  });

  it('refuses forged events with 403 (another token’s signature, no signature) and malformed signed ones with 400', async () => {
    const a = await agent();
    const c = await contact();
    const event = {
      senderPhoneNumber: c.phone,
      messageId: `MsG${randomUUID()}`,
      sendTime: new Date().toISOString(),
      agentId: a.agentId,
      text: 'forged',
    };
    expect((await post(event, 'another-token')).status).toBe(403);
    const { body } = fake.signedEvent(event);
    expect(
      (
        await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
      ).status,
    ).toBe(403);
    expect(await srv.context.db.selectFrom('messages').select('id').where('contact_id', '=', c.id).execute()).toEqual([]);
    expect((await post({ ...event, text: 42 })).status).toBe(400);
  });

  it('looks the handsets of one claimed batch up in one users:batchGet, not one capabilities call each', async () => {
    const a = await agent();
    const contacts = [await contact(), await contact(), await contact()];
    fake.capable.add(contacts[0]!.phone);
    fake.capable.add(contacts[1]!.phone);
    // RBM answers 429 for a while: the three sends wait, so the dispatcher claims them together afterwards.
    const rbm = srv.context.providers.slot('PROVIDER_A');
    srv.context.providers.guard.record(rbm, { retryAfterSeconds: 6 });
    const blockedUntil = Date.now() + 6000;
    const ids: string[] = [];
    for (const c of contacts) {
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: {
          contactId: c.id,
          senderId: a.id,
          channelType: 'RCS',
          messageType: 'TRANSACTIONAL',
          fallbackToSms: false,
          content: { type: 'text', text: 'Doors open at 8' },
        },
      });
      expect(res.status, res.text).toBe(200);
      ids.push(res.body.data.messageId);
    }
    const rows = () =>
      srv.context.db
        .selectFrom('messages')
        .select(['id', 'status', 'attempts', 'created_at', 'dispatch_at'])
        .where('id', 'in', ids)
        .execute();
    // Each was claimed and put back to wait for the Retry-After (due seconds after its acceptance, no attempt counted).
    await until(
      rows,
      (r) => r.every((m) => m.status === 'queued' && m.attempts === 0 && m.dispatch_at!.getTime() - m.created_at.getTime() > 2000),
      'the three waiting for RBM',
    );
    // Kept from their wake jobs (which then find nothing due) until the rate limit is over; then one dispatch claims
    // the three together, as a blast batch is claimed.
    await sql`update messages set dispatch_at = now() + interval '1 hour' where id = any(${ids}::uuid[])`.execute(srv.context.db);
    await new Promise((r) => setTimeout(r, blockedUntil - Date.now() + 1500));
    await sql`update messages set dispatch_at = now() where id = any(${ids}::uuid[])`.execute(srv.context.db);
    await dispatchBatch(srv.context, [{ data: { messageIds: ids } }]);

    const batch = fake.requests.filter((r) => r.path === '/v1/users:batchGet');
    expect(batch.map((r) => [...r.body.users].sort())).toEqual([contacts.map((c) => c.phone).sort()]);
    for (const c of contacts)
      expect(fake.requests.some((r) => r.path.startsWith(`/v1/phones/${encodeURIComponent(c.phone)}/capabilities`))).toBe(false);
    const statuses = new Map((await rows()).map((m) => [m.id, m.status]));
    expect(ids.map((id) => statuses.get(id))).toEqual(['sent', 'sent', 'failed']);
    const capable = await srv.context.db
      .selectFrom('contacts')
      .select(['id', 'rcs_capable'])
      .where(
        'id',
        'in',
        contacts.map((c) => c.id),
      )
      .execute();
    expect(new Map(capable.map((c) => [c.id, c.rcs_capable]))).toEqual(new Map(contacts.map((c, i) => [c.id, i < 2])));
    expect(fake.violations).toEqual([]);
  });

  it('an agent id belongs to one organization: a second one’s agent with that id is refused, replies reach the first', async () => {
    const a = await agent();
    const other = await srv.newOrg('Another org with the same agent');
    const collision = srv.context.db
      .insertInto('sender_ids')
      .values({
        organization_id: other.organizationId,
        name: 'Copied agent',
        type: 'RCS_AGENT',
        status: 'ACTIVE',
        provider: 'PROVIDER_A',
        phone_number: null,
        address: a.agentId,
        is_sandbox: false,
        updated_at: new Date(),
      })
      .execute();
    await expect(collision).rejects.toMatchObject({ code: '23505', constraint: 'sender_ids_rcs_agent_key' });
    const phone = `+1312${randomInt(2_000_000, 9_999_999)}`;
    const reply = await post({
      senderPhoneNumber: phone,
      messageId: `MsG${randomUUID()}`,
      sendTime: new Date().toISOString(),
      agentId: a.agentId,
      text: 'Hi',
    });
    expect(reply.status, await reply.text()).toBe(204);
    const inbound = await srv.context.db
      .selectFrom('messages')
      .innerJoin('contacts', 'contacts.id', 'messages.contact_id')
      .select(['messages.organization_id', 'messages.sender_id'])
      .where('contacts.phone', '=', phone)
      .where('messages.direction', '=', 'inbound')
      .execute();
    expect(inbound).toEqual([{ organization_id: org.organizationId, sender_id: a.id }]);
  });

  it('uploads an image asset through files.create once and sends it as uploadedRbmFile, twice', async () => {
    const a = await agent();
    const form = new FormData();
    form.append(
      'file',
      new Blob([
        await sharp({ create: { width: 64, height: 48, channels: 3, background: '#2266aa' } })
          .png()
          .toBuffer(),
      ]),
      'logo.png',
    );
    const uploaded = await call(srv, 'POST', '/v1/assets/upload', { key, rawBody: form });
    expect(uploaded.status, uploaded.text).toBe(201);
    const asset = await until(
      async () => (await call(srv, 'GET', `/v1/assets/${uploaded.body.data.id}`, { key })).body.data,
      (x) => x.status !== 'processing',
      'asset processing',
    );
    expect(asset.status).toBe('ready');
    const creates = [];
    for (const c of [await contact(), await contact()]) {
      fake.capable.add(c.phone);
      const res = await call(srv, 'POST', '/v1/messages/send', {
        key,
        body: {
          contactId: c.id,
          senderId: a.id,
          channelType: 'RCS',
          messageType: 'TRANSACTIONAL',
          fallbackToSms: false,
          content: { type: 'media', assetId: asset.id },
        },
      });
      expect(res.status, res.text).toBe(200);
      const id = res.body.data.messageId as string;
      const sent = await until(
        () => messageRow(id),
        (m) => m.status !== 'queued' && m.status !== 'sending',
        'the RBM media send',
      );
      expect(sent, fake.violations.join('\n')).toMatchObject({ status: 'sent', provider: 'PROVIDER_A' });
      creates.push(fake.requests.find((r) => r.method === 'POST' && r.path.includes(`messageId=${id}`))!);
    }
    // One upload for the two sends: the agent's file, the asset's bytes as its link serves them.
    const files = fake.files.filter((f) => f.agentId === a.agentId);
    expect(files).toHaveLength(1);
    expect(files[0]!.contentType).toMatch(/^image\/(png|jpeg)$/);
    expect((await sharp(files[0]!.bytes).metadata()).width).toBe(64);
    for (const create of creates) expect(create.body).toEqual({ contentMessage: { uploadedRbmFile: { fileName: files[0]!.name } } });
    expect(fake.violations).toEqual([]);
  });
});

describe('Google RBM credentials', () => {
  it('a service-account key Google refuses (invalid_grant) fails the message PROVIDER_AUTH_FAILED at once; /health shows it', async () => {
    const a = await agent('PROVIDER_B');
    const c = await contact();
    // Known RCS capable: the send itself meets the refused key (the capability lookup would too).
    await srv.context.db.updateTable('contacts').set({ rcs_capable: true }).where('id', '=', c.id).execute();
    const tokenRequests = fake.requests.filter((r) => r.path === '/token').length;
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: c.id,
        senderId: a.id,
        channelType: 'RCS',
        messageType: 'TRANSACTIONAL',
        fallbackToSms: false,
        content: { type: 'text', text: 'Doors open at 8' },
      },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.data.messageId as string;
    const row = await until(
      () =>
        srv.context.db
          .selectFrom('messages')
          .select(['status', 'error_code', 'error_message', 'cost_units'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      (m) => m.status === 'failed' || m.status === 'sent',
      'the refused send',
    );
    expect(row).toEqual({
      status: 'failed',
      error_code: 'PROVIDER_AUTH_FAILED',
      error_message:
        "RBM refused this service's credentials (Google's token endpoint answered 400 invalid_grant); check RBM_SERVICE_ACCOUNT_KEY_FILE.",
      cost_units: null,
    });
    expect(fake.requests.filter((r) => r.path === '/token').length).toBeGreaterThan(tokenRequests);
    expect(fake.requests.some((r) => r.path.startsWith(`/v1/phones/${encodeURIComponent(c.phone)}/agentMessages`))).toBe(false);
    const health = (await call(srv, 'GET', '/health')).body.providers as Array<Record<string, any>>;
    expect(health.find((p) => p.name === 'PROVIDER_B')).toMatchObject({
      credentialsRefused: true,
      circuit: 'closed',
      consecutiveFailures: 0,
    });
    expect(fake.violations).toEqual([]);
  });
});
