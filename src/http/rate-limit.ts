// The request rate limit of an API key: RATE_LIMIT_PER_KEY requests per RATE_LIMIT_WINDOW_SECONDS, counted for
// every authenticated call (each HTTP request to an operation, each message of a POST /mcp) by every API process
// together, as Stripe and Twilio limit per account. Past it: 429 RATE_LIMITED with Retry-After. Every limited
// answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (the IETF httpapi draft's fields).
//
// The count lives in PostgreSQL (rate-limiter-flexible, src/domain/rate-limits.ts), in a fixed window that starts
// at the key's first request. A round trip per request would put the database on every call's path (and one
// row under every request of a busy key), so each process takes points from the shared count a chunk at a time
// (1% of the limit, at most 100) and hands them out from memory until they run out or the window ends. What
// that costs in accuracy: a process may leave up to one chunk unused when a window ends (the key gets that much
// less), never more than the limit is handed out in a window, and RateLimit-Remaining does not see the points
// other processes hold. Once the count is spent, the process refuses the key from memory until the window ends.
// Requests by signed link (no key) and public operations are not counted here.
//
// rate-limiter-flexible (36 modules) is imported with the shared count, on the first keyed request: /health and
// the rest of start-up do not load it (issue 38, bench part a). That request waits for the import, so the limit
// holds from the first request.
import type pg from 'pg';
import type { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { SIGNED_URL_PRINCIPAL, type Principal } from '../auth/principal.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import { runShared } from '../db/statement-scope.ts';

/** The shared count and rate-limiter-flexible's answer class (what a refused consume() rejects with). */
type SharedCount = { store: RateLimiterPostgres; Res: typeof RateLimiterRes };

/** A key's points held by this process in the current window. */
type Slot = {
  /** Points taken from the shared count and not yet handed out. */
  held: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
  /** The shared count's remaining points after this process last took some. */
  remaining: number;
  /** The shared count is spent: refuse until then without asking it. */
  blockedUntil: number;
  /** A take from the shared count in flight; requests of the key wait for it. */
  taking?: Promise<void> | undefined;
};

/** Past this many keys in memory, the ones whose window ended are dropped. */
const SWEEP_ABOVE = 10_000;

export class KeyRateLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  private readonly chunk: number;
  private readonly pool: pg.Pool;
  /** Made by the first take(); concurrent first takes share it, and a failed import is tried again by the next. */
  private shared: Promise<SharedCount> | undefined;
  private readonly slots = new Map<string, Slot>();

  constructor(pool: pg.Pool, config: Config['rateLimit']) {
    this.pool = pool;
    this.limit = config.perKey;
    this.windowSeconds = config.windowSeconds;
    this.chunk = Math.max(1, Math.min(100, Math.floor(this.limit / 100)));
  }

  private sharedCount(): Promise<SharedCount> {
    this.shared ??= Promise.all([import('rate-limiter-flexible'), import('../domain/rate-limits.ts')]).then(
      ([{ RateLimiterRes: Res }, { sharedLimiter }]) => ({
        store: sharedLimiter(this.pool, 'api-key', this.limit, this.windowSeconds),
        Res,
      }),
      (error: unknown) => {
        this.shared = undefined;
        throw error;
      },
    );
    return this.shared;
  }

  /**
   * Counts `points` requests of the caller's key: the RateLimit-* headers to answer with, or 429 RATE_LIMITED
   * (with them and Retry-After). Nothing is counted, and no header given, without a key or with the limit off.
   */
  async take(principal: Principal | undefined, points = 1): Promise<Record<string, string>> {
    if (this.limit <= 0 || !principal || principal.apiKeyId === SIGNED_URL_PRINCIPAL) return {};
    const key = principal.apiKeyId;
    for (;;) {
      const now = Date.now();
      const slot = this.slotOf(key, now);
      if (slot.blockedUntil > now) throw this.tooMany(slot, now);
      if (slot.held >= points) {
        slot.held -= points;
        return this.headers(slot, now);
      }
      if (!slot.taking) {
        // Shared by the key's requests that arrive meanwhile: not cancelled by the client of the one that started it.
        slot.taking = runShared(() => this.takeShared(key, slot, points - slot.held)).finally(() => {
          slot.taking = undefined;
        });
      }
      await slot.taking; // then look again: the points may have gone to requests that waited with this one
    }
  }

  private slotOf(key: string, now: number): Slot {
    let slot = this.slots.get(key);
    if (slot && slot.resetAt <= now && !slot.taking) {
      // The window ended: what was held belongs to it.
      slot.held = 0;
      slot.remaining = this.limit;
    }
    if (!slot) {
      if (this.slots.size >= SWEEP_ABOVE) {
        for (const [k, s] of this.slots) if (s.resetAt <= now && !s.taking) this.slots.delete(k);
      }
      slot = { held: 0, resetAt: 0, remaining: this.limit, blockedUntil: 0 };
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** Takes at least `needed` points (a chunk) from the shared count into the slot, or blocks the slot. */
  private async takeShared(key: string, slot: Slot, needed: number): Promise<void> {
    const asked = Math.max(needed, this.chunk);
    const { store, Res } = await this.sharedCount();
    const startedAt = Date.now();
    let res: RateLimiterRes;
    let granted: number;
    try {
      res = await store.consume(key, asked);
      granted = asked;
    } catch (error) {
      if (!(error instanceof Res)) throw error;
      // The count went past the limit: it added `asked` anyway, and what was left before it is this process's.
      res = error;
      granted = Math.max(0, this.limit - (res.consumedPoints - asked));
    }
    const resetAt = startedAt + res.msBeforeNext;
    if (slot.resetAt <= startedAt) slot.held = 0; // points held from an ended window do not carry over
    slot.held += granted;
    slot.resetAt = resetAt;
    slot.remaining = Math.max(0, this.limit - res.consumedPoints);
    if (slot.held < needed) slot.blockedUntil = resetAt;
  }

  private headers(slot: Slot, now: number): Record<string, string> {
    return {
      'RateLimit-Limit': String(this.limit),
      'RateLimit-Remaining': String(Math.min(this.limit, slot.remaining + slot.held)),
      'RateLimit-Reset': String(Math.max(0, Math.ceil((slot.resetAt - now) / 1000))),
    };
  }

  private tooMany(slot: Slot, now: number): ApiError {
    const seconds = Math.max(1, Math.ceil((slot.blockedUntil - now) / 1000));
    return new ApiError(
      429,
      'RATE_LIMITED',
      `Too many requests with this API key: at most ${this.limit} per ${this.windowSeconds} s; retry in ${seconds} s.`,
      {
        headers: { ...this.headers(slot, now), 'RateLimit-Remaining': '0', 'Retry-After': String(seconds) },
      },
    );
  }
}
