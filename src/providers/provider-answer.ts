// One reading of a provider's HTTP answer that is not a success, shared by every adapter (Twilio, Telnyx, RBM), so
// the same answer means the same thing whichever carrier gave it:
//   - 429: ProviderRateLimited with its Retry-After (the provider's dispatch waits, no message fails);
//   - 5xx: an outage (counts towards the circuit breaker; messages wait until their validity period ends);
//   - 401/403: ProviderAuthFailed, our credentials were refused: a configuration error, not an outage (a wrong or
//     revoked key would otherwise keep every message waiting for hours behind a circuit that looks like an outage);
//     the message fails at once and the text names the settings to check, never their values;
//   - anything else: undefined, the adapter reads the provider's own refusal (its error code) from the body.
// No answer at all (a timeout, a refused connection) is an outage too: unanswered().
import { ProviderAuthFailed, ProviderError, ProviderRateLimited } from './provider.ts';
import { retryAfterSeconds } from './retry-after.ts';

type Who = {
  /** The provider as an operator knows it: "Twilio", "Telnyx", "RBM". */
  provider: string;
  /** The settings an operator checks when credentials are refused (names only). */
  credentials: string;
};

export function statusFailure(
  status: number,
  who: Who,
  answer: { retryAfter?: unknown; reason?: string | null | undefined } = {},
): ProviderError | undefined {
  if (status === 429) return new ProviderRateLimited(`${who.provider} answered 429`, retryAfterSeconds(answer.retryAfter));
  if (status >= 500) return new ProviderError(`${who.provider} answered ${status}`, { outage: true });
  if (status === 401 || status === 403) return authFailed(who, `HTTP ${status}${answer.reason ? `, ${answer.reason}` : ''}`);
  return undefined;
}

/** Our credentials refused, `detail` being the provider's own words (its status and error code). */
export function authFailed(who: Who, detail: string): ProviderAuthFailed {
  return new ProviderAuthFailed(`${who.provider} refused this service's credentials (${detail}); check ${who.credentials}.`);
}

/** The provider did not answer (timeout, connection refused or reset): an outage. */
export function unanswered(who: Who, error: unknown): ProviderError {
  const e = error as { code?: string; message?: string } | undefined;
  return new ProviderError(`${who.provider} did not answer (${e?.code ?? e?.message ?? 'no answer'})`, { outage: true });
}
