// Common section: getHealth and getMetrics (no authentication). Health: 200 while the database answers
// (src/domain/health.ts), 503 with the same body (status "degraded") otherwise. Metrics: the provider dispatch state
// in Prometheus's text format (src/domain/metrics.ts).
import { checkHealth } from '../domain/health.ts';
import { renderMetrics } from '../domain/metrics.ts';
import { definePublicHandlers } from '../http/handler-types.ts';
import pkg from '../../package.json' with { type: 'json' };

export const healthHandlers = definePublicHandlers({
  async getHealth(_input, { app }) {
    const body = await checkHealth(app, pkg.version);
    return { status: body.status === 'ok' ? 200 : 503, body };
  },

  async getMetrics(_input, { app }) {
    return { status: 200, body: renderMetrics(app), contentType: 'text/plain; version=0.0.4; charset=utf-8' };
  },
});
