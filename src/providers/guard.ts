// Per-provider dispatch state, kept by each process for the calls it makes itself (like a connection pool's health,
// it is this process's view; every process learns the same outage from its own calls within a few of them):
//   - a 429's Retry-After: that provider's dispatch waits until then (messages are put back, not failed);
//   - a circuit breaker over outages (5xx, timeouts, unreachable): after `failureThreshold` consecutive failures
//     the circuit opens and dispatch waits `openSeconds` (doubling on each failed trial, up to `maxOpenSeconds`);
//     then it is half open: the next batch is the trial, and its success closes the circuit.
// While a provider waits, its messages stay queued until their validity period ends (src/domain/messaging/dispatch.ts).
// What counts is a batch's outcome (dispatch records one per batch): a batch is an outage only when none of its calls
// succeeded. A provider that accepted a message in this very batch is up; one call of a hundred timing out is that
// message's trouble (it waits and is retried without using an attempt), not the provider being down, and must not
// add to a count that opens the circuit for every sender of the slot. A batch with any success resets the count.
// Refused credentials (401/403) are no outage: they leave the circuit alone, set `credentialsRefused` (on /health and
// /metrics) until a send succeeds, and are logged once, at error level, when they start (the messages fail
// PROVIDER_AUTH_FAILED at once: waiting cannot fix a wrong key).
// /health and /metrics report each slot's state (src/domain/health.ts, src/domain/metrics.ts); the log says when a
// circuit opens and closes.
import type { Logger } from 'pino';
import type { MessagingProvider, ProviderGuard, ProviderHealth, ProviderName } from './provider.ts';
import { PROVIDER_NAMES } from './provider.ts';

/** Tests shorten these. */
export const guardTuning = { failureThreshold: 5, openSeconds: 5, maxOpenSeconds: 120 };

type State = {
  consecutiveFailures: number;
  openUntil: number | null;
  /** Seconds the next opening lasts. */
  nextOpenSeconds: number;
  rateLimitedUntil: number | null;
  rateLimited: number;
  circuitOpenings: number;
  circuitHalfOpens: number;
  /** The current opening's trial is counted in circuitHalfOpens (a half-open state is counted once). */
  trialCounted: boolean;
  /** The last outage's or rate limit's answer, until a call succeeds. */
  lastFailure: string | null;
  /** The last send was refused for our credentials (until one succeeds). */
  credentialsRefused: boolean;
};

export class DispatchGuard implements ProviderGuard {
  private readonly states = new Map<ProviderName, State>();
  private readonly log: Logger | undefined;

  constructor(log?: Logger) {
    this.log = log;
  }

  private state(name: ProviderName): State {
    let s = this.states.get(name);
    if (!s) {
      s = {
        consecutiveFailures: 0,
        openUntil: null,
        nextOpenSeconds: guardTuning.openSeconds,
        rateLimitedUntil: null,
        rateLimited: 0,
        circuitOpenings: 0,
        circuitHalfOpens: 0,
        trialCounted: false,
        lastFailure: null,
        credentialsRefused: false,
      };
      this.states.set(name, s);
    }
    return s;
  }

  blockedUntil(provider: MessagingProvider, now = new Date()): Date | null {
    // The sandbox simulator is no carrier: it never waits.
    if (provider.kind === 'simulator') return null;
    const s = this.state(provider.name);
    const t = now.getTime();
    // An opening's wait is over: the call now asked for is its trial (half open), counted once per opening.
    if (s.openUntil !== null && s.openUntil <= t && !s.trialCounted) {
      s.trialCounted = true;
      s.circuitHalfOpens += 1;
    }
    const until = Math.max(s.openUntil ?? 0, s.rateLimitedUntil ?? 0);
    return until > t ? new Date(until) : null;
  }

  record(
    provider: MessagingProvider,
    outcome: 'ok' | 'outage' | 'auth_failed' | { retryAfterSeconds: number },
    now = new Date(),
    reason?: string,
  ): void {
    if (provider.kind === 'simulator') return;
    const s = this.state(provider.name);
    const t = now.getTime();
    if (outcome === 'auth_failed') {
      // Once per episode, loudly: every message of the slot fails until an operator fixes the credentials. The
      // reason is the provider's answer and the names of the settings, never their values.
      if (!s.credentialsRefused) {
        this.log?.error(
          { provider: provider.name, kind: provider.kind, reason },
          'provider refused our credentials: its messages fail PROVIDER_AUTH_FAILED until they are fixed',
        );
      }
      s.credentialsRefused = true;
      return;
    }
    s.lastFailure = outcome === 'ok' ? null : (reason ?? s.lastFailure ?? 'the provider failed');
    if (outcome === 'ok') {
      if (s.credentialsRefused) this.log?.info({ provider: provider.name }, 'provider accepted our credentials again');
      s.credentialsRefused = false;
      if (s.openUntil !== null) this.log?.info({ provider: provider.name }, 'provider circuit closed: the trial call succeeded');
      s.consecutiveFailures = 0;
      s.openUntil = null;
      s.nextOpenSeconds = guardTuning.openSeconds;
      return;
    }
    if (outcome === 'outage') {
      s.consecutiveFailures += 1;
      const halfOpen = s.openUntil !== null && s.openUntil <= t;
      if (halfOpen || s.consecutiveFailures === guardTuning.failureThreshold) {
        s.openUntil = t + s.nextOpenSeconds * 1000;
        s.circuitOpenings += 1;
        s.trialCounted = false;
        this.log?.warn(
          { provider: provider.name, consecutiveFailures: s.consecutiveFailures, openSeconds: s.nextOpenSeconds },
          'provider circuit open: its messages wait',
        );
        s.nextOpenSeconds = Math.min(guardTuning.maxOpenSeconds, s.nextOpenSeconds * 2);
      }
      return;
    }
    s.rateLimited += 1;
    s.rateLimitedUntil = Math.max(s.rateLimitedUntil ?? 0, t + outcome.retryAfterSeconds * 1000);
  }

  unavailable(provider: MessagingProvider, now = new Date()): string | null {
    if (provider.kind === 'simulator') return null;
    const s = this.state(provider.name);
    const waiting = Math.max(s.openUntil ?? 0, s.rateLimitedUntil ?? 0) > now.getTime();
    return s.consecutiveFailures > 0 || waiting ? s.lastFailure : null;
  }

  report(now = new Date()): ProviderHealth[] {
    const t = now.getTime();
    return PROVIDER_NAMES.map((name) => {
      const s = this.state(name);
      const circuit = s.openUntil === null ? 'closed' : s.openUntil > t ? 'open' : 'half_open';
      const until = Math.max(s.openUntil ?? 0, s.rateLimitedUntil ?? 0);
      return {
        name,
        circuit,
        consecutiveFailures: s.consecutiveFailures,
        waitUntil: until > t ? new Date(until) : null,
        rateLimited: s.rateLimited,
        circuitOpenings: s.circuitOpenings,
        circuitHalfOpens: s.circuitHalfOpens,
        credentialsRefused: s.credentialsRefused,
      };
    });
  }
}
