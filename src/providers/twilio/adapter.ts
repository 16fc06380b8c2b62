// Twilio (Programmable Messaging, REST API 2010-04-01) on the official SDK:
//   - SMS/MMS from the sender's number, or through the Messaging Service (TWILIO_MESSAGING_SERVICE_SID) for a sender
//     without one; RCS through the Messaging Service only (its RCS sender), where Twilio falls back to SMS/MMS itself
//     when fallback is allowed (`To` plain) and never when it is not (`To` as rcs:+E.164);
//   - every message names its StatusCallback: our callback route with our message id (`ref`) and the planned channel
//     (`ch`) in the query, so a receipt finds its message and a Twilio fallback is reported as one;
//   - number search (AvailablePhoneNumbers), purchase and release (IncomingPhoneNumbers), ownership for imports;
//   - callbacks (status callbacks and the number's inbound webhook) verified with X-Twilio-Signature through the
//     SDK's validateRequest (HMAC over the URL Twilio posted to and the form fields) and refused with 403 otherwise.
// Twilio keeps no idempotency key on Messages: a repeated attempt (attempt > 1, the previous outcome unknown) looks
// for the message it may have created since the message was accepted (same To, From and body) and reuses it, and
// sends `Attempt` so Twilio counts it. Revoke is Twilio's cancel (POST Messages/{Sid}.json with Status=canceled),
// which Twilio grants only to a message it has not sent yet. No registry (Twilio's 10DLC BrandRegistrations and
// UsAppToPerson live in its Messaging v1 API, outside the 2010 document the tests check against), RCS capability
// lookup (Twilio's document has none: a Messaging Service falls back itself), voice forwarding or templates here:
// the domain answers 422 PROVIDER_UNSUPPORTED for those.
import twilio from 'twilio';
import { checkCallbacks } from '../callback-shape.ts';
import { callbackUrl, type CallbackEndpoint } from '../endpoint.ts';
import {
  NumberOrderUncertain,
  ProviderAuthFailed,
  ProviderError,
  ProviderRejection,
  type CallbackParse,
  type CallbackRequest,
  type Channel,
  type InventoryNumber,
  type InventoryType,
  type MessagingProvider,
  type NumberCapability,
  type NumberOrder,
  type NumberSearchQuery,
  type OutboundMessage,
  type ProviderCallback,
  type ProviderName,
  type SendOutcome,
  type SentMessageRef,
} from '../provider.ts';
import { TwilioHttpClient } from './http.ts';
import { sendEach } from '../send-each.ts';

export type TwilioSettings = {
  accountSid: string;
  authToken: string;
  /** MG…: sends for senders without a number, and every RCS message. */
  messagingServiceSid?: string | undefined;
  /** Replaces https://api.twilio.com (a proxy; Prism in the tests). */
  apiBaseUrl?: string | undefined;
  timeoutMs?: number | undefined;
};

/** Messages handed over at once from one batch (each is one Twilio request). */
const CONCURRENCY = 8;

const STATUS: Record<string, 'delivered' | 'read' | 'failed' | 'undeliverable' | undefined> = {
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
  undelivered: 'undeliverable',
};

type TwilioClient = ReturnType<typeof twilio>;

export class TwilioProvider implements MessagingProvider {
  readonly name: ProviderName;
  readonly kind = 'twilio' as const;
  readonly channels: ReadonlySet<Channel>;
  private readonly client: TwilioClient;
  private readonly settings: TwilioSettings;
  private readonly endpoint: CallbackEndpoint;

  constructor(opts: { name: ProviderName; settings: TwilioSettings; endpoint: CallbackEndpoint }) {
    this.name = opts.name;
    this.settings = opts.settings;
    this.endpoint = opts.endpoint;
    this.channels = new Set<Channel>(opts.settings.messagingServiceSid ? ['SMS', 'MMS', 'RCS'] : ['SMS', 'MMS']);
    this.client = twilio(opts.settings.accountSid, opts.settings.authToken, {
      httpClient: new TwilioHttpClient({ timeoutMs: opts.settings.timeoutMs ?? 15_000, apiBaseUrl: opts.settings.apiBaseUrl }),
    });
  }

  async send(m: OutboundMessage): Promise<{ providerMessageId: string }> {
    const rcs = m.channel === 'RCS';
    const service = this.settings.messagingServiceSid;
    if ((rcs || !m.sender.phoneNumber) && !service) {
      throw new ProviderRejection(
        'SENDER_NOT_CONFIGURED',
        'Twilio needs TWILIO_MESSAGING_SERVICE_SID for RCS and for senders without a number.',
      );
    }
    const to = rcs && !m.fallbackAllowed ? `rcs:${m.to}` : m.to;
    const from = !rcs && m.sender.phoneNumber ? { from: m.sender.phoneNumber } : { messagingServiceSid: service! };
    const statusCallback = `${callbackUrl(this.endpoint, this.name)}?${new URLSearchParams({ ref: m.dedupeKey, ch: m.channel })}`;
    if (m.attempt > 1) {
      const earlier = await this.earlierAttempt(m, to, from);
      if (earlier) return { providerMessageId: earlier };
    }
    try {
      const created = await this.client.messages.create({
        to,
        ...from,
        ...(m.body !== null ? { body: m.body } : {}),
        ...(m.mediaUrl ? { mediaUrl: [m.mediaUrl] } : {}),
        statusCallback,
        attempt: m.attempt,
      });
      return { providerMessageId: created.sid };
    } catch (error) {
      throw classify(error);
    }
  }

  /**
   * Cancels a message Twilio has not sent yet: true when Twilio answers it `canceled`; false when it is too late
   * (Twilio answers it in another status, or refuses the cancel with a 4xx: only queued or scheduled messages can
   * be canceled). Throws ProviderError when Twilio cannot be reached.
   */
  async revoke(message: SentMessageRef): Promise<boolean> {
    try {
      const updated = await this.client.messages(message.providerMessageId).update({ status: 'canceled' });
      return updated.status === 'canceled';
    } catch (error) {
      const e = classify(error);
      if (e instanceof ProviderRejection) return false;
      throw e;
    }
  }

  /** The message a previous attempt created, if Twilio has one since the message was accepted. */
  private async earlierAttempt(
    m: OutboundMessage,
    to: string,
    from: { from: string } | { messagingServiceSid: string },
  ): Promise<string | null> {
    try {
      const sent = await this.client.messages.page({
        to,
        ...('from' in from ? { from: from.from } : {}),
        dateSentAfter: m.acceptedAt,
        pageSize: 20,
      });
      return sent.instances.find((s) => (m.body === null || s.body === m.body) && s.direction.startsWith('outbound'))?.sid ?? null;
    } catch (error) {
      throw classify(error);
    }
  }

  sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]> {
    return sendEach(messages, {
      concurrency: CONCURRENCY,
      send: (m) => this.send(m),
      failure: (error) => (error instanceof ProviderError || error instanceof ProviderRejection ? error : classify(error)),
      // After a rate limit or an outage, the rest of the batch is not tried: it waits with the provider.
      halts: (e) => e.outage || !e.retryable || 'retryAfterSeconds' in e,
    });
  }

  async searchNumbers(query: NumberSearchQuery): Promise<InventoryNumber[]> {
    const digits = query.leadingNumber?.replace(/\D/g, '') ?? '';
    const filter = {
      ...(digits ? { contains: digits.padEnd(10, '*').slice(0, 10) } : {}),
      ...(query.inventoryType === 'Local' && query.region ? { inRegion: query.region } : {}),
      ...(query.capabilities?.includes('SMS') ? { smsEnabled: true } : {}),
      ...(query.capabilities?.includes('MMS') ? { mmsEnabled: true } : {}),
      ...(query.capabilities?.includes('VOICE') ? { voiceEnabled: true } : {}),
      pageSize: query.limit,
    };
    const country = this.client.availablePhoneNumbers(query.countryCode);
    let rows;
    try {
      // One page: the first rows are what was asked for (list() would follow next_page_uri).
      rows = (query.inventoryType === 'Local' ? await country.local.page(filter) : await country.tollFree.page(filter)).instances;
    } catch (error) {
      throw classify(error);
    }
    // A row without an E.164 number (the schema allows null) cannot be offered.
    return rows
      .flatMap((r) => (/^\+[1-9]\d{6,14}$/.test(r.phoneNumber ?? '') ? [r] : []))
      .map((r) => ({
        numberKey: r.phoneNumber,
        number: r.phoneNumber,
        inventoryType: query.inventoryType,
        provider: this.name,
        countryCode: query.countryCode,
        region: r.region || null,
        locality: r.locality || null,
        capabilities: capabilitiesOf(r.capabilities),
        monthlyCost: null,
        purchasable: true,
      }));
  }

  async orderNumber(order: NumberOrder): Promise<void> {
    // A repeated order (the first one's answer lost) finds the number already in the account.
    if ((await this.incoming(order.number)) !== undefined) return;
    try {
      await this.client.incomingPhoneNumbers.create({
        phoneNumber: order.number,
        smsUrl: callbackUrl(this.endpoint, this.name),
        smsMethod: 'POST',
      });
    } catch (error) {
      const classified = classify(error);
      if (classified instanceof ProviderRejection) throw new ProviderRejection('NUMBER_UNAVAILABLE', classified.message);
      // Refused credentials ordered nothing: no reconciliation to do.
      if (classified instanceof ProviderAuthFailed) throw classified;
      throw new NumberOrderUncertain(classified.message);
    }
  }

  async confirmNumberOwnership(request: {
    number: string;
    inventoryType: InventoryType;
  }): Promise<{ owned: boolean; capabilities: NumberCapability[] }> {
    const row = await this.incoming(request.number);
    return row ? { owned: true, capabilities: capabilitiesOf(row.capabilities) } : { owned: false, capabilities: [] };
  }

  async releaseNumber(request: { number: string; source: 'PURCHASED' | 'IMPORTED' }): Promise<void> {
    // An imported number was the account's before this service; it stays there.
    if (request.source === 'IMPORTED') return;
    const row = await this.incoming(request.number);
    if (!row) return;
    try {
      await this.client.incomingPhoneNumbers(row.sid).remove();
    } catch (error) {
      throw classify(error);
    }
  }

  private async incoming(number: string) {
    try {
      const page = await this.client.incomingPhoneNumbers.page({ phoneNumber: number, pageSize: 20 });
      return page.instances.find((r) => r.phoneNumber === number);
    } catch (error) {
      throw classify(error);
    }
  }

  /**
   * A status callback (MessageStatus; our `ref` and `ch` in its URL) or an inbound message (the number's or the
   * Messaging Service's inbound webhook: Body, NumMedia/MediaUrl0, ButtonPayload), form-encoded, signed.
   */
  async parseCallback(request: CallbackRequest): Promise<CallbackParse> {
    const signature = request.headers['x-twilio-signature'];
    if (!signature || !this.endpoint.baseUrl) return { ok: false, status: 403, reason: 'no X-Twilio-Signature' };
    const params: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(request.rawBody)) params[k] = v;
    // Twilio signs the URL it posted to: our public base and the route (a proxy may add a prefix to the base).
    const route = request.path.slice(Math.max(0, request.path.indexOf('/provider-callbacks/')));
    const url = `${this.endpoint.baseUrl.replace(/\/+$/, '')}${route}`;
    if (!twilio.validateRequest(this.settings.authToken, signature, url, params)) {
      return { ok: false, status: 403, reason: 'X-Twilio-Signature does not match' };
    }
    if (params.AccountSid !== this.settings.accountSid) return { ok: false, status: 403, reason: 'another Twilio account' };
    const callbacks = this.callbacksOf(params, new URL(url).searchParams);
    if (!Array.isArray(callbacks)) return { ok: false, status: 400, reason: callbacks.problem };
    const checked = checkCallbacks(callbacks);
    return checked.ok ? { ok: true, callbacks: checked.callbacks } : { ok: false, status: 400, reason: checked.reason };
  }

  private callbacksOf(params: Record<string, string>, query: URLSearchParams): unknown[] | { problem: string } {
    const at = new Date().toISOString();
    const status = params.MessageStatus ?? params.SmsStatus;
    const sid = params.MessageSid ?? params.SmsSid;
    if (!sid) return { problem: 'no MessageSid' };
    if (status !== undefined && status !== 'received') {
      const ref = query.get('ref');
      if (!ref) return { problem: 'a status callback without our ref in its URL' };
      const mapped = STATUS[status];
      // queued, sending, sent, accepted …: nothing this service records (it marked the message sent itself).
      if (!mapped) return [];
      // The channel we asked for, unless an RCS message went out as SMS/MMS (Twilio's fallback: From is no rcs: address).
      const planned = query.get('ch');
      const channel: Channel =
        planned === 'SMS' || planned === 'MMS' ? planned : params.From?.startsWith('rcs:') ? 'RCS' : sid.startsWith('MM') ? 'MMS' : 'SMS';
      return [
        {
          type: 'receipt',
          providerMessageId: sid,
          dedupeKey: ref,
          status: mapped,
          channel,
          ...(planned === 'RCS' && channel !== 'RCS' ? { providerFallback: true } : {}),
          errorCode: params.ErrorCode ? `TWILIO_${params.ErrorCode}` : null,
          errorMessage: params.ErrorCode
            ? `Twilio error ${params.ErrorCode} (https://www.twilio.com/docs/api/errors/${params.ErrorCode})`
            : null,
          at,
        } satisfies ProviderCallback,
      ];
    }
    const rcs = params.From?.startsWith('rcs:') ?? false;
    const strip = (v: string | undefined) => (v ?? '').replace(/^rcs:/, '');
    const media = Number(params.NumMedia ?? '0') > 0 ? (params.MediaUrl0 ?? null) : null;
    return [
      {
        type: 'inbound',
        providerMessageId: sid,
        from: strip(params.From),
        to: strip(params.To),
        channel: rcs ? 'RCS' : media ? 'MMS' : 'SMS',
        text: params.Body ?? null,
        postback: params.ButtonPayload ?? null,
        mediaUrl: media,
        at,
      } satisfies ProviderCallback,
    ];
  }
}

function capabilitiesOf(
  c: { SMS?: boolean; MMS?: boolean; voice?: boolean; sms?: boolean; mms?: boolean } | undefined,
): NumberCapability[] {
  const out: NumberCapability[] = [];
  if (c?.SMS || c?.sms) out.push('SMS');
  if (c?.MMS || c?.mms) out.push('MMS');
  if (c?.voice) out.push('VOICE');
  return out;
}

/**
 * A failed Twilio call as the dispatcher needs it: what the HTTP client already classified (429, 5xx, 401/403, no
 * answer: ./http.ts) as is; any other 4xx refuses the message for good with Twilio's error code (TWILIO_21211 …).
 */
function classify(error: unknown): ProviderError | ProviderRejection {
  if (error instanceof ProviderError || error instanceof ProviderRejection) return error;
  const e = error as { status?: number; code?: number; message?: string };
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ProviderRejection(e.code ? `TWILIO_${e.code}` : `TWILIO_HTTP_${e.status}`, e.message ?? `Twilio answered ${e.status}`);
  }
  return new ProviderError(e.message ?? 'Twilio call failed', { outage: true });
}
