// The Twilio SDK's HTTP client with the two things the adapter needs from every call, whatever the operation:
//   - the provider-call classification the dispatcher acts on, read here because the SDK's RestException drops the
//     headers (the rule every adapter shares, ../provider-answer.ts): 429 → ProviderRateLimited with Twilio's
//     Retry-After, 5xx, a timeout or no answer → an outage, 401/403 → ProviderAuthFailed with Twilio's error code
//     (20003 …); any other answer goes back to the SDK, which throws RestException for a 4xx (the adapter maps it);
//   - an optional API base URL (TWILIO_API_BASE_URL): the SDK always calls https://*.twilio.com; a proxy or a
//     contract fake (Prism serving Twilio's OpenAPI document, in the tests) takes its place.
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import { statusFailure, unanswered } from '../provider-answer.ts';

const TWILIO = { provider: 'Twilio', credentials: 'TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN' };

export class TwilioHttpClient extends twilio.RequestClient {
  private readonly apiBaseUrl: string | undefined;

  constructor(opts: { timeoutMs: number; apiBaseUrl?: string | undefined }) {
    // The SDK's own retries stay off: a retried send is the dispatcher's decision (same idempotency key).
    super({ timeout: opts.timeoutMs, autoRetry: false, keepAlive: true });
    this.apiBaseUrl = opts.apiBaseUrl?.replace(/\/+$/, '');
  }

  override async request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const uri = this.apiBaseUrl ? opts.uri.replace(/^https:\/\/[^/]+/, this.apiBaseUrl) : opts.uri;
    let response;
    try {
      response = await super.request<TData>({ ...opts, uri });
    } catch (error) {
      throw unanswered(TWILIO, error);
    }
    const failure = statusFailure(response.statusCode, TWILIO, {
      retryAfter: response.headers?.['retry-after'],
      reason: twilioReason(response.body),
    });
    if (failure) throw failure;
    return response;
  }
}

/** Twilio's error code and message from an error answer's JSON body ({code, message, more_info, status}). */
function twilioReason(body: unknown): string | null {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return null;
    }
  }
  const e = parsed as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code !== 'number' && typeof e?.code !== 'string') return null;
  return `TWILIO_${e.code}${typeof e.message === 'string' ? `: ${e.message}` : ''}`;
}
