// Public sign-ups as an attacker would send them, against a server with the default configuration (no
// TRUST_PROXY): each request comes from a loopback address of its own (127.x.y.z), so the connection's address is
// the client's and tests never share a rate-limit bucket.
import { randomInt } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let org: Awaited<ReturnType<TestServer['newOrg']>>;
let key: string;
let listId: string;

beforeAll(async () => {
  srv = await startTestServer();
  org = await srv.newOrg('Public sign-up org');
  key = org.apiKey.secret;
  listId = (await call(srv, 'POST', '/v1/tags', { key, body: { name: 'Public list' } })).body.data.id;
});
afterAll(() => srv.close());

let seq = 0;
const phone = () => `+1415555${String(5000 + seq++).padStart(4, '0')}`;
/** A loopback address no other request of the run uses: the connection's address, i.e. one real client. */
const client = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

type Answer = { status: number; body: any; headers: Record<string, string | string[] | undefined> };

/** POST `body` as JSON from the local address `from`. */
function postFrom(from: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(srv.baseUrl + path);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } },
      (res) => {
        let raw = '';
        res.on('data', (chunk: Buffer) => (raw += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: raw ? JSON.parse(raw) : undefined, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const enroll = (campaignId: string, body: Record<string, unknown>, from = client(), headers: Record<string, string> = {}) =>
  postFrom(from, `/public/acquisition/${campaignId}/enroll`, { consent: true, ...body }, headers);

async function campaign(body: Record<string, unknown> = {}) {
  const res = await call(srv, 'POST', '/acquisition-campaigns', { key, body: { name: 'Spring club', type: 'WEB_FORM', listId, status: 'ACTIVE', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; confirmedOptIn: boolean; allowedCountries: string[] | null; maxSignupsPerHour: number };
}

describe('the client address', () => {
  it('is the connection’s: forged X-Forwarded-For values share one client’s 10 a minute, and another client is not affected', async () => {
    const c = await campaign({ welcomeMessage: null });
    const attacker = client();
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push((await enroll(c.id, { phone: phone() }, attacker, { 'x-forwarded-for': `198.51.100.${i + 1}, 203.0.113.${i + 1}` })).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429, 429, 429, 429]);
    const rows = await srv.context.db.selectFrom('acquisition_enrollments').select('ip').where('campaign_id', '=', c.id).execute();
    expect(rows.map((r) => r.ip)).toEqual(Array<string>(10).fill(attacker));
    // Without the header, another caller has a bucket of its own (not one `unknown` for everybody).
    expect((await enroll(c.id, { phone: phone() })).status).toBe(200);
  });

  it('TRUST_PROXY is read as express reads `trust proxy`, and a bad value stops the start', () => {
    const of = (v: string | undefined) => loadConfig({ NODE_ENV: 'test', ...(v === undefined ? {} : { TRUST_PROXY: v }) }).trustProxy;
    expect(of(undefined)).toBe(false);
    expect(of('false')).toBe(false);
    expect(of('true')).toBe(true);
    expect(of('2')).toBe(2);
    expect(of('10.0.0.0/8, loopback')).toBe('10.0.0.0/8, loopback');
    expect(() => of('10.0.0.0/33')).toThrow(/TRUST_PROXY/);
    expect(() => of('proxy.example')).toThrow(/TRUST_PROXY/);
  });
});

