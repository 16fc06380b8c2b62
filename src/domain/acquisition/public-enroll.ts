// Public enrollment (`security: []`): the hosted page, web forms and QR codes. It acts for the campaign's
// organization (tenantFor), is rate limited per client IP across every API process (rate-limiter-flexible on
// PostgreSQL, the store dispatch uses), and answers the same whatever the number was (new, already enrolled,
// opted out or DNC-listed), with no ids.
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { components } from '../../../generated/api.d.ts';
import type { AppContext } from '../../app-context.ts';
import { campaignOrganization } from '../../db/queries/acquisition/public.ts';
import { ApiError, notFound } from '../errors.ts';
import { tenantFor } from '../tenant.ts';
import { loadCampaign } from './campaigns.ts';
import { enroll } from './enroll.ts';

type EnrollRequest = components['schemas']['AcquisitionEnrollRequest'];

/** Requests per client IP per window (the document: 10 per minute). */
export const PUBLIC_ENROLL_LIMIT = { points: 10, durationSeconds: 60 };
export const PUBLIC_ENROLL_MESSAGE = 'Thanks! Your sign-up was received.';

const limiters = new WeakMap<AppContext, RateLimiterPostgres>();

function limiterFor(app: AppContext): RateLimiterPostgres {
  let limiter = limiters.get(app);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: app.pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: 'public-enroll-ip',
      points: PUBLIC_ENROLL_LIMIT.points,
      duration: PUBLIC_ENROLL_LIMIT.durationSeconds,
    });
    limiters.set(app, limiter);
  }
  return limiter;
}

async function consumeOrRefuse(app: AppContext, ip: string): Promise<void> {
  try {
    await limiterFor(app).consume(ip, 1);
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new ApiError(429, 'RATE_LIMITED', `Too many sign-ups from this address; retry in ${seconds} s.`, { headers: { 'Retry-After': String(seconds) } });
  }
}

export type PublicEnrollResult = { redirectUrl: string | null; message: string };

export async function enrollPublic(
  app: AppContext,
  campaignId: string,
  body: EnrollRequest,
  client: { ip: string | null; userAgent: string | null },
): Promise<PublicEnrollResult> {
  await consumeOrRefuse(app, client.ip ?? 'unknown');
  const orgId = await campaignOrganization(app.db, campaignId);
  if (!orgId) throw notFound('Acquisition campaign');
  const tenant = await tenantFor(app, orgId);
  const { db: _db, pool: _pool, ...services } = app;
  try {
    const { campaign } = await enroll(tenant, services, campaignId, body, { kind: 'public', ip: client.ip, userAgent: client.userAgent });
    return { redirectUrl: campaign.redirect_url, message: PUBLIC_ENROLL_MESSAGE };
  } catch (error) {
    // A DNC-listed phone is silently not enrolled: the page must not reveal it.
    if (error instanceof ApiError && error.code === 'DNC_LISTED') {
      const campaign = await loadCampaign(tenant, campaignId);
      return { redirectUrl: campaign.redirect_url, message: PUBLIC_ENROLL_MESSAGE };
    }
    throw error;
  }
}
