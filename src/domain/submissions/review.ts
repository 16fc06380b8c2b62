// The registry's review, one step per job (src/jobs/submissions.ts) or per refresh: PENDING → IN_REVIEW →
// REGISTERED | REJECTED for brands and campaigns, submitted → in_review → approved | rejected for sender
// submissions. The first step is ours (the registry has the registration); at the next ones the sender's provider's
// registry is asked for its decision (ProviderRegistry.review), and while it has none the step is asked again one
// registry step later. One step after approval the registry is asked for the registration's standing
// (ProviderRegistry.standing): a brand or campaign may be SUSPENDED or (a campaign) EXPIRED, an approved sender
// suspended by the carrier; refresh-status asks again (standingStep), which is how a lifted suspension comes back.
// Every step is announced; a campaign REGISTERED starts billing of its sender's leases, charges the first month of
// its fee and of its sender's purchased numbers (fees.ts), and activates the sender when it is attached to its program; rejections and suspensions move the sender through the registry
// transitions; the program's status and its senders' throughput follow every change.
import * as numbersQ from '../../db/queries/sender-ids/numbers.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/submissions/registrations.ts';
import type { RegistryDecision, RegistryKind, RegistryReviewRequest } from '../../providers/provider.ts';
import { activateAttachedSender, programOfSender, programRegistrationChanged, syncProgramsOfSender } from '../programs/programs.ts';
import { registryFor } from '../providers.ts';
import type { Services } from '../tenant.ts';
import { scheduleReview, type ReviewJob } from './registrations.ts';
import { applyRegistryEvent, emitSubmissionChanged } from './sender-status.ts';
import { CAMPAIGN_MONTHLY_FEE, chargeCampaignMonth, chargeNumberMonth } from './fees.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** The US carriers a 10DLC campaign is reviewed by. */
const REGISTRY_CARRIERS = ['AT&T', 'T-Mobile', 'Verizon'] as const;

type ReviewServices = Pick<Services, 'queue' | 'providers'>;

/** The registry of the sender's provider for `kind`; null when the sender is gone. */
async function registryOf(db: TenantDb, services: ReviewServices, organizationId: string, senderId: string, kind: RegistryKind) {
  const sender = await sendersQ.getSender(db, organizationId, senderId);
  return sender ? registryFor(services.providers.forSender(sender), kind) : null;
}

/** The registry of the sender's provider: what it decided on a registration, and its step. */
async function askRegistry(
  db: TenantDb,
  services: ReviewServices,
  organizationId: string,
  senderId: string,
  request: RegistryReviewRequest,
): Promise<{ decision: RegistryDecision; stepMs: number }> {
  const registry = await registryOf(db, services, organizationId, senderId, request.kind);
  if (!registry) return { decision: { outcome: 'pending' }, stepMs: 0 };
  return { decision: await registry.review(request), stepMs: registry.stepMs };
}

/** The registry's step for a sender (the first step's wait). */
async function stepOf(
  db: TenantDb,
  services: ReviewServices,
  organizationId: string,
  senderId: string,
  kind: RegistryKind,
): Promise<number> {
  return (await registryOf(db, services, organizationId, senderId, kind))?.stepMs ?? 0;
}

/**
 * Asks the registry for a decided registration's standing and applies it: a REGISTERED brand or campaign becomes
 * SUSPENDED (reasons in `rejection_reasons`) or EXPIRED, a SUSPENDED one REGISTERED again when the suspension was
 * lifted; an approved sender submission's sender is suspended by the carrier or reinstated. True when something
 * changed. Run one step after approval (the job) and at each refresh-status.
 */
export async function standingStep(db: TenantDb, services: ReviewServices, job: ReviewJob, now = new Date()): Promise<boolean> {
  const { organizationId } = job;
  if (job.kind === 'BRAND' || job.kind === 'CAMPAIGN') {
    const reg =
      job.kind === 'BRAND'
        ? await q.getBrand(db, organizationId, job.id, { forUpdate: true })
        : await q.getCampaign(db, organizationId, job.id, { forUpdate: true });
    if (!reg || (reg.status !== 'REGISTERED' && reg.status !== 'SUSPENDED')) return false;
    const registry = await registryOf(db, services, organizationId, reg.sender_id, job.kind);
    if (!registry) return false;
    const subject = 'display_name' in reg ? reg.display_name : reg.description;
    const s = await registry.standing({
      kind: job.kind,
      reference: reg.registry_reference,
      subject,
      details: reg.details,
      suspended: reg.status === 'SUSPENDED',
    });
    const to = s.standing === 'suspended' ? 'SUSPENDED' : s.standing === 'expired' && job.kind === 'CAMPAIGN' ? 'EXPIRED' : 'REGISTERED';
    if (to === reg.status) return false;
    const reasons = s.standing === 'suspended' ? s.reasons : [];
    const rejection_reasons = JSON.stringify(reasons);
    if (job.kind === 'CAMPAIGN') {
      await q.updateCampaign(db, organizationId, reg.id, { status: to, rejection_reasons });
      // A lifted suspension makes the campaign billable again: its current month, unless already charged.
      if (to === 'REGISTERED') await chargeCampaignMonth(db, organizationId, { id: reg.id, senderId: reg.sender_id }, now);
    } else if (to !== 'EXPIRED') await q.updateBrand(db, organizationId, reg.id, { status: to, rejection_reasons });
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: reg.sender_id, type: job.kind, submissionId: reg.id, previousStatus: reg.status, status: to, reasons },
      now,
    );
    await programRegistrationChanged(db, organizationId, reg.sender_id);
    return true;
  }
  const sub = await q.getSubmission(db, organizationId, job.id);
  if (!sub || sub.status !== 'approved') return false;
  const sender = await sendersQ.getSender(db, organizationId, sub.sender_id, { forUpdate: true });
  // Only the carrier's own suspension is the registry's to lift; a customer or platform suspension is not asked about.
  if (!sender || !(sender.status === 'ACTIVE' || (sender.status === 'SUSPENDED' && sender.suspended_by === 'CARRIER'))) return false;
  const registry = registryFor(services.providers.forSender(sender), sub.kind as RegistryKind);
  const suspended = sender.status === 'SUSPENDED';
  const s = await registry.standing({
    kind: sub.kind as RegistryKind,
    reference: sub.registry_reference,
    subject: sender.name,
    details: sub.details,
    suspended,
  });
  const event = s.standing === 'suspended' && !suspended ? 'suspended' : s.standing === 'active' && suspended ? 'reinstated' : null;
  if (!event) return false;
  const reasons = s.standing === 'suspended' ? s.reasons : [];
  if (sender.type === 'RCS_AGENT') {
    await moveAgentPhase(db, services, organizationId, sender, event === 'suspended' ? 'SUSPENDED' : 'LAUNCHED', reasons, now);
  }
  await applyRegistryEvent(
    db,
    services,
    organizationId,
    sender,
    event,
    event === 'suspended' ? `The carrier suspended the sender: ${reasons.join(' ')}` : null,
    now,
  );
  await syncProgramsOfSender(db, organizationId, sender.id);
  return true;
}

/**
 * Applies one step; false when the registration is gone, no longer in `job.from`, or still under review at the
 * registry (asked again one step later): nothing changed.
 */
export async function advanceReview(db: TenantDb, services: ReviewServices, job: ReviewJob, now = new Date()): Promise<boolean> {
  const { organizationId } = job;
  if (job.from === 'REGISTERED' || job.from === 'approved') return standingStep(db, services, job, now);
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
      await scheduleReview(
        db,
        services,
        { ...job, from: 'IN_REVIEW' },
        await stepOf(db, services, organizationId, brand.sender_id, 'BRAND'),
      );
      return true;
    }
    if (brand.status !== 'IN_REVIEW') return false;
    const { decision: d, stepMs } = await askRegistry(db, services, organizationId, brand.sender_id, {
      kind: 'BRAND',
      reference: brand.registry_reference,
      subject: brand.display_name,
      details: brand.details,
    });
    if (d.outcome === 'pending') {
      await scheduleReview(db, services, job, stepMs);
      return false;
    }
    if (d.outcome === 'approved') {
      await q.updateBrand(db, organizationId, brand.id, {
        status: 'REGISTERED',
        identity_status: d.identityStatus ?? 'VERIFIED',
        registry_brand_id: d.registryId,
        vetting_score: d.vettingScore ?? null,
        rejection_reasons: '[]',
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
      await programRegistrationChanged(db, organizationId, brand.sender_id); // the vetting score sets the class
      await scheduleReview(db, services, { ...job, from: 'REGISTERED' }, stepMs);
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
      await syncProgramsOfSender(db, organizationId, brand.sender_id);
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
      await scheduleReview(db, services, { ...job, from: 'IN_REVIEW' }, await stepOf(db, services, organizationId, senderId, 'CAMPAIGN'));
      return true;
    }
    if (campaign.status !== 'IN_REVIEW') return false;
    const { decision: d, stepMs } = await askRegistry(db, services, organizationId, senderId, {
      kind: 'CAMPAIGN',
      reference: campaign.registry_reference,
      subject: campaign.description,
      details: campaign.details,
    });
    if (d.outcome === 'pending') {
      await scheduleReview(db, services, job, stepMs);
      return false;
    }
    if (d.outcome === 'approved') {
      await q.updateCampaign(db, organizationId, campaign.id, {
        status: 'REGISTERED',
        registry_campaign_id: d.registryId,
        carrier_statuses: JSON.stringify(REGISTRY_CARRIERS.map((carrier) => ({ carrier, status: 'APPROVED' }))),
        monthly_fee: CAMPAIGN_MONTHLY_FEE,
        expires_at: d.expiresAt ?? null,
        rejection_reasons: '[]',
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
      await chargeCampaignMonth(db, organizationId, { id: campaign.id, senderId }, now);
      const program = await programOfSender(db, organizationId, senderId);
      if (program?.campaign_registration_id === campaign.id) await activateAttachedSender(db, services, organizationId, program, senderId);
      await programRegistrationChanged(db, organizationId, senderId);
      await scheduleReview(db, services, { ...job, from: 'REGISTERED' }, stepMs);
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
      await syncProgramsOfSender(db, organizationId, senderId);
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
    await scheduleReview(
      db,
      services,
      { ...job, from: 'in_review' },
      await stepOf(db, services, organizationId, sub.sender_id, sub.kind as RegistryKind),
    );
    return true;
  }
  if (sub.status !== 'in_review') return false;
  const sender = await sendersQ.getSender(db, organizationId, sub.sender_id, { forUpdate: true });
  if (!sender) return false;
  const registry = registryFor(services.providers.forSender(sender), sub.kind as RegistryKind);
  const d = await registry.review({
    kind: sub.kind as RegistryKind,
    reference: sub.registry_reference,
    subject: sender.name,
    details: sub.details,
  });
  if (d.outcome === 'pending') {
    await scheduleReview(db, services, job, registry.stepMs);
    return false;
  }
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
    await moveAgentPhase(db, services, organizationId, sender, status === 'approved' ? 'LAUNCHED' : 'REJECTED', reasons, now);
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
  // A toll-free number has no campaign: its verification approved is what makes its lease billable.
  if (status === 'approved' && sub.kind === 'TOLL_FREE_VERIFICATION') {
    await numbersQ.startBillingOfSenderNumbers(db, organizationId, sender.id, now);
    await chargeNumberMonth(db, organizationId, sender.id, now);
  }
  await syncProgramsOfSender(db, organizationId, sender.id);
  if (status === 'approved') await scheduleReview(db, services, { ...job, from: 'approved' }, registry.stepMs);
  return true;
}

/** Moves an RCS agent's launch phase with its registry outcome, and tells the integrator (submission.changed). */
async function moveAgentPhase(
  db: TenantDb,
  services: ReviewServices,
  organizationId: string,
  sender: sendersQ.SenderRow,
  phase: 'LAUNCHED' | 'SUSPENDED' | 'REJECTED',
  reasons: string[],
  now: Date,
): Promise<void> {
  await sendersQ.updateSender(db, organizationId, sender.id, { rcs_agent_phase: phase });
  await emitSubmissionChanged(
    db,
    services,
    organizationId,
    { senderId: sender.id, type: 'RCS_AGENT', submissionId: sender.id, previousStatus: sender.rcs_agent_phase, status: phase, reasons },
    now,
  );
}
