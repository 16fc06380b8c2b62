// A small Telnyx API v2 fake written from Telnyx's public reference (developers.telnyx.com: "Send a message",
// "List available phone numbers", "Create a number order", "Receiving webhooks"). It checks each request as Prism
// would check it against Telnyx's document — method and path, `Authorization: Bearer <API key>`, JSON body, the
// required fields and their formats — answering 401/422 with Telnyx's error shape when one is wrong, and records
// every refusal (`violations`). It signs webhooks exactly as Telnyx does: Ed25519 over "<timestamp>|<raw body>"
// with the account's key pair (generated here), base64 in Telnyx-Signature-Ed25519, Unix seconds in Telnyx-Timestamp.
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type TelnyxFake = {
  baseUrl: string;
  apiKey: string;
  /** Base64 of the raw 32-byte Ed25519 public key, as Mission Control shows it. */
  publicKey: string;
  requests: Array<{ method: string; path: string; body: any }>;
  violations: string[];
  /** The next `count` calls answer `status` (429 with Retry-After, 500 …) instead. */
  failNext: (status: number, count?: number, headers?: Record<string, string>) => void;
  /** Headers Telnyx would send with `body` (timestamp now, or `at` seconds). */
  signedHeaders: (body: string, at?: number, key?: KeyObject) => Record<string, string>;
  close: () => Promise<void>;
};

const E164 = /^\+[1-9]\d{6,14}$/;

export async function startTelnyxFake(): Promise<TelnyxFake> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url');
  const apiKey = `KEY${randomUUID().replace(/-/g, '')}`;
  const requests: TelnyxFake['requests'] = [];
  const violations: string[] = [];
  let failures: { status: number; count: number; headers: Record<string, string> } | undefined;

  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, status: number, what: string) => {
    violations.push(what);
    answer(res, status, { errors: [{ code: status === 401 ? '10009' : '10002', title: 'Invalid request', detail: what }] });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    let body: any = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        return refuse(res, 422, `${req.method} ${url.pathname}: body is not JSON`);
      }
    }
    requests.push({ method: req.method ?? '', path: url.pathname + url.search, body });
    if (req.headers.authorization !== `Bearer ${apiKey}`) return refuse(res, 401, `${req.method} ${url.pathname}: no Bearer API key`);
    if (failures && failures.count > 0) {
      failures.count -= 1;
      return answer(res, failures.status, { errors: [{ code: String(failures.status), title: 'injected' }] }, failures.headers);
    }
    if (req.method === 'POST' && url.pathname === '/v2/messages') {
      if (!String(req.headers['content-type']).startsWith('application/json')) return refuse(res, 422, 'POST /v2/messages: not JSON');
      if (typeof body?.to !== 'string' || !E164.test(body.to)) return refuse(res, 422, 'POST /v2/messages: to must be E.164');
      if (body.from === undefined && body.messaging_profile_id === undefined)
        return refuse(res, 422, 'POST /v2/messages: from or messaging_profile_id');
      if (body.from !== undefined && !E164.test(body.from)) return refuse(res, 422, 'POST /v2/messages: from must be E.164');
      if (body.text === undefined && !body.media_urls?.length) return refuse(res, 422, 'POST /v2/messages: text or media_urls');
      if (body.text !== undefined && typeof body.text !== 'string') return refuse(res, 422, 'POST /v2/messages: text must be a string');
      if (body.webhook_url !== undefined && !/^https?:\/\//.test(body.webhook_url))
        return refuse(res, 422, 'POST /v2/messages: webhook_url must be a URL');
      if (body.type !== undefined && !['SMS', 'MMS'].includes(body.type)) return refuse(res, 422, 'POST /v2/messages: type');
      const known = new Set([
        'to',
        'from',
        'messaging_profile_id',
        'text',
        'media_urls',
        'subject',
        'type',
        'webhook_url',
        'webhook_failover_url',
        'use_profile_webhooks',
        'auto_detect',
        'encoding',
        'send_at',
      ]);
      const unknown = Object.keys(body).filter((k) => !known.has(k));
      if (unknown.length) return refuse(res, 422, `POST /v2/messages: unknown fields ${unknown.join(', ')}`);
      return answer(res, 200, {
        data: {
          record_type: 'message',
          direction: 'outbound',
          id: randomUUID(),
          type: body.type ?? 'SMS',
          from: { phone_number: body.from ?? null },
          to: [{ phone_number: body.to, status: 'queued' }],
          text: body.text ?? null,
          webhook_url: body.webhook_url ?? null,
        },
      });
    }
    if (req.method === 'GET' && url.pathname === '/v2/available_phone_numbers') {
      const type = url.searchParams.get('filter[phone_number_type]');
      if (type && !['local', 'toll_free', 'mobile', 'national', 'shared_cost'].includes(type))
        return refuse(res, 422, 'available_phone_numbers: phone_number_type');
      const starts = url.searchParams.get('filter[phone_number][starts_with]') ?? '';
      const number = `+1${(starts + '5550123456').slice(0, 10)}`;
      return answer(res, 200, {
        data: [
          {
            record_type: 'available_phone_number',
            phone_number: number,
            features: [{ name: 'sms' }, { name: 'mms' }, { name: 'voice' }],
            region_information: [
              { region_type: 'state', region_name: 'CA' },
              { region_type: 'rate_center', region_name: 'SAN FRANCISCO' },
            ],
            cost_information: { monthly_cost: '1.00', upfront_cost: '1.00', currency: 'USD' },
          },
        ],
        metadata: { total_results: 1 },
      });
    }
    if (req.method === 'POST' && url.pathname === '/v2/number_orders') {
      if (!Array.isArray(body?.phone_numbers) || !body.phone_numbers.every((p: any) => E164.test(p?.phone_number ?? '')))
        return refuse(res, 422, 'POST /v2/number_orders: phone_numbers[].phone_number');
      return answer(res, 200, {
        data: { id: randomUUID(), record_type: 'number_order', status: 'pending', phone_numbers: body.phone_numbers },
      });
    }
    return refuse(res, 404, `${req.method} ${url.pathname}: no such Telnyx operation`);
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v2`,
    apiKey,
    publicKey: raw.toString('base64'),
    requests,
    violations,
    failNext: (status, count = 1, headers = {}) => void (failures = { status, count, headers }),
    signedHeaders: (body, at = Math.floor(Date.now() / 1000), key = privateKey) => ({
      'content-type': 'application/json',
      'telnyx-timestamp': String(at),
      'telnyx-signature-ed25519': sign(null, Buffer.from(`${at}|${body}`), key).toString('base64'),
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
