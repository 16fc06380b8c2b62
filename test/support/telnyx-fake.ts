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
  /** Numbers attached to 10DLC campaigns (POST /v2/10dlc/phone_number_campaigns). */
  assignments: Array<{ phoneNumber: string; campaignId: string; assignmentStatus: string; createdAt: string; updatedAt: string }>;
  /** The next `count` calls answer `status` (429 with Retry-After, 500 …) instead. */
  failNext: (status: number, count?: number, headers?: Record<string, string>) => void;
  /** Headers Telnyx would send with `body` (timestamp now, or `at` seconds). */
  signedHeaders: (body: string, at?: number, key?: KeyObject) => Record<string, string>;
  close: () => Promise<void>;
};

const E164 = /^\+[1-9]\d{6,14}$/;

/** One field of a request body as Telnyx's reference types it. */
type Field = {
  type: 'string' | 'boolean' | 'integer[]' | 'string[]';
  required?: boolean;
  enum?: readonly string[];
  format?: 'email' | 'uri';
};

const ENTITY_TYPES = ['PRIVATE_PROFIT', 'PUBLIC_PROFIT', 'NON_PROFIT', 'GOVERNMENT', 'SOLE_PROPRIETOR'] as const;
const VERTICALS = [
  'AGRICULTURE',
  'COMMUNICATION',
  'CONSTRUCTION',
  'EDUCATION',
  'ENERGY',
  'ENTERTAINMENT',
  'FINANCIAL',
  'GAMBLING',
  'GOVERNMENT',
  'HEALTHCARE',
  'HOSPITALITY',
  'HUMAN_RESOURCES',
  'INSURANCE',
  'LEGAL',
  'MANUFACTURING',
  'NGO',
  'POLITICAL',
  'POSTAL',
  'PROFESSIONAL',
  'REAL_ESTATE',
  'RETAIL',
  'TECHNOLOGY',
  'TRANSPORTATION',
] as const;
const STOCK_EXCHANGES = [
  'NONE',
  'NASDAQ',
  'NYSE',
  'AMEX',
  'AMX',
  'ASX',
  'B3',
  'BME',
  'BSE',
  'FRA',
  'ICEX',
  'JPX',
  'JSE',
  'KRX',
  'LON',
  'NSE',
  'OMX',
  'SEHK',
  'SSE',
  'STO',
  'SWX',
  'SZSE',
  'TSX',
  'TWSE',
  'VSE',
] as const;
/** TCR's use cases as Telnyx's campaign builder takes them. */
const USECASES = [
  '2FA',
  'ACCOUNT_NOTIFICATION',
  'CUSTOMER_CARE',
  'DELIVERY_NOTIFICATION',
  'FRAUD_ALERT',
  'HIGHER_EDUCATION',
  'LOW_VOLUME',
  'MARKETING',
  'MIXED',
  'POLLING_VOTING',
  'PUBLIC_SERVICE_ANNOUNCEMENT',
  'SECURITY_ALERT',
  'AGENTS_FRANCHISES',
  'CHARITY',
  'EMERGENCY',
  'K12_EDUCATION',
  'POLITICAL',
  'SOLE_PROPRIETOR',
  'SWEEPSTAKE',
  'CARRIER_EXEMPT',
  'PROXY',
  'UCAAS_LOW',
  'UCAAS_HIGH',
  'M2M',
  'TRIAL',
] as const;

/** POST /v2/10dlc/brand (Create Brand). */
const BRAND_FIELDS: Record<string, Field> = {
  entityType: { type: 'string', required: true, enum: ENTITY_TYPES },
  displayName: { type: 'string', required: true },
  country: { type: 'string', required: true },
  email: { type: 'string', required: true, format: 'email' },
  vertical: { type: 'string', required: true, enum: VERTICALS },
  companyName: { type: 'string' },
  ein: { type: 'string' },
  firstName: { type: 'string' },
  lastName: { type: 'string' },
  phone: { type: 'string' },
  mobilePhone: { type: 'string' },
  street: { type: 'string' },
  city: { type: 'string' },
  state: { type: 'string' },
  postalCode: { type: 'string' },
  website: { type: 'string', format: 'uri' },
  stockSymbol: { type: 'string' },
  stockExchange: { type: 'string', enum: STOCK_EXCHANGES },
  isReseller: { type: 'boolean' },
  mock: { type: 'boolean' },
  ipAddress: { type: 'string' },
  businessContactEmail: { type: 'string', format: 'email' },
  webhookURL: { type: 'string', format: 'uri' },
  webhookFailoverURL: { type: 'string', format: 'uri' },
};

/** POST /v2/10dlc/campaignBuilder (Submit Campaign). */
const CAMPAIGN_FIELDS: Record<string, Field> = {
  brandId: { type: 'string', required: true },
  description: { type: 'string', required: true },
  usecase: { type: 'string', required: true, enum: USECASES },
  subUsecases: { type: 'string[]' },
  messageFlow: { type: 'string' },
  ...Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`sample${i}`, { type: 'string' } as Field])),
  optinKeywords: { type: 'string' },
  optoutKeywords: { type: 'string' },
  helpKeywords: { type: 'string' },
  optinMessage: { type: 'string' },
  optoutMessage: { type: 'string' },
  helpMessage: { type: 'string' },
  embeddedLink: { type: 'boolean' },
  embeddedLinkSample: { type: 'string' },
  embeddedPhone: { type: 'boolean' },
  numberPool: { type: 'boolean' },
  ageGated: { type: 'boolean' },
  directLending: { type: 'boolean' },
  autoRenewal: { type: 'boolean' },
  privacyPolicyLink: { type: 'string', format: 'uri' },
  termsAndConditions: { type: 'boolean' },
  termsAndConditionsLink: { type: 'string', format: 'uri' },
  subscriberOptin: { type: 'boolean' },
  subscriberOptout: { type: 'boolean' },
  subscriberHelp: { type: 'boolean' },
  mnoIds: { type: 'integer[]' },
  referenceId: { type: 'string' },
  resellerId: { type: 'string' },
  tag: { type: 'string[]' },
  webhookURL: { type: 'string', format: 'uri' },
  webhookFailoverURL: { type: 'string', format: 'uri' },
};

/** POST /v2/10dlc/phone_number_campaigns (Create New Phone Number Campaign). */
const ASSIGNMENT_FIELDS: Record<string, Field> = {
  phoneNumber: { type: 'string', required: true },
  campaignId: { type: 'string', required: true },
};

/** What Prism would say about `body` against these fields: the first problem, or null. */
function checkFields(body: unknown, fields: Record<string, Field>): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object';
  const b = body as Record<string, unknown>;
  for (const [name, f] of Object.entries(fields)) {
    const v = b[name];
    if (v === undefined) {
      if (f.required) return `${name} is required`;
      continue;
    }
    if (f.type === 'string' && (typeof v !== 'string' || v === '')) return `${name} must be a non-empty string`;
    if (f.type === 'boolean' && typeof v !== 'boolean') return `${name} must be a boolean`;
    if (f.type === 'string[]' && (!Array.isArray(v) || !v.every((x) => typeof x === 'string')))
      return `${name} must be an array of strings`;
    if (f.type === 'integer[]' && (!Array.isArray(v) || !v.every((x) => Number.isInteger(x))))
      return `${name} must be an array of integers`;
    if (f.enum && !f.enum.includes(v as string)) return `${name} must be one of ${f.enum.join(', ')}`;
    if (f.format === 'email' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v as string)) return `${name} must be an e-mail address`;
    if (f.format === 'uri' && !/^https?:\/\/\S+$/.test(v as string)) return `${name} must be a URL`;
  }
  const unknown = Object.keys(b).filter((k) => !(k in fields));
  return unknown.length ? `unknown fields ${unknown.join(', ')}` : null;
}

export async function startTelnyxFake(): Promise<TelnyxFake> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url');
  const apiKey = `KEY${randomUUID().replace(/-/g, '')}`;
  const requests: TelnyxFake['requests'] = [];
  const violations: string[] = [];
  let failures: { status: number; count: number; headers: Record<string, string> } | undefined;
  const brands = new Map<string, any>();
  const campaigns = new Map<string, any>();
  const assignments: TelnyxFake['assignments'] = [];
  const brandView = ({ reads: _, ...brand }: any) => ({ ...brand, createdAt: brand.createdAt ?? new Date().toISOString() });
  const campaignView = ({ reads: _, ...campaign }: any) => campaign;

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
    const authorization = req.headers.authorization ?? '';
    if (!/^Bearer \S+$/.test(authorization)) return refuse(res, 401, `${req.method} ${url.pathname}: no Bearer API key`);
    // Another key (wrong or revoked): Telnyx's own answer, not a malformed request.
    if (authorization !== `Bearer ${apiKey}`)
      return answer(res, 401, {
        errors: [{ code: '10009', title: 'Authentication failed', detail: 'Could not understand the provided credentials.' }],
      });
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
    const tenDlc = tenDlcOperation(req.method ?? '', url, body);
    if (tenDlc) {
      if ('violation' in tenDlc) return refuse(res, tenDlc.status, tenDlc.violation);
      return answer(res, tenDlc.status, tenDlc.body);
    }
    return refuse(res, 404, `${req.method} ${url.pathname}: no such Telnyx operation`);
  };

  /**
   * The 10DLC operations, checked against Telnyx's reference (developers.telnyx.com, "10DLC": Create Brand,
   * Get Brand, List Brands, Submit Campaign (campaign builder), Get Campaign, Create New Phone Number Campaign): the
   * required fields, their types and enums, no field the reference does not name. Answers are the reference's
   * objects, unwrapped (the 10DLC API sends no `data` envelope). Outcomes follow the registration, like the
   * carrier sandbox's magic words: a brand whose displayName has REJECT fails registration, a campaign whose
   * description has REJECT is rejected by the carriers (MNO_REJECTED), with Telnyx's `failureReasons`; anything else
   * is accepted on the second read (the first answers it pending).
   */
  const tenDlcOperation = (
    method: string,
    url: URL,
    body: any,
  ): { status: number; body: unknown } | { status: number; violation: string } | undefined => {
    const path = url.pathname;
    const bad = (violation: string) => ({ status: 400, violation: `${method} ${path}: ${violation}` });
    if (method === 'POST' && path === '/v2/10dlc/brand') {
      const problem = checkFields(body, BRAND_FIELDS);
      if (problem) return bad(problem);
      if (body.entityType !== 'SOLE_PROPRIETOR' && (!body.companyName || !body.ein))
        return bad('companyName and ein are required unless entityType is SOLE_PROPRIETOR');
      const brandId = randomUUID();
      const brand = { ...body, brandId, brandRelationship: 'BASIC_ACCOUNT', status: 'REGISTRATION_PENDING', reads: 0 };
      brands.set(brandId, brand);
      return { status: 200, body: brandView(brand) };
    }
    let m: RegExpExecArray | null;
    if (method === 'GET' && (m = /^\/v2\/10dlc\/brand\/([^/]+)$/.exec(path))) {
      const brand = brands.get(decodeURIComponent(m[1]!));
      if (!brand) return { status: 404, body: { errors: [{ code: '10005', title: 'Resource not found', detail: 'Brand not found' }] } };
      brand.reads += 1;
      if (brand.reads >= 2 && brand.status === 'REGISTRATION_PENDING') {
        if (/REJECT/i.test(brand.displayName)) {
          brand.status = 'REGISTRATION_FAILED';
          brand.identityStatus = 'UNVERIFIED';
          brand.failureReasons = 'The EIN and company name do not match the IRS records.';
        } else {
          brand.status = 'OK';
          brand.identityStatus = 'VERIFIED';
          brand.tcrBrandId = `B${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`;
        }
      }
      return { status: 200, body: brandView(brand) };
    }
    if (method === 'GET' && path === '/v2/10dlc/brand') {
      const per = Number(url.searchParams.get('recordsPerPage') ?? '10');
      if (!Number.isInteger(per) || per < 1) return bad('recordsPerPage must be a positive integer');
      const records = [...brands.values()].slice(0, per).map(brandView);
      return { status: 200, body: { page: 1, records, totalRecords: brands.size } };
    }
    if (method === 'POST' && path === '/v2/10dlc/campaignBuilder') {
      const problem = checkFields(body, CAMPAIGN_FIELDS);
      if (problem) return bad(problem);
      const brand = brands.get(body.brandId);
      if (!brand) return bad(`brandId ${body.brandId} is no brand of the account`);
      if (brand.status !== 'OK') return bad(`the brand is ${brand.status}, not OK`);
      const campaignId = randomUUID();
      const campaign = { ...body, campaignId, campaignStatus: 'TCR_PENDING', reads: 0 };
      campaigns.set(campaignId, campaign);
      return { status: 200, body: campaignView(campaign) };
    }
    if (method === 'GET' && (m = /^\/v2\/10dlc\/campaign\/([^/]+)$/.exec(path))) {
      const campaign = campaigns.get(decodeURIComponent(m[1]!));
      if (!campaign)
        return { status: 404, body: { errors: [{ code: '10005', title: 'Resource not found', detail: 'Campaign not found' }] } };
      campaign.reads += 1;
      if (campaign.reads >= 2 && campaign.campaignStatus === 'TCR_PENDING') {
        if (/REJECT/i.test(campaign.description)) {
          campaign.campaignStatus = 'MNO_REJECTED';
          campaign.failureReasons = 'T-Mobile: the sample messages do not match the use case.';
        } else {
          campaign.campaignStatus = 'MNO_PROVISIONED';
          campaign.tcrCampaignId = `C${randomUUID().replace(/-/g, '').slice(0, 6).toUpperCase()}`;
        }
      }
      return { status: 200, body: campaignView(campaign) };
    }
    if (method === 'POST' && path === '/v2/10dlc/phone_number_campaigns') {
      const problem = checkFields(body, ASSIGNMENT_FIELDS);
      if (problem) return bad(problem);
      if (!E164.test(body.phoneNumber)) return bad('phoneNumber must be E.164');
      if (!campaigns.has(body.campaignId)) return bad(`campaignId ${body.campaignId} is no campaign of the account`);
      const now = new Date().toISOString();
      const assignment = {
        phoneNumber: body.phoneNumber,
        campaignId: body.campaignId,
        assignmentStatus: 'PENDING_ASSIGNMENT',
        createdAt: now,
        updatedAt: now,
      };
      assignments.push(assignment);
      return { status: 200, body: assignment };
    }
    return undefined;
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
    assignments,
    failNext: (status, count = 1, headers = {}) => void (failures = { status, count, headers }),
    signedHeaders: (body, at = Math.floor(Date.now() / 1000), key = privateKey) => ({
      'content-type': 'application/json',
      'telnyx-timestamp': String(at),
      'telnyx-signature-ed25519': sign(null, Buffer.from(`${at}|${body}`), key).toString('base64'),
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
