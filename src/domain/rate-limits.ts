// Rate limits shared by every process (rate-limiter-flexible on PostgreSQL, table rate_limits of migration 0006):
// per-sender dispatch throughput and the public forms' limits (per client address, campaign and phone). One
// limiter per (name, points, window) per pool, made on first use.
import type { Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from './errors.ts';

const limiters = new WeakMap<Pool, Map<string, RateLimiterPostgres>>();

/** The limiter of `points` per `durationSeconds` named `name` (the key prefix of its rows). */
export function sharedLimiter(pool: Pool, name: string, points: number, durationSeconds: number): RateLimiterPostgres {
  let byName = limiters.get(pool);
  if (!byName) limiters.set(pool, (byName = new Map()));
  const id = `${name}:${points}:${durationSeconds}`;
  let limiter = byName.get(id);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: name,
      points,
      duration: durationSeconds,
    });
    byName.set(id, limiter);
  }
  return limiter;
}

/**
 * Takes one point for `key`, or answers 429 RATE_LIMITED with Retry-After ("Too many <what> <whose>", e.g.
 * "Too many sign-ups from this address").
 */
export async function consumeOrTooMany(
  limiter: RateLimiterPostgres,
  key: string,
  what: string,
  whose = 'from this address',
): Promise<void> {
  try {
    await limiter.consume(key, 1);
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new ApiError(429, 'RATE_LIMITED', `Too many ${what} ${whose}; retry in ${seconds} s.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  }
}
