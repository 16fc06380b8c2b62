// Common section: getHealth (no authentication). 200 while the database answers (src/domain/health.ts), 503 with
// the same body (status "degraded") otherwise.
import { checkHealth } from '../domain/health.ts';
import { definePublicHandlers } from '../http/handler-types.ts';
import pkg from '../../package.json' with { type: 'json' };

export const healthHandlers = definePublicHandlers({
  async getHealth(_input, { app }) {
    const body = await checkHealth(app, pkg.version);
    return { status: body.status === 'ok' ? 200 : 503, body };
  },
});
