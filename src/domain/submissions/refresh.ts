// Submissions: refresh-status, a poll of the registry for the sender's open registrations.
import { inTransaction } from '../../db/database.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/submissions/registrations.ts';
import { ProviderError } from '../../providers/provider.ts';
import { ApiError, found } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { ReviewJob } from './registrations.ts';
import { advanceReview, standingStep } from './review.ts';
import type { TenantDb } from '../../db/tenant.ts';

async function lockedSender(db: TenantDb, organizationId: string, id: string): Promise<sendersQ.SenderRow> {
  return found(await sendersQ.getSender(db, organizationId, id, { forUpdate: true }), 'Sender ID');
}

function upstreamError(e: unknown): ApiError {
  return new ApiError(502, 'UPSTREAM_ERROR', e instanceof Error ? e.message : 'The registry could not be reached.');
}

// ── refresh ────────────────────────────────────────────────────────────────────────────────────────────────
export type RefreshResult = {
  sender: sendersQ.SenderRow;
  submission: q.SubmissionRow | null;
  brand: q.BrandRow | null;
  campaign: q.CampaignRow | null;
  changed: boolean;
  refreshedAt: Date;
};

/**
 * Polls the registry for the sender's open registrations: a review step that is due is applied now (the same
 * step the queued job would apply; the job then finds nothing to do). 502 when the registry cannot be reached.
 */
export async function refreshSenderIdStatus(tenant: Tenant, services: Services, id: string, now = new Date()): Promise<RefreshResult> {
  const advance = (job: ReviewJob, db: TenantDb) => advanceReview(db, services, job, now);
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, id);
    // A provider without a registry has nothing under review to poll.
    const registry = services.providers.forSender(sender).registry;
    try {
      await registry?.ping({ subject: sender.name });
    } catch (e) {
      if (e instanceof ProviderError) throw upstreamError(e);
      throw e;
    }
    let changed = false;
    const stepMs = registry?.stepMs ?? 0;
    const due = (updatedAt: Date) => now.getTime() - updatedAt.getTime() >= stepMs;
    // Registrations already decided: their standing at the registry now (suspended, lifted, expired). Asked before
    // the review steps so that a registration approved by this very refresh is not judged in the same breath.
    const decided: ReviewJob[] = [];
    const latestSub = await q.latestSubmission(db, organizationId, id);
    if (latestSub?.status === 'approved') decided.push({ organizationId, kind: 'SENDER', id: latestSub.id, from: 'approved' });
    const latestBrand = await q.latestBrand(db, organizationId, id);
    if (latestBrand && (latestBrand.status === 'REGISTERED' || latestBrand.status === 'SUSPENDED'))
      decided.push({ organizationId, kind: 'BRAND', id: latestBrand.id, from: 'REGISTERED' });
    const latestCampaign = await q.latestCampaign(db, organizationId, id);
    if (latestCampaign && (latestCampaign.status === 'REGISTERED' || latestCampaign.status === 'SUSPENDED'))
      decided.push({ organizationId, kind: 'CAMPAIGN', id: latestCampaign.id, from: 'REGISTERED' });
    try {
      for (const job of decided) changed = (await standingStep(db, services, job, now)) || changed;
    } catch (e) {
      if (e instanceof ProviderError) throw upstreamError(e);
      throw e;
    }
    const submission = await q.latestSubmission(db, organizationId, id);
    if (submission && (submission.status === 'submitted' || submission.status === 'in_review') && due(submission.updated_at)) {
      changed = (await advance({ organizationId, kind: 'SENDER', id: submission.id, from: submission.status }, db)) || changed;
    }
    const brand = await q.latestBrand(db, organizationId, id);
    if (brand && (brand.status === 'PENDING' || brand.status === 'IN_REVIEW') && due(brand.updated_at)) {
      changed = (await advance({ organizationId, kind: 'BRAND', id: brand.id, from: brand.status }, db)) || changed;
    }
    const campaign = await q.latestCampaign(db, organizationId, id);
    if (campaign && (campaign.status === 'PENDING' || campaign.status === 'IN_REVIEW') && due(campaign.updated_at)) {
      changed = (await advance({ organizationId, kind: 'CAMPAIGN', id: campaign.id, from: campaign.status }, db)) || changed;
    }
    return {
      sender: (await sendersQ.getSender(db, organizationId, id))!,
      submission: (await q.latestSubmission(db, organizationId, id)) ?? null,
      brand: (await q.latestBrand(db, organizationId, id)) ?? null,
      campaign: (await q.latestCampaign(db, organizationId, id)) ?? null,
      changed,
      refreshedAt: now,
    };
  });
}
