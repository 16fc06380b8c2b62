// Tracked links (issue 34 item 4), through HTTP, the dispatch worker and the carrier simulator: with `trackLinks`
// the handset receives short links on the service's public address, each a 302 to its message's original URL that
// counts a click for the message's blast; a forged or altered code answers 404; without `trackLinks` the text goes
// as written. The redirect is limited per client address: past it 429 with Retry-After, and no click counted.
import { randomInt } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_REDIRECT_LIMIT } from '../src/domain/links/redirect.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';

const BASE = 'https://go.example.test';
let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let seq = 0;

beforeAll(async () => {
  srv = await startTestServer({ workers: true, config: { assetBaseUrl: BASE } });
  org = await srv.newOrg('Links org');
  key = org.apiKey.secret;
});
afterAll(() => srv.close());

async function contact(): Promise<string> {
  const row = await srv.context.db
    .insertInto('contacts')
    .values({
      organization_id: org.organizationId,
      phone: `+1415666${String(++seq).padStart(3, '0')}9`, // not RCS-capable in the sandbox: SMS
      attributes: '{}',
      rcs_capable: false,
      consent_type: 'MARKETING',
      time_zone: 'UTC',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** What the handset received for the message, once the simulator has it. */
const received = (messageId: string) =>
  until(
    () => srv.context.db.selectFrom('simulator_messages').select('body').where('dedupe_key', '=', messageId).executeTakeFirst(),
    (r) => r !== undefined,
  ).then((r) => r!.body ?? '');

/** GET on a tracked link without following it; its path on this server. */
const visit = (link: string, method = 'GET') => fetch(srv.baseUrl + new URL(link).pathname, { method, redirect: 'manual' });

const LINK = new RegExp(`${BASE.replace(/\./g, '\\.')}/l/[A-Za-z0-9_-]{12}`, 'g');

const TEXT = 'Sale: https://shop.example.com/sale?c=1. Map: https://maps.example.com/x, again https://shop.example.com/sale?c=1';

describe('tracked links', () => {
  it('a direct send with trackLinks: the handset gets short links; GET → 302 to the original; forged → 404', async () => {
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: await contact(), messageType: 'TRANSACTIONAL', trackLinks: true, content: { type: 'text', text: TEXT } },
    });
    expect(res.status, res.text).toBe(200);
    const body = await received(res.body.data.messageId);
    const links = body.match(LINK) ?? [];
    // Two distinct URLs, the first twice: one link each, the same link for the repeat; punctuation stays outside.
    expect(links).toHaveLength(3);
    expect(links[0]).toBe(links[2]);
    expect(links[0]).not.toBe(links[1]);
    expect(body).toBe(`Sale: ${links[0]}. Map: ${links[1]}, again ${links[0]}`);
    expect(body).not.toContain('shop.example.com');

    const first = await visit(links[0]!);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('https://shop.example.com/sale?c=1');
    expect((await visit(links[1]!)).headers.get('location')).toBe('https://maps.example.com/x');
    // HEAD looks without counting.
    expect((await visit(links[0]!, 'HEAD')).status).toBe(302);
    const row = await srv.context.db
      .selectFrom('message_links')
      .select(['clicks', 'contact_id'])
      .where('code', '=', new URL(links[0]!).pathname.slice(3))
      .executeTakeFirstOrThrow();
    expect(row.clicks).toBe(1);

    // A code of another link of the message, a changed character, an unknown one, a malformed one: 404.
    const code = new URL(links[0]!).pathname.slice(3);
    const altered = code.slice(0, 5) + (code[5] === 'A' ? 'B' : 'A') + code.slice(6);
    for (const forged of [altered, `${code.slice(0, 11)}z`, 'AAAAAAAAAAA0', 'x', `${code}0`, '..%2F..%2Fv1']) {
      const r = await fetch(`${srv.baseUrl}/l/${forged}`, { redirect: 'manual' });
      expect(r.status, forged).toBe(404);
      expect(r.headers.get('location')).toBeNull();
    }
  });

  it('an openUrl action is tracked too', async () => {
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: await contact(),
        messageType: 'TRANSACTIONAL',
        trackLinks: true,
        content: { type: 'text', text: 'Your order shipped.', actions: [{ text: 'Track', url: 'https://shop.example.com/o/1' }] },
      },
    });
    expect(res.status, res.text).toBe(200);
    const message = (await call(srv, 'GET', `/v1/messages/${res.body.data.messageId}`, { key })).body.data;
    const url: string = message.content.actions[0].url;
    expect(url).toMatch(LINK);
    expect((await visit(url)).headers.get('location')).toBe('https://shop.example.com/o/1');
    const body = await received(res.body.data.messageId);
    expect(body).toBe(`Your order shipped.\nTrack: ${url}`);
  });

  it('segments and cost are those of the rewritten text: 155 characters as written, 179 as sent, 2 segments', async () => {
    const text = `${'A'.repeat(140)} https://x.co/a`;
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: await contact(), messageType: 'TRANSACTIONAL', trackLinks: true, content: { type: 'text', text } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ segments: 2, estimatedCost: { amount: '0.0078', currency: 'USD' } });
    const id: string = res.body.data.messageId;
    expect((await received(id)).length).toBe(179);
    const message = await until(
      () => call(srv, 'GET', `/v1/messages/${id}`, { key }),
      (r) => r.body.data.cost !== null,
    );
    expect(message.body.data).toMatchObject({ segments: 2, cost: { amount: '0.0078', currency: 'USD' } });
  });

  it('without trackLinks the text is sent as written', async () => {
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: { contactId: await contact(), messageType: 'TRANSACTIONAL', content: { type: 'text', text: TEXT } },
    });
    expect(res.status, res.text).toBe(200);
    expect(await received(res.body.data.messageId)).toBe(TEXT);
    const links = await srv.context.db
      .selectFrom('message_links')
      .select('code')
      .where('message_id', '=', res.body.data.messageId)
      .execute();
    expect(links).toEqual([]);
  });

  it("a blast with trackLinks: each recipient's own links; the messages clicked counted in the blast's stats", async () => {
    const [a, b] = [await contact(), await contact()];
    const blast = await call(srv, 'POST', '/v1/blasts', {
      key,
      body: {
        name: 'Linked sale',
        senderId: org.senderId,
        messageType: 'TRANSACTIONAL',
        trackLinks: true,
        contactIds: [a, b],
        contentJson: { type: 'text', text: 'Sale now: https://shop.example.com/sale' },
      },
    });
    expect(blast.status, blast.text).toBe(201);
    expect(blast.body.trackLinks).toBe(true);
    const blastId: string = blast.body.id;
    expect((await call(srv, 'POST', `/v1/blasts/${blastId}/launch`, { key })).status).toBe(200);
    const messages = await until(
      () => srv.context.db.selectFrom('messages').select('id').where('blast_id', '=', blastId).execute(),
      (rows) => rows.length === 2,
    );
    const bodies = await Promise.all(messages.map((m) => received(m.id)));
    const links = bodies.map((t) => t.match(LINK)?.[0]);
    expect(links[0]).toBeDefined();
    expect(links[0]).not.toBe(links[1]);
    expect((await call(srv, 'GET', `/v1/blasts/${blastId}/stats`, { key })).body.clicks).toBe(0);
    for (const link of [links[0]!, links[0]!, links[1]!]) {
      const r = await visit(link);
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe('https://shop.example.com/sale');
    }
    const stats = await call(srv, 'GET', `/v1/blasts/${blastId}/stats`, { key });
    expect(stats.status, stats.text).toBe(200);
    // Three visits by two recipients: two messages clicked, each once however often.
    expect(stats.body).toMatchObject({ clicks: 2, delivered: 2, rates: { click: 1 } });
  });

  it('the redirect is limited per client address: past 60 a minute, 429 RATE_LIMITED with Retry-After, and no click counted', async () => {
    const res = await call(srv, 'POST', '/v1/messages/send', {
      key,
      body: {
        contactId: await contact(),
        messageType: 'TRANSACTIONAL',
        trackLinks: true,
        content: { type: 'text', text: 'Rate: https://shop.example.com/r' },
      },
    });
    expect(res.status, res.text).toBe(200);
    const link = (await received(res.body.data.messageId)).match(LINK)![0];
    const code = new URL(link).pathname.slice(3);
    const clicks = async () =>
      (await srv.context.db.selectFrom('message_links').select('clicks').where('code', '=', code).executeTakeFirstOrThrow()).clicks;
    // Two clients, each the connection's own loopback address (no TRUST_PROXY here): one hammers, one visits once.
    const address = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const [hammer, other] = [address(), address()];
    expect(LINK_REDIRECT_LIMIT).toEqual({ points: 60, durationSeconds: 60 });
    for (let i = 0; i < 60; i++) expect((await visitFrom(hammer, `/l/${code}`)).status).toBe(302);
    expect(await clicks()).toBe(60);

    const refused = await visitFrom(hammer, `/l/${code}`);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers.location).toBeUndefined();
    expect((await visitFrom(hammer, `/l/${code}`, 'HEAD')).status).toBe(429); // a look counts too
    expect(await clicks()).toBe(60);

    expect((await visitFrom(other, `/l/${code}`)).status).toBe(302);
    expect(await clicks()).toBe(61);
  });
});

/** A request to this server from the local address `from` (the client's address as the server sees it). */
function visitFrom(
  from: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(srv.baseUrl + path);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, localAddress: from }, (res) => {
      let raw = '';
      res.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: raw, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}
