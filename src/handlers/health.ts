// Common section: getHealth (no authentication). 200 while the database answers a trivial query within
// 2 seconds, 503 (same body, status "degraded") otherwise. `providers` is this process's dispatch state of each
// slot (src/providers/guard.ts): an open circuit or a provider's rate limit delays messages without failing them,
// so it is reported, not made a 503 (every instance would leave the load balancer at once).
import { sql } from 'kysely';
import { definePublicHandlers, type PublicScope } from '../http/handler-types.ts';
import pkg from '../../package.json' with { type: 'json' };

async function probe(scope: PublicScope): Promise<number | null> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`select 1`.execute(scope.app.db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), 2000);
      }),
    ]);
    return Math.round(performance.now() - started);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export const healthHandlers = definePublicHandlers({
  async getHealth(_input, scope) {
    const latencyMs = await probe(scope);
    const up = latencyMs !== null;
    const body = {
      status: up ? ('ok' as const) : ('degraded' as const),
      version: pkg.version,
      uptimeSeconds: Math.floor((Date.now() - scope.app.startedAt.getTime()) / 1000),
      database: { status: up ? ('up' as const) : ('down' as const), latencyMs },
      providers: scope.app.providers.guard.report().map((p) => ({ ...p, waitUntil: p.waitUntil?.toISOString() ?? null })),
      time: new Date().toISOString(),
    };
    return up ? { status: 200, body } : { status: 503, body };
  },
});
