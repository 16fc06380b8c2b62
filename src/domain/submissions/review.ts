// The registry's review, one step per job (src/jobs/submissions.ts) or per refresh: PENDING → IN_REVIEW →
// REGISTERED | REJECTED for brands and campaigns, submitted → in_review → approved | rejected for sender
// submissions. The outcome is the sandbox registry's (src/providers/simulator-registry.ts). Every step is
// announced; a campaign REGISTERED starts billing of its sender's leases and activates the sender when it is
// attached to its program; rejections move the sender through the registry transitions.
import type { Db } from '../../db/database.ts';
import * as numbersQ from '../../db/queries/sender-ids/numbers.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/submissions/registrations.ts';
import { registryDecide, REGISTRY_CARRIERS } from '../../providers/simulator-registry.ts';
import { activateAttachedSender, programOfSender, promoteIfReady } from '../programs/programs.ts';
import type { Services } from '../tenant.ts';
import { scheduleReview, type ReviewJob } from './registrations.ts';
import { applyRegistryEvent, emitSubmissionChanged } from './sender-status.ts';

/** Sandbox monthly campaign fee (passed through at cost). */
const CAMPAIGN_MONTHLY_FEE = '10.00';

/** Applies one step; false when the registration is gone or no longer in `job.from` (nothing done). */
export async function advanceReview(db: Db, services: Pick<Services, 'queue'>, job: ReviewJob, now = new Date()): Promise<boolean> {
  const { organizationId } = job;
  if (job.kind === 'BRAND') {
    const brand = await q.getBrand(db, organizationId, job.id, { forUpdate: true });
    if (!brand || brand.status !== job.from) return false;
    if (brand.status === 'PENDING') {
      await q.updateBrand(db, organizationId, brand.id, { status: 'IN_REVIEW' });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        { senderId: brand.sender_id, type: 'BRAND', submissionId: brand.id, previousStatus: 'PENDING', status: 'IN_REVIEW', reasons: [] },
        now,
      );
      await scheduleReview(db, services, { ...job, from: 'IN_REVIEW' });
      return true;
    }
    if (brand.status !== 'IN_REVIEW') return false;
    const d = registryDecide('BRAND', brand.display_name);
    if (d.outcome === 'approved') {
      await q.updateBrand(db, organizationId, brand.id, {
        status: 'REGISTERED',
        identity_status: d.identityStatus ?? 'VERIFIED',
        registry_brand_id: d.registryId,
        registered_at: now,
      });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        {
          senderId: brand.sender_id,
          type: 'BRAND',
          submissionId: brand.id,
          previousStatus: 'IN_REVIEW',
          status: 'REGISTERED',
          reasons: [],
        },
        now,
      );
    } else {
      await q.updateBrand(db, organizationId, brand.id, {
        status: 'REJECTED',
        identity_status: 'UNVERIFIED',
        rejection_reasons: JSON.stringify(d.reasons),
      });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        {
          senderId: brand.sender_id,
          type: 'BRAND',
          submissionId: brand.id,
          previousStatus: 'IN_REVIEW',
          status: 'REJECTED',
          reasons: d.reasons,
        },
        now,
      );
      const sender = await sendersQ.getSender(db, organizationId, brand.sender_id, { forUpdate: true });
      if (sender)
        await applyRegistryEvent(
          db,
          services,
          organizationId,
          sender,
          'rejected',
          `The brand registration was rejected: ${d.reasons.join(' ')}`,
          now,
        );
    }
    return true;
  }

  if (job.kind === 'CAMPAIGN') {
    const campaign = await q.getCampaign(db, organizationId, job.id, { forUpdate: true });
    if (!campaign || campaign.status !== job.from) return false;
    const senderId = campaign.sender_id;
    if (campaign.status === 'PENDING') {
      await q.updateCampaign(db, organizationId, campaign.id, {
        status: 'IN_REVIEW',
        carrier_statuses: JSON.stringify(REGISTRY_CARRIERS.map((carrier) => ({ carrier, status: 'PENDING' }))),
      });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        { senderId, type: 'CAMPAIGN', submissionId: campaign.id, previousStatus: 'PENDING', status: 'IN_REVIEW', reasons: [] },
        now,
      );
      await scheduleReview(db, services, { ...job, from: 'IN_REVIEW' });
      return true;
    }
    if (campaign.status !== 'IN_REVIEW') return false;
    const d = registryDecide('CAMPAIGN', campaign.description);
    if (d.outcome === 'approved') {
      await q.updateCampaign(db, organizationId, campaign.id, {
        status: 'REGISTERED',
        registry_campaign_id: d.registryId,
        carrier_statuses: JSON.stringify(REGISTRY_CARRIERS.map((carrier) => ({ carrier, status: 'APPROVED' }))),
        monthly_fee: CAMPAIGN_MONTHLY_FEE,
        registered_at: now,
      });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        { senderId, type: 'CAMPAIGN', submissionId: campaign.id, previousStatus: 'IN_REVIEW', status: 'REGISTERED', reasons: [] },
        now,
      );
      // Billing of the sender's purchased numbers begins only now (this exact campaign REGISTERED).
      await numbersQ.startBillingOfSenderNumbers(db, organizationId, senderId, now);
      const program = await programOfSender(db, organizationId, senderId);
      if (program?.campaign_registration_id === campaign.id) {
        await activateAttachedSender(db, services, organizationId, program, senderId);
        await promoteIfReady(db, organizationId, program.id);
      }
    } else {
      await q.updateCampaign(db, organizationId, campaign.id, {
        status: 'REJECTED',
        carrier_statuses: JSON.stringify(REGISTRY_CARRIERS.map((carrier) => ({ carrier, status: 'REJECTED' }))),
        rejection_reasons: JSON.stringify(d.reasons),
      });
      await emitSubmissionChanged(
        db,
        services,
        organizationId,
        { senderId, type: 'CAMPAIGN', submissionId: campaign.id, previousStatus: 'IN_REVIEW', status: 'REJECTED', reasons: d.reasons },
        now,
      );
      const sender = await sendersQ.getSender(db, organizationId, senderId, { forUpdate: true });
      if (sender)
        await applyRegistryEvent(
          db,
          services,
          organizationId,
          sender,
          'rejected',
          `The campaign registration was rejected: ${d.reasons.join(' ')}`,
          now,
        );
    }
    return true;
  }

  const sub = await q.getSubmission(db, organizationId, job.id, { forUpdate: true });
  if (!sub || sub.status !== job.from) return false;
  if (sub.status === 'submitted') {
    await q.updateSubmission(db, organizationId, sub.id, { status: 'in_review' });
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: sub.sender_id, type: 'SENDER_ID', submissionId: sub.id, previousStatus: 'submitted', status: 'in_review', reasons: [] },
      now,
    );
    await scheduleReview(db, services, { ...job, from: 'in_review' });
    return true;
  }
  if (sub.status !== 'in_review') return false;
  const sender = await sendersQ.getSender(db, organizationId, sub.sender_id, { forUpdate: true });
  if (!sender) return false;
  const d = registryDecide('SENDER', sender.name);
  const reasons = d.outcome === 'rejected' ? d.reasons : [];
  const status = d.outcome === 'approved' ? 'approved' : 'rejected';
  await q.updateSubmission(db, organizationId, sub.id, { status, decided_at: now, rejection_reasons: JSON.stringify(reasons) });
  await emitSubmissionChanged(
    db,
    services,
    organizationId,
    { senderId: sender.id, type: 'SENDER_ID', submissionId: sub.id, previousStatus: 'in_review', status, reasons },
    now,
  );
  if (sender.type === 'RCS_AGENT') {
    const phase = status === 'approved' ? 'LAUNCHED' : 'REJECTED';
    await sendersQ.updateSender(db, organizationId, sender.id, { rcs_agent_phase: phase });
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: sender.id, type: 'RCS_AGENT', submissionId: sender.id, previousStatus: sender.rcs_agent_phase, status: phase, reasons },
      now,
    );
  }
  await applyRegistryEvent(
    db,
    services,
    organizationId,
    sender,
    status === 'approved' ? 'approved' : 'rejected',
    status === 'approved' ? null : `The submission was rejected: ${reasons.join(' ')}`,
    now,
  );
  return true;
}
