// The Twilio SDK's HTTP client with the two things the adapter needs from every call, whatever the operation:
//   - the provider-call classification the dispatcher acts on: 429 → ProviderRateLimited with Twilio's Retry-After
//     (the SDK's RestException drops the headers), 5xx, a timeout or no answer → ProviderError (an outage);
//     any other answer goes back to the SDK, which throws RestException for a 4xx (the adapter maps it);
//   - an optional API base URL (TWILIO_API_BASE_URL): the SDK always calls https://*.twilio.com; a proxy or a
//     contract fake (Prism serving Twilio's OpenAPI document, in the tests) takes its place.
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import { ProviderError, ProviderRateLimited } from '../provider.ts';
import { retryAfterSeconds } from '../retry-after.ts';

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
      const code = (error as { code?: string }).code;
      throw new ProviderError(`Twilio did not answer (${code ?? (error as Error).message})`, { outage: true });
    }
    if (response.statusCode === 429) {
      throw new ProviderRateLimited('Twilio answered 429 Too Many Requests', retryAfterSeconds(response.headers?.['retry-after']));
    }
    if (response.statusCode >= 500) throw new ProviderError(`Twilio answered ${response.statusCode}`, { outage: true });
    return response;
  }
}
