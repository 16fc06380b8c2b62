// Public enrollment (`security: []`): the hosted page, web forms and QR codes. It acts for the campaign's
// organization (tenantFor), is rate limited per client address (the connection's unless TRUST_PROXY says
// otherwise; IPv6 by /64) across every API process (rate-limiter-flexible on
// PostgreSQL, the store dispatch uses), and answers the same whatever the number was (new, already enrolled,
// opted out or DNC-listed), with no ids.
import type { components } from '../../../generated/api.d.ts';
import type { AppContext } from '../../app-context.ts';
import { campaignOrganization } from '../../db/queries/acquisition/public.ts';
import { ApiError, notFound } from '../errors.ts';
import { consumeOrTooMany, sharedLimiter } from '../rate-limits.ts';
import { tenantFor } from '../tenant.ts';
import { loadCampaign } from './campaigns.ts';
import { clientKey, type PublicClient } from './client.ts';
import { enroll } from './enroll.ts';

type EnrollRequest = components['schemas']['AcquisitionEnrollRequest'];

/** Requests per client IP per window (the document: 10 per minute). */
export const PUBLIC_ENROLL_LIMIT = { points: 10, durationSeconds: 60 };
export const PUBLIC_ENROLL_MESSAGE = 'Thanks! Your sign-up was received.';

const consumeOrRefuse = (app: AppContext, ip: string) =>
  consumeOrTooMany(sharedLimiter(app.pool, 'public-enroll-ip', PUBLIC_ENROLL_LIMIT.points, PUBLIC_ENROLL_LIMIT.durationSeconds), ip, 'sign-ups');

export type PublicEnrollResult = { redirectUrl: string | null; message: string };

export async function enrollPublic(
  app: AppContext,
  campaignId: string,
  body: EnrollRequest,
  client: PublicClient,
): Promise<PublicEnrollResult> {
  await consumeOrRefuse(app, clientKey(client.ip));
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
