// The Common section's health check (getHealth): the process is up; the database is `up` while it answers a
// trivial query within PROBE_TIMEOUT_MS on the probe's own connection (src/db/probe.ts: not queued behind the
// requests holding the pool), `down` otherwise (the handler then answers 503 with the same body).
// `providers` is this process's dispatch state of each slot (src/providers/guard.ts): an open circuit or a
// provider's rate limit delays messages without failing them, so it is reported, not made a 503 (every instance
// would leave the load balancer at once).
import type { AppContext } from '../app-context.ts';

/** Longer than a healthy round trip under load, short enough for a load balancer's check to time out on us first. */
const PROBE_TIMEOUT_MS = 2000;

export type Health = {
  status: 'ok' | 'degraded';
  version: string;
  uptimeSeconds: number;
  database: { status: 'up' | 'down'; latencyMs: number | null };
  providers: Array<
    ReturnType<AppContext['providers']['guard']['report']>[number] extends infer P
      ? Omit<P, 'waitUntil' | 'circuitHalfOpens'> & { waitUntil: string | null }
      : never
  >;
  time: string;
};

/** The database's round trip in whole milliseconds, or null when it failed or took longer than PROBE_TIMEOUT_MS. */
async function probe(app: Pick<AppContext, 'databaseProbe'>): Promise<number | null> {
  const started = performance.now();
  try {
    await app.databaseProbe.ping(PROBE_TIMEOUT_MS);
    return Math.round(performance.now() - started);
  } catch {
    return null;
  }
}

export async function checkHealth(app: Pick<AppContext, 'databaseProbe' | 'startedAt' | 'providers'>, version: string): Promise<Health> {
  const latencyMs = await probe(app);
  const up = latencyMs !== null;
  return {
    status: up ? 'ok' : 'degraded',
    version,
    uptimeSeconds: Math.floor((Date.now() - app.startedAt.getTime()) / 1000),
    database: { status: up ? 'up' : 'down', latencyMs },
    // The documented fields (HealthProvider); the half-open count is a metric only (src/domain/metrics.ts).
    providers: app.providers.guard
      .report()
      .map(({ circuitHalfOpens: _, ...p }) => ({ ...p, waitUntil: p.waitUntil?.toISOString() ?? null })),
    time: new Date().toISOString(),
  };
}
