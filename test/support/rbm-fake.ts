// A small fake of Google's RCS Business Messaging API v1 and its OAuth token endpoint, written from Google's public
// reference (developers.google.com/business-communications/rcs-business-messaging/reference/rest: phones.agentMessages
// create/delete, phones.capabilities, users.batchGet, phones.testers, files.create as a multipart media upload;
// "Verify incoming messages"). It checks each
// request as Prism would check it against the reference — method, path, required query parameters and body,
// the bearer token it issued — and the token request itself (a JWT assertion signed RS256 by the service account's
// key, for the rcsbusinessmessaging scope), recording every refusal (`violations`). Events are sent as the agent
// webhook receives them: {message: {data: base64(JSON), messageId, publishTime}} with X-Goog-Signature, the base64
// HMAC-SHA512 of the decoded data keyed with the webhook client token.
import { createHmac, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export type RbmFake = {
  baseUrl: string;
  tokenUrl: string;
  clientEmail: string;
  privateKey: string;
  clientToken: string;
  /** Phones the fake reports RCS capable. */
  capable: Set<string>;
  /** Message ids the handset has received (revoke is too late for them). */
  delivered: Set<string>;
  requests: Array<{ method: string; path: string; body: any }>;
  /** Files uploaded through files.create: their name, agent, content type and bytes. */
  files: Array<{ name: string; agentId: string; contentType: string; bytes: Buffer }>;
  violations: string[];
  failNext: (status: number, count?: number, headers?: Record<string, string>) => void;
  /** The body and headers of an agent webhook post carrying `event`. */
  signedEvent: (event: unknown, token?: string) => { body: string; headers: Record<string, string> };
  close: () => Promise<void>;
};

const E164 = /^\+[1-9]\d{6,14}$/;
/** The content types files.create takes (Google's reference): images, audio, video and PDF. */
const FILE_TYPES = new Set([
  'image/jpeg',
  'image/jpg',
  'image/gif',
  'image/png',
  'audio/aac',
  'audio/mp3',
  'audio/mpeg',
  'audio/mpg',
  'audio/mp4',
  'audio/mp4-latm',
  'audio/3gpp',
  'application/ogg',
  'audio/ogg',
  'video/h263',
  'video/m4v',
  'video/mp4',
  'video/mpeg',
  'video/mpeg4',
  'video/webm',
  'application/pdf',
]);

/** The parts of a multipart/related body: each part's headers (lower-cased names) and bytes; null when malformed. */
function relatedParts(raw: Buffer, boundary: string): Array<{ headers: Record<string, string>; bytes: Buffer }> | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ headers: Record<string, string>; bytes: Buffer }> = [];
  let at = raw.indexOf(delimiter);
  if (at !== 0) return null;
  for (;;) {
    const start = at + delimiter.length;
    if (raw.subarray(start, start + 2).toString() === '--') return parts;
    if (raw.subarray(start, start + 2).toString() !== '\r\n') return null;
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (next < 0) return null;
    const part = raw.subarray(start + 2, next);
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) return null;
    const headers = Object.fromEntries(
      part
        .subarray(0, split)
        .toString()
        .split('\r\n')
        .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    parts.push({ headers, bytes: part.subarray(split + 4) });
    at = next + 2;
  }
}

export async function startRbmFake(): Promise<RbmFake> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = `rbm-partner@project-${randomUUID().slice(0, 8)}.iam.gserviceaccount.com`;
  const clientToken = randomUUID();
  const accessToken = `ya29.${randomUUID()}`;
  const capable = new Set<string>();
  const delivered = new Set<string>();
  const sent = new Set<string>();
  const requests: RbmFake['requests'] = [];
  const files: RbmFake['files'] = [];
  const violations: string[] = [];
  let failures: { status: number; count: number; headers: Record<string, string> } | undefined;
  let tokenUrl = '';

  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: ServerResponse, code: number, status: string, message: string) =>
    answer(res, code, { error: { code, status, message } });
  const refuse = (res: ServerResponse, code: number, what: string) => {
    violations.push(what);
    googleError(res, code, code === 401 ? 'UNAUTHENTICATED' : 'INVALID_ARGUMENT', what);
  };

  const checkAssertion = (assertion: string): string | null => {
    const [h, p, s] = assertion.split('.');
    if (!h || !p || !s) return 'assertion is not a JWT';
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'))) return 'assertion signature';
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    if (claims.iss !== clientEmail) return 'assertion iss';
    if (!String(claims.scope).includes('https://www.googleapis.com/auth/rcsbusinessmessaging')) return 'assertion scope';
    return null;
  };

  /** files.create on the upload URI, multipart: the JSON metadata ({agentId}, no fileUrl), then the file. */
  const upload = (req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) => {
    requests.push({ method: 'POST', path: url.pathname + url.search, body: { bytes: raw.length } });
    if (req.headers.authorization !== `Bearer ${accessToken}`) return refuse(res, 401, 'files.create: no bearer token');
    if (url.searchParams.get('uploadType') !== 'multipart') return refuse(res, 400, 'files.create: uploadType=multipart');
    const type = /^multipart\/related;\s*boundary=("?)([^";]+)\1$/i.exec(req.headers['content-type'] ?? '');
    if (!type) return refuse(res, 400, 'files.create: content-type multipart/related with a boundary');
    const parts = relatedParts(raw, type[2]!);
    if (!parts || parts.length !== 2) return refuse(res, 400, 'files.create: two parts (metadata, then the file)');
    const [meta, file] = parts as [(typeof parts)[0], (typeof parts)[0]];
    if (!/^application\/json\b/.test(meta.headers['content-type'] ?? '')) return refuse(res, 400, 'files.create: JSON metadata');
    let metadata: any;
    try {
      metadata = JSON.parse(meta.bytes.toString('utf8'));
    } catch {
      return refuse(res, 400, 'files.create: metadata is not JSON');
    }
    if (typeof metadata?.agentId !== 'string' || !metadata.agentId) return refuse(res, 400, 'files.create: agentId');
    if (metadata.fileUrl !== undefined) return refuse(res, 400, 'files.create: fileUrl with a binary upload');
    const contentType = file.headers['content-type'] ?? '';
    if (!FILE_TYPES.has(contentType)) return refuse(res, 400, `files.create: content type ${contentType}`);
    if (file.bytes.length === 0) return refuse(res, 400, 'files.create: empty file');
    const name = `files/${randomUUID().replaceAll('-', '')}`;
    files.push({ name, agentId: metadata.agentId, contentType, bytes: Buffer.from(file.bytes) });
    return answer(res, 200, { name });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    if (req.method === 'POST' && path === '/upload/v1/files') return upload(req, res, url, raw);
    const text = raw.toString('utf8');
    let body: any;
    if (req.method === 'POST' && path === '/token') {
      const form = new URLSearchParams(text);
      requests.push({ method: 'POST', path, body: Object.fromEntries(form) });
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(res, 400, 'token: grant_type');
      const problem = checkAssertion(form.get('assertion') ?? '');
      // Signed by another key (the account's key revoked or replaced): Google's own answer, not a malformed request.
      if (problem === 'assertion signature')
        return answer(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      if (problem) return refuse(res, 400, `token: ${problem}`);
      return answer(res, 200, { access_token: accessToken, expires_in: 3600, token_type: 'Bearer' });
    }
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return refuse(res, 400, `${req.method} ${path}: body is not JSON`);
    }
    requests.push({ method: req.method ?? '', path: path + url.search, body });
    if (req.headers.authorization !== `Bearer ${accessToken}`) return refuse(res, 401, `${req.method} ${path}: no bearer token`);
    if (failures && failures.count > 0) {
      failures.count -= 1;
      return answer(res, failures.status, { error: { code: failures.status, status: 'INJECTED' } }, failures.headers);
    }
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && (m = /^\/v1\/phones\/([^/]+)\/agentMessages$/.exec(path))) {
      const phone = decodeURIComponent(m[1]!);
      const messageId = url.searchParams.get('messageId');
      if (!E164.test(phone)) return refuse(res, 400, 'agentMessages.create: phone');
      if (!messageId || !url.searchParams.get('agentId')) return refuse(res, 400, 'agentMessages.create: messageId and agentId');
      const c = body?.contentMessage;
      if (!c || (c.text === undefined && !c.contentInfo?.fileUrl && !c.richCard && !c.uploadedRbmFile))
        return refuse(res, 400, 'agentMessages.create: contentMessage');
      if (c.uploadedRbmFile && !files.some((f) => f.name === c.uploadedRbmFile.fileName))
        return refuse(res, 400, 'agentMessages.create: uploadedRbmFile.fileName names no uploaded file');
      if (c.text !== undefined && (typeof c.text !== 'string' || c.text.length > 3072))
        return refuse(res, 400, 'agentMessages.create: text');
      if (sent.has(messageId)) return googleError(res, 409, 'ALREADY_EXISTS', 'messageId already used');
      sent.add(messageId);
      return answer(res, 200, {
        name: `phones/${phone}/agentMessages/${messageId}`,
        sendTime: new Date().toISOString(),
        contentMessage: c,
      });
    }
    if (req.method === 'DELETE' && (m = /^\/v1\/phones\/([^/]+)\/agentMessages\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(m[2]!);
      if (!sent.has(id) || delivered.has(id)) return googleError(res, 404, 'NOT_FOUND', 'no such undelivered message');
      return answer(res, 200, {});
    }
    if (req.method === 'GET' && (m = /^\/v1\/phones\/([^/]+)\/capabilities$/.exec(path))) {
      const phone = decodeURIComponent(m[1]!);
      if (!url.searchParams.get('requestId')) return refuse(res, 400, 'capabilities: requestId');
      return capable.has(phone)
        ? answer(res, 200, { features: ['RICHCARD_STANDALONE', 'ACTION_DIAL'] })
        : googleError(res, 404, 'NOT_FOUND', 'not RCS');
    }
    if (req.method === 'POST' && path === '/v1/users:batchGet') {
      if (!Array.isArray(body?.users)) return refuse(res, 400, 'users:batchGet: users');
      return answer(res, 200, { reachableUsers: body.users.filter((u: string) => capable.has(u)), totalRandomSampleUserCount: 0 });
    }
    if (req.method === 'POST' && (m = /^\/v1\/phones\/([^/]+)\/testers$/.exec(path))) {
      return answer(res, 200, { name: `phones/${decodeURIComponent(m[1]!)}/testers`, inviteStatus: 'PENDING' });
    }
    return refuse(res, 404, `${req.method} ${path}: no such RBM method`);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  tokenUrl = `${base}/token`;
  return {
    baseUrl: base,
    tokenUrl,
    clientEmail,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    clientToken,
    capable,
    delivered,
    requests,
    files,
    violations,
    failNext: (status, count = 1, headers = {}) => void (failures = { status, count, headers }),
    signedEvent: (event, token = clientToken) => {
      const data = Buffer.from(JSON.stringify(event));
      const body = JSON.stringify({
        message: { data: data.toString('base64'), messageId: randomUUID(), publishTime: new Date().toISOString() },
        subscription: 'projects/rbm/subscriptions/agent',
      });
      return {
        body,
        headers: { 'content-type': 'application/json', 'x-goog-signature': createHmac('sha512', token).update(data).digest('base64') },
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
