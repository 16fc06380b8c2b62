// Google RCS Business Messaging (RBM API v1, REST) with service-account auth from google-auth-library (JWT, scope
// rcsbusinessmessaging):
//   - send: POST phones/{E.164}/agentMessages?messageId=<our message id>&agentId=<the sender's agent>: the message id
//     is RBM's idempotency key, so a repeated attempt answers 409 ALREADY_EXISTS and counts as sent, never twice;
//   - revoke: DELETE phones/{E.164}/agentMessages/{message id} (404: already delivered, too late);
//   - capability: GET phones/{E.164}/capabilities (404: not RCS capable), and users:batchGet for many;
//   - testers: POST phones/{E.164}/testers;
//   - media: the adapter downloads the message's media link and uploads its bytes with files.create (POST
//     upload/v1/files?uploadType=multipart, multipart/related: the JSON metadata {agentId}, then the file), then
//     sends contentMessage.uploadedRbmFile.fileName, never contentInfo.fileUrl. Why: our media links are signed and
//     differ per message (Google asks for one URL per file and fetches every new one), and ASSET_BASE_URL may be a
//     private address Google cannot reach. Google keeps an upload for 60 days; the file name is kept here for 30
//     (per agent and sha256 of the bytes, in memory), so a file sent again is not uploaded again. A link under the
//     service's own ASSET_BASE_URL (signed by it) is fetched as it is; any other link is the API client's, fetched
//     through the SSRF guard (src/net/guarded-fetch.ts): one resolving to a private, loopback or link-local address
//     fails that message alone (MEDIA_UNAVAILABLE) and is never fetched;
//   - the agent webhook: Google's verification post ({clientToken, secret}: answered with {secret} when the client
//     token is ours) and Pub/Sub-style events whose X-Goog-Signature is the base64 HMAC-SHA512 of message.data
//     (decoded) keyed with the webhook client token; refused with 403 otherwise. DELIVERED / READ events become
//     receipts of our message id; user messages (text, suggestion responses, files) inbound messages.
// RCS only: no SMS/MMS (the domain does not hand RBM a fallback), no numbers, registry, voice or templates (422).
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { JWT } from 'google-auth-library';
import { checkCallbacks } from '../callback-shape.ts';
import {
  ProviderError,
  ProviderRejection,
  type CallbackParse,
  type CallbackRequest,
  type Channel,
  type MessagingProvider,
  type OutboundMessage,
  type ProviderName,
  type RcsTesterInvite,
  type SendOutcome,
  type SentMessageRef,
} from '../provider.ts';
import { authFailed, statusFailure, unanswered } from '../provider-answer.ts';
import { DestinationRefusedError, UnresolvedHostError } from '../../net/destination-guard.ts';
import { guardedFetch, type GuardedFetch } from '../../net/guarded-fetch.ts';
import { sendEach } from '../send-each.ts';

export type RbmSettings = {
  /** The service account's client_email and private_key (its JSON key file). */
  clientEmail: string;
  privateKey: string;
  /** The partner's webhook client token: verifies X-Goog-Signature and Google's webhook verification. */
  webhookClientToken: string;
  /** Replaces https://rcsbusinessmessaging.googleapis.com (a proxy; a contract fake in the tests). */
  apiBaseUrl?: string | undefined;
  /** Replaces https://oauth2.googleapis.com/token (the same). */
  tokenUrl?: string | undefined;
  timeoutMs?: number | undefined;
  /**
   * Where media links may point (see the header): the service's own ASSET_BASE_URL, fetched as it is (it may be a
   * private address), and whether other links may reach private addresses (WEBHOOK_ALLOW_PRIVATE: development only).
   */
  media?: { ownBaseUrl: string; allowPrivate: boolean } | undefined;
};

const API = 'https://rcsbusinessmessaging.googleapis.com';
const TOKEN = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';

type Answer = { status: number; body: any };
/** A raw request body (the files upload): sent as given, with its content type. */
type RawBody = { contentType: string; bytes: Buffer };

/** Google keeps an uploaded file 60 days; its name is reused for half that, so it never names an expired file. */
const FILE_NAME_TTL_MS = 30 * 24 * 3600 * 1000;
/** Uploaded file names kept (oldest forgotten first): a bound on memory, not on correctness. */
const FILE_NAME_CACHE_SIZE = 10_000;
/** RBM's limit for a media file (100 MB): a larger download is refused before it is held in memory. */
const MAX_MEDIA_BYTES = 100 * 1024 * 1024;

export class RbmProvider implements MessagingProvider {
  readonly name: ProviderName;
  readonly kind = 'rbm' as const;
  readonly channels: ReadonlySet<Channel> = new Set<Channel>(['RCS']);
  private readonly settings: RbmSettings;
  private readonly auth: JWT;
  private readonly base: string;
  /** `${agentId} ${sha256}` → { files/… name, when it was uploaded }. */
  private readonly uploaded = new Map<string, { name: string; at: number }>();
  /** Fetches the API clients' media links (not our own) where the SSRF rules allow. */
  private readonly clientMedia: GuardedFetch;

  constructor(opts: { name: ProviderName; settings: RbmSettings }) {
    this.name = opts.name;
    this.settings = opts.settings;
    this.base = (opts.settings.apiBaseUrl ?? API).replace(/\/+$/, '');
    this.auth = new JWT({ email: opts.settings.clientEmail, key: opts.settings.privateKey, scopes: [SCOPE] });
    this.clientMedia = guardedFetch(opts.settings.media?.allowPrivate ?? false, { maxResponseBytes: MAX_MEDIA_BYTES });
    const tokenUrl = opts.settings.tokenUrl;
    if (tokenUrl) {
      // google-auth-library posts the service account's signed assertion to Google's fixed token URL.
      this.auth.transporter.interceptors.request.add({
        resolved: async (config) => {
          if (String(config.url) === TOKEN) config.url = new URL(tokenUrl);
          return config;
        },
      });
    }
  }

  /**
   * One authenticated RBM call: 429, 5xx and 401/403 as every adapter reads them (../provider-answer.ts), no answer
   * an outage; a token Google refuses to issue (the service account's key revoked or wrong: 400 invalid_grant, 401
   * invalid_client) is refused credentials too, while a token endpoint that does not answer is an outage.
   */
  private async call(method: string, path: string, body?: unknown, raw?: RawBody): Promise<Answer> {
    let headers: Record<string, string>;
    try {
      const auth = await this.auth.getRequestHeaders();
      headers = { authorization: auth.get('authorization') ?? '' };
    } catch (error) {
      throw tokenFailure(error);
    }
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          ...headers,
          ...(raw ? { 'content-type': raw.contentType } : body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(raw ? { body: new Uint8Array(raw.bytes) } : body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 15_000),
      });
    } catch (error) {
      throw unanswered(RBM, error);
    }
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    const status = parsed?.error?.status;
    const failure = statusFailure(res.status, RBM, {
      retryAfter: res.headers.get('retry-after') ?? undefined,
      reason: typeof status === 'string' ? `RBM_${status}` : null,
    });
    if (failure) throw failure;
    return { status: res.status, body: parsed };
  }

  private static refusal(answer: Answer): ProviderRejection {
    const status = answer.body?.error?.status ?? `HTTP_${answer.status}`;
    return new ProviderRejection(`RBM_${status}`, answer.body?.error?.message ?? `RBM answered ${answer.status}`);
  }

  async send(m: OutboundMessage): Promise<{ providerMessageId: string }> {
    if (m.channel !== 'RCS') throw new ProviderRejection('CHANNEL_UNSUPPORTED', `RBM carries RCS only, not ${m.channel}.`);
    const agentId = m.sender.address;
    if (!agentId) throw new ProviderRejection('SENDER_NOT_CONFIGURED', 'The RCS sender has no agent id.');
    const contentMessage = m.mediaUrl
      ? { uploadedRbmFile: { fileName: await this.uploadedFile(agentId, m.mediaUrl) } }
      : { text: [m.title, m.body].filter((x) => x !== null && x !== '').join('\n') };
    const query = new URLSearchParams({ messageId: m.dedupeKey, agentId });
    const answer = await this.call('POST', `/v1/phones/${encodeURIComponent(m.to)}/agentMessages?${query}`, { contentMessage });
    // 409 ALREADY_EXISTS: an earlier attempt with this message id was accepted; the handset gets it once.
    if (answer.status === 200 || answer.status === 409) return { providerMessageId: m.dedupeKey };
    throw RbmProvider.refusal(answer);
  }

  /** The files/… name of the media at `url` for `agentId`: uploaded once per agent and content (see the header). */
  private async uploadedFile(agentId: string, url: string): Promise<string> {
    const media = await download(url, this.isOwn(url) ? fetch : this.clientMedia);
    const key = `${agentId} ${createHash('sha256').update(media.bytes).digest('hex')}`;
    const known = this.uploaded.get(key);
    if (known && Date.now() - known.at < FILE_NAME_TTL_MS) return known.name;
    const boundary = `rbm-${randomUUID()}`;
    const bytes = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify({ agentId })}\r\n` +
          `--${boundary}\r\ncontent-type: ${media.contentType}\r\n\r\n`,
      ),
      media.bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await this.call('POST', '/upload/v1/files?uploadType=multipart', undefined, {
      contentType: `multipart/related; boundary=${boundary}`,
      bytes,
    });
    const name = answer.body?.name;
    if (answer.status !== 200 || typeof name !== 'string') throw RbmProvider.refusal(answer);
    this.uploaded.delete(key);
    this.uploaded.set(key, { name, at: Date.now() });
    if (this.uploaded.size > FILE_NAME_CACHE_SIZE) this.uploaded.delete(this.uploaded.keys().next().value!);
    return name;
  }

  /** Whether `url` is one of the service's own links (under its ASSET_BASE_URL), not an API client's. */
  private isOwn(url: string): boolean {
    const own = this.settings.media?.ownBaseUrl;
    if (!own) return false;
    const base = new URL(own);
    let link: URL;
    try {
      link = new URL(url);
    } catch {
      return false;
    }
    return link.origin === base.origin && link.pathname.startsWith(base.pathname.replace(/\/*$/, '/'));
  }

  sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]> {
    return sendEach(messages, {
      concurrency: 1,
      send: (m) => this.send(m),
      failure: (error) => {
        if (error instanceof ProviderError || error instanceof ProviderRejection) return error;
        throw error;
      },
      // RBM down or rate limiting: the rest of the batch waits too; one message's unreachable media link does not.
      halts: (e) => e.outage,
    });
  }

  async checkRcsCapability(phone: string): Promise<{ rcsCapable: boolean }> {
    const answer = await this.call(
      'GET',
      `/v1/phones/${encodeURIComponent(phone)}/capabilities?${new URLSearchParams({ requestId: randomUUID() })}`,
    );
    if (answer.status === 200) return { rcsCapable: true };
    if (answer.status === 404) return { rcsCapable: false };
    throw new ProviderError(`RBM capability lookup answered ${answer.status}`, { outage: false });
  }

  async checkRcsCapabilities(phones: string[]): Promise<Map<string, boolean>> {
    const answer = await this.call('POST', '/v1/users:batchGet', { users: phones });
    if (answer.status !== 200) throw new ProviderError(`RBM users:batchGet answered ${answer.status}`, { outage: false });
    const reachable = new Set<string>(answer.body?.reachableUsers ?? []);
    return new Map(phones.map((p) => [p, reachable.has(p)]));
  }

  async revoke(message: SentMessageRef): Promise<boolean> {
    const answer = await this.call(
      'DELETE',
      `/v1/phones/${encodeURIComponent(message.to)}/agentMessages/${encodeURIComponent(message.dedupeKey)}`,
    );
    if (answer.status === 200) return true;
    if (answer.status === 404) return false;
    throw RbmProvider.refusal(answer);
  }

  async inviteRcsTester(request: { agentId: string | null; phone: string }): Promise<RcsTesterInvite> {
    const query = request.agentId ? `?${new URLSearchParams({ agentId: request.agentId })}` : '';
    const answer = await this.call('POST', `/v1/phones/${encodeURIComponent(request.phone)}/testers${query}`, {});
    if (answer.status !== 200) return { status: 'FAILED', acceptedAt: null };
    return answer.body?.inviteStatus === 'ACCEPTED'
      ? { status: 'ACCEPTED', acceptedAt: new Date() }
      : { status: 'INVITED', acceptedAt: null };
  }

  async parseCallback(request: CallbackRequest): Promise<CallbackParse> {
    let body: any;
    try {
      body = JSON.parse(request.rawBody);
    } catch {
      return { ok: false, status: 403, reason: 'not an RBM webhook' };
    }
    const token = Buffer.from(this.settings.webhookClientToken);
    // Google's webhook verification: echo the secret when the client token is ours.
    if (typeof body?.clientToken === 'string' && typeof body?.secret === 'string' && !body.message) {
      const given = Buffer.from(body.clientToken);
      if (given.length !== token.length || !timingSafeEqual(given, token))
        return { ok: false, status: 403, reason: 'another client token' };
      return { ok: true, callbacks: [], reply: { status: 200, body: { secret: body.secret } } };
    }
    const signature = request.headers['x-goog-signature'];
    const data = body?.message?.data;
    if (!signature || typeof data !== 'string') return { ok: false, status: 403, reason: 'no X-Goog-Signature' };
    const decoded = Buffer.from(data, 'base64');
    const expected = createHmac('sha512', this.settings.webhookClientToken).update(decoded).digest();
    const given = Buffer.from(signature, 'base64');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, status: 403, reason: 'X-Goog-Signature does not match' };
    let event: any;
    try {
      event = JSON.parse(decoded.toString('utf8'));
    } catch {
      return { ok: false, status: 400, reason: 'message.data is not JSON' };
    }
    const callbacks = callbacksOf(event);
    if (!Array.isArray(callbacks)) return { ok: false, status: 400, reason: callbacks.problem };
    const checked = checkCallbacks(callbacks);
    return checked.ok ? { ok: true, callbacks: checked.callbacks } : { ok: false, status: 400, reason: checked.reason };
  }
}

const RBM = { provider: 'RBM', credentials: 'RBM_SERVICE_ACCOUNT_KEY_FILE' };

/**
 * Why Google issued no token: its token endpoint answered 4xx (the key is revoked, deleted or not the account's:
 * invalid_grant, invalid_client), which is refused credentials; no answer or a 5xx is an outage.
 */
function tokenFailure(error: unknown): ProviderError {
  const e = error as { status?: number; response?: { status?: number; data?: { error?: unknown } } };
  const status = e.response?.status ?? e.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && status !== 429) {
    const code = e.response?.data?.error;
    return authFailed(RBM, `Google's token endpoint answered ${status}${typeof code === 'string' ? ` ${code}` : ''}`);
  }
  return new ProviderError(`Google did not issue a token (${(error as Error)?.message ?? 'no answer'})`, { outage: true });
}

/**
 * The media's bytes and content type: a link the SSRF guard refuses, or one answering 4xx, is the message's fault
 * (rejection); no answer a retry.
 */
async function download(
  url: string,
  get: (url: string, init: RequestInit) => Promise<Response>,
): Promise<{ contentType: string; bytes: Buffer }> {
  let res: Response;
  try {
    res = await get(url, { signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    if (error instanceof DestinationRefusedError && !(error instanceof UnresolvedHostError))
      throw new ProviderRejection('MEDIA_UNAVAILABLE', `The media link was refused: ${error.message}.`);
    throw new ProviderError(`the media link did not answer (${(error as Error).message})`, { outage: false });
  }
  if (res.status >= 500) throw new ProviderError(`the media link answered ${res.status}`, { outage: false });
  if (!res.ok) throw new ProviderRejection('MEDIA_UNAVAILABLE', `The media link answered ${res.status}.`);
  if (Number(res.headers.get('content-length') ?? 0) > MAX_MEDIA_BYTES)
    throw new ProviderRejection('MEDIA_UNAVAILABLE', 'RBM takes media files up to 100 MB.');
  let bytes: Buffer;
  try {
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (error) {
    // The guarded fetch cuts a body past the limit that announced no length.
    if (/larger than/.test((error as Error).message))
      throw new ProviderRejection('MEDIA_UNAVAILABLE', 'RBM takes media files up to 100 MB.');
    throw new ProviderError(`the media link broke off (${(error as Error).message})`, { outage: false });
  }
  if (bytes.length > MAX_MEDIA_BYTES) throw new ProviderRejection('MEDIA_UNAVAILABLE', 'RBM takes media files up to 100 MB.');
  return { contentType: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim(), bytes };
}

function callbacksOf(e: any): unknown[] | { problem: string } {
  const at = typeof e?.sendTime === 'string' ? e.sendTime : new Date().toISOString();
  if (typeof e?.eventType === 'string') {
    const status = e.eventType === 'DELIVERED' ? 'delivered' : e.eventType === 'READ' ? 'read' : undefined;
    // IS_TYPING and other events record nothing.
    if (!status) return [];
    return [{ type: 'receipt', providerMessageId: e.messageId, dedupeKey: e.messageId, status, channel: 'RCS', at }];
  }
  if (e?.text !== undefined || e?.suggestionResponse || e?.userFile) {
    return [
      {
        type: 'inbound',
        providerMessageId: e.messageId,
        from: e.senderPhoneNumber,
        to: e.agentId,
        channel: 'RCS',
        text: e.text ?? e.suggestionResponse?.text ?? null,
        postback: e.suggestionResponse?.postbackData ?? null,
        mediaUrl: e.userFile?.payload?.fileUri ?? null,
        at,
      },
    ];
  }
  return { problem: 'neither an agent event nor a user message' };
}
