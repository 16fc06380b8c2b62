// The Common section's health check (getHealth): the process is up; the database is `up` while it answers a
// trivial query within PROBE_TIMEOUT_MS, `down` otherwise (the handler then answers 503 with the same body).
import type { AppContext } from '../app-context.ts';
import { pingDatabase } from '../db/queries/health/database.ts';

/** Longer than a healthy round trip under load, short enough for a load balancer's check to time out on us first. */
const PROBE_TIMEOUT_MS = 2000;

export type Health = {
  status: 'ok' | 'degraded';
  version: string;
  uptimeSeconds: number;
  database: { status: 'up' | 'down'; latencyMs: number | null };
  time: string;
};

/** The database's round trip in whole milliseconds, or null when it failed or took longer than PROBE_TIMEOUT_MS. */
async function probe(app: Pick<AppContext, 'db'>): Promise<number | null> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pingDatabase(app.db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
      }),
    ]);
    return Math.round(performance.now() - started);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth(app: Pick<AppContext, 'db' | 'startedAt'>, version: string): Promise<Health> {
  const latencyMs = await probe(app);
  const up = latencyMs !== null;
  return {
    status: up ? 'ok' : 'degraded',
    version,
    uptimeSeconds: Math.floor((Date.now() - app.startedAt.getTime()) / 1000),
    database: { status: up ? 'up' : 'down', latencyMs },
    time: new Date().toISOString(),
  };
}
