// Delivery timing. The defaults are the documented ones (openapi.yaml, Webhooks); tests shorten them with
// tuneWebhooksForTests() so a retry or a timeout takes milliseconds instead of minutes.
export type WebhookTuning = {
  /** Whole-attempt budget of an event delivery, redirects included. */
  deliveryTimeoutMs: number;
  /** Budget of a POST /v1/webhook-endpoints/{id}/test delivery. */
  testTimeoutMs: number;
  /** Delay before each retry: the n-th entry follows the n-th failed attempt. */
  retryDelaysMs: readonly number[];
  /** Each delay is spread uniformly by ± this fraction so retries of many events do not arrive together. */
  jitter: number;
};

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const DOCUMENTED_TUNING: Readonly<WebhookTuning> = Object.freeze({
  deliveryTimeoutMs: 10_000,
  testTimeoutMs: 5_000,
  retryDelaysMs: Object.freeze([5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]),
  jitter: 0.1,
});

/** Deliveries that failed for good (every retry used) in a row before the endpoint is disabled. */
export const AUTO_DISABLE_AFTER = 10;

let current: WebhookTuning = DOCUMENTED_TUNING;

export function webhookTuning(): WebhookTuning {
  return current;
}

/** Test-only: overrides some settings for this process; returns the function that restores the defaults. */
export function tuneWebhooksForTests(patch: Partial<WebhookTuning>): () => void {
  current = { ...current, ...patch };
  return () => {
    current = DOCUMENTED_TUNING;
  };
}
