// Telnyx (API v2) on the official SDK (Stainless-generated; `baseURL` replaces https://api.telnyx.com/v2):
//   - SMS/MMS: POST /v2/messages from the sender's number (or the messaging profile for a sender without one), each
//     with webhook_url = our callback route + ref (our message id), so its message.sent / message.finalized webhooks
//     find the message;
//   - number search (GET /v2/available_phone_numbers) and orders (POST /v2/number_orders, customer_reference = our
//     order key, so a repeated order is recognisable in Telnyx's portal);
//   - the 10DLC registry: brands, campaigns and the sender's number attached to its campaign (./registry.ts);
//   - webhooks (delivery reports and message.received) verified with Telnyx's Ed25519 signature over
//     "<telnyx-timestamp>|<raw body>" with the account's public key, the timestamp within 5 minutes (the SDK's
//     webhooks.unwrap), refused with 403 otherwise.
// Not here (the domain answers 422 PROVIDER_UNSUPPORTED): RCS, toll-free verification, number ownership/release,
// revoke, voice forwarding, templates.
import Telnyx from 'telnyx';
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
  type MessagingProvider,
  type NumberCapability,
  type NumberOrder,
  type NumberSearchQuery,
  type OutboundMessage,
  type ProviderCallback,
  type ProviderName,
  type ProviderRegistry,
  type SendOutcome,
} from '../provider.ts';
import { TelnyxRegistry } from './registry.ts';
import { statusFailure, unanswered } from '../provider-answer.ts';
import { sendEach } from '../send-each.ts';

export type TelnyxSettings = {
  apiKey: string;
  /** Base64 Ed25519 public key of the account (Mission Control → Keys & Credentials → Public Key). */
  publicKey: string;
  /** Sends for senders without a number of their own. */
  messagingProfileId?: string | undefined;
  /** Replaces https://api.telnyx.com/v2 (a proxy; a contract fake in the tests). */
  apiBaseUrl?: string | undefined;
  timeoutMs?: number | undefined;
  /** Milliseconds between two reads of a 10DLC review at Telnyx (./registry.ts; 60 s when not given). */
  registryStepMs?: number | undefined;
};

const CONCURRENCY = 8;

/** message.finalized's recipient status → ours; anything else (queued, sending, sent) records nothing. */
const FINAL_STATUS: Record<string, 'delivered' | 'failed' | 'undeliverable' | undefined> = {
  delivered: 'delivered',
  sending_failed: 'failed',
  delivery_failed: 'undeliverable',
  delivery_unconfirmed: 'undeliverable',
};

export class TelnyxProvider implements MessagingProvider {
  readonly name: ProviderName;
  readonly kind = 'telnyx' as const;
  readonly channels: ReadonlySet<Channel> = new Set<Channel>(['SMS', 'MMS']);
  private readonly client: Telnyx;
  private readonly settings: TelnyxSettings;
  private readonly endpoint: CallbackEndpoint;
  /** 10DLC brands and campaigns (./registry.ts). */
  readonly registry: ProviderRegistry;

  constructor(opts: { name: ProviderName; settings: TelnyxSettings; endpoint: CallbackEndpoint }) {
    this.name = opts.name;
    this.settings = opts.settings;
    this.endpoint = opts.endpoint;
    this.client = new Telnyx({
      apiKey: opts.settings.apiKey,
      publicKey: opts.settings.publicKey,
      ...(opts.settings.apiBaseUrl ? { baseURL: opts.settings.apiBaseUrl } : {}),
      timeout: opts.settings.timeoutMs ?? 15_000,
      // A retried send is the dispatcher's decision (it waits out a 429's Retry-After, counts outages).
      maxRetries: 0,
    });
    this.registry = new TelnyxRegistry({ client: this.client, classify, stepMs: opts.settings.registryStepMs });
  }

  async send(m: OutboundMessage): Promise<{ providerMessageId: string }> {
    const profile = this.settings.messagingProfileId;
    if (!m.sender.phoneNumber && !profile) {
      throw new ProviderRejection('SENDER_NOT_CONFIGURED', 'Telnyx needs TELNYX_MESSAGING_PROFILE_ID for senders without a number.');
    }
    try {
      const sent = await this.client.messages.send({
        to: m.to,
        ...(m.sender.phoneNumber ? { from: m.sender.phoneNumber } : { messaging_profile_id: profile! }),
        ...(m.body !== null ? { text: m.body } : {}),
        ...(m.mediaUrl ? { media_urls: [m.mediaUrl], type: 'MMS' as const } : { type: 'SMS' as const }),
        ...(m.title && m.mediaUrl ? { subject: m.title } : {}),
        webhook_url: `${callbackUrl(this.endpoint, this.name)}?${new URLSearchParams({ ref: m.dedupeKey })}`,
        use_profile_webhooks: false,
      });
      const id = sent.data?.id;
      if (!id) throw new ProviderError('Telnyx accepted the message without an id', { outage: true });
      return { providerMessageId: id };
    } catch (error) {
      throw classify(error);
    }
  }

  sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]> {
    return sendEach(messages, {
      concurrency: CONCURRENCY,
      send: (m) => this.send(m),
      failure: classify,
      halts: () => true,
    });
  }

  async searchNumbers(query: NumberSearchQuery): Promise<InventoryNumber[]> {
    const features: Array<'sms' | 'mms' | 'voice'> = (query.capabilities ?? []).map((c) =>
      c === 'VOICE' ? 'voice' : c === 'MMS' ? 'mms' : 'sms',
    );
    let answer;
    try {
      answer = await this.client.availablePhoneNumbers.list({
        filter: {
          country_code: query.countryCode,
          phone_number_type: query.inventoryType === 'Local' ? 'local' : 'toll_free',
          ...(query.leadingNumber ? { phone_number: { starts_with: query.leadingNumber } } : {}),
          ...(query.region && query.inventoryType === 'Local' ? { administrative_area: query.region } : {}),
          ...(features.length ? { features } : {}),
          limit: query.limit,
        },
      });
    } catch (error) {
      throw classify(error);
    }
    return (answer.data ?? []).flatMap((row) => {
      if (!row.phone_number || !/^\+[1-9]\d{6,14}$/.test(row.phone_number)) return [];
      const region = row.region_information?.find((r) => r.region_type === 'state')?.region_name ?? null;
      const locality = row.region_information?.find((r) => r.region_type === 'rate_center')?.region_name ?? null;
      const capabilities: NumberCapability[] = [];
      for (const f of row.features ?? []) {
        if (f.name === 'sms') capabilities.push('SMS');
        if (f.name === 'mms') capabilities.push('MMS');
        if (f.name === 'voice') capabilities.push('VOICE');
      }
      return [
        {
          numberKey: row.phone_number,
          number: row.phone_number,
          inventoryType: query.inventoryType,
          provider: this.name,
          countryCode: query.countryCode,
          region,
          locality,
          capabilities,
          monthlyCost: row.cost_information?.monthly_cost ?? null,
          purchasable: true,
        },
      ];
    });
  }

  async orderNumber(order: NumberOrder): Promise<void> {
    try {
      await this.client.numberOrders.create({
        phone_numbers: [{ phone_number: order.number }],
        customer_reference: order.orderKey,
        ...(this.settings.messagingProfileId ? { messaging_profile_id: this.settings.messagingProfileId } : {}),
      });
    } catch (error) {
      const e = classify(error);
      if (e instanceof ProviderRejection) throw new ProviderRejection('NUMBER_UNAVAILABLE', e.message);
      // Refused credentials ordered nothing: no reconciliation to do.
      if (e instanceof ProviderAuthFailed) throw e;
      throw new NumberOrderUncertain(e.message);
    }
  }

  async parseCallback(request: CallbackRequest): Promise<CallbackParse> {
    if (!request.headers['telnyx-signature-ed25519']) return { ok: false, status: 403, reason: 'no Telnyx-Signature-Ed25519' };
    let event: unknown;
    try {
      event = await this.client.webhooks.unwrap(request.rawBody, { headers: request.headers as Record<string, string> });
    } catch (error) {
      return { ok: false, status: 403, reason: `Telnyx signature: ${(error as Error).message}` };
    }
    const callbacks = callbacksOf(event, new URL(request.path, 'http://x').searchParams.get('ref'));
    if (!Array.isArray(callbacks)) return { ok: false, status: 400, reason: callbacks.problem };
    const checked = checkCallbacks(callbacks);
    return checked.ok ? { ok: true, callbacks: checked.callbacks } : { ok: false, status: 400, reason: checked.reason };
  }
}

type TelnyxEvent = {
  data?: {
    event_type?: string;
    occurred_at?: string;
    payload?: {
      id?: string;
      type?: string;
      text?: string | null;
      from?: { phone_number?: string };
      to?: Array<{ phone_number?: string; status?: string }>;
      media?: Array<{ url?: string }>;
      errors?: Array<{ code?: string | number; title?: string; detail?: string }>;
    };
  };
};

function callbacksOf(raw: unknown, ref: string | null): unknown[] | { problem: string } {
  const event = raw as TelnyxEvent;
  const type = event?.data?.event_type;
  const p = event?.data?.payload;
  if (!type || !p?.id) return { problem: 'not a Telnyx messaging event (data.event_type, data.payload.id)' };
  const at = event.data?.occurred_at ?? new Date().toISOString();
  const channel: Channel = p.type === 'MMS' ? 'MMS' : 'SMS';
  if (type === 'message.received') {
    const media = p.media?.[0]?.url ?? null;
    return [
      {
        type: 'inbound',
        providerMessageId: p.id,
        from: p.from?.phone_number,
        to: p.to?.[0]?.phone_number,
        channel: media ? 'MMS' : channel,
        text: p.text ?? null,
        mediaUrl: media,
        at,
      },
    ];
  }
  if (type === 'message.sent') return [];
  if (type !== 'message.finalized') return [];
  if (!ref) return { problem: 'a delivery report without our ref in its URL' };
  const status = FINAL_STATUS[p.to?.[0]?.status ?? ''];
  if (!status) return [];
  const error = p.errors?.[0];
  return [
    {
      type: 'receipt',
      providerMessageId: p.id,
      dedupeKey: ref,
      status,
      channel,
      errorCode: error?.code !== undefined ? `TELNYX_${error.code}` : null,
      errorMessage: error ? (error.detail ?? error.title ?? null) : null,
      at,
    } satisfies ProviderCallback,
  ];
}

const TELNYX = { provider: 'Telnyx', credentials: 'TELNYX_API_KEY' };

/**
 * A failed Telnyx call: 429, 5xx and 401/403 as every adapter reads them (../provider-answer.ts), no answer an
 * outage, any other 4xx a refusal with Telnyx's error code (TELNYX_40300 …).
 */
function classify(error: unknown): ProviderError | ProviderRejection {
  if (error instanceof ProviderError || error instanceof ProviderRejection) return error;
  if (error instanceof Telnyx.APIError) {
    const status = error.status;
    if (status === undefined) return unanswered(TELNYX, error);
    const first = (error.error as { errors?: Array<{ code?: string; detail?: string; title?: string }> } | undefined)?.errors?.[0];
    const failure = statusFailure(status, TELNYX, {
      retryAfter: error.headers?.get('retry-after') ?? undefined,
      reason: first?.code ? `TELNYX_${first.code}${first.title ? `: ${first.title}` : ''}` : null,
    });
    if (failure) return failure;
    return new ProviderRejection(
      first?.code ? `TELNYX_${first.code}` : `TELNYX_HTTP_${status}`,
      first?.detail ?? first?.title ?? error.message,
    );
  }
  return unanswered(TELNYX, error);
}
