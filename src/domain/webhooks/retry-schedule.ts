// When a failed delivery is tried again: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the failures
// (with jitter), then never. Test events are never retried.
import { webhookTuning, type WebhookTuning } from './tuning.ts';

/** Milliseconds to wait after failed attempt number `attempt` (1-based), or null when it was the last one. */
export function retryDelayMs(attempt: number, tuning: WebhookTuning = webhookTuning(), random: () => number = Math.random): number | null {
  const base = tuning.retryDelaysMs[attempt - 1];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 + tuning.jitter * (2 * random() - 1))));
}
