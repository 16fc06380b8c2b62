// Submissions: RCS launch, sender submission, brand and campaign registration with the (sandbox) registry,
// their status reads and refresh. Each registration is recorded, handed to the registry at once (an unreachable
// registry is 502), then reviewed over time by pg-boss jobs (src/jobs/submissions.ts → review.ts), which move it
// and announce every change (`submission.status_changed`, `sender_id.status_changed`).
import { fromKysely } from 'pg-boss';
import { inTransaction, type Db } from '../../db/database.ts';
import * as sendersQ from '../../db/queries/sender-ids/senders.ts';
import * as q from '../../db/queries/submissions/registrations.ts';
import { QUEUES } from '../../jobs/queue-names.ts';
import { ProviderError, type RegistrySubmission } from '../../providers/provider.ts';
import { effectiveKeywordRules, orgKeywordRules, type KeywordAction } from '../compliance/keyword-rules.ts';
import { ApiError, badRequest, conflict, found, type FieldError } from '../errors.ts';
import { invalidState } from '../sender-ids/senders.ts';
import { programForBrand, sandboxSenderRefused, setProgramCampaign } from '../programs/programs.ts';
import { registryFor } from '../providers.ts';
import { chargeBrandRegistration, chargeCampaignVetting } from './fees.ts';
import { toSubmission } from './mappers.ts';
import type { Services, Tenant } from '../tenant.ts';
import { applyRegistryEvent, emitSubmissionChanged } from './sender-status.ts';
import type { BrandEntityType, BrandVertical, CampaignUseCase, SenderSubmissionKind } from '../../db/tables/enums.ts';
import type { TenantDb } from '../../db/tenant.ts';

/** One review step: applies only while the registration is still `from` (a refresh may have applied it first). */
export type ReviewJob = { organizationId: string; kind: 'BRAND' | 'CAMPAIGN' | 'SENDER'; id: string; from: string };

/** Queues the next review step of a registration, `stepMs` (its registry's) from now, in the caller's transaction. */
export async function scheduleReview(db: Db, services: Pick<Services, 'queue'>, job: ReviewJob, stepMs: number): Promise<void> {
  if (!services.queue) return;
  await services.queue.send(QUEUES.submissionReview, job, { db: fromKysely(db), startAfter: new Date(Date.now() + stepMs) });
}

function upstreamError(e: unknown): ApiError {
  return new ApiError(502, 'UPSTREAM_ERROR', e instanceof Error ? e.message : 'The registry could not be reached.');
}

/**
 * Hands a registration to the sender's provider's registry (422 PROVIDER_UNSUPPORTED when it reviews no such
 * kind): its reference there, and the registry's step.
 */
async function submitToRegistry(
  services: Pick<Services, 'providers'>,
  sender: sendersQ.SenderRow,
  submission: Omit<RegistrySubmission, 'senderId'>,
): Promise<{ reference: string | null; stepMs: number; vetsBrands: boolean }> {
  const registry = registryFor(services.providers.forSender(sender), submission.kind);
  const { reference } = await registry.submit({ ...submission, senderId: sender.id, senderNumber: sender.phone_number });
  return { reference, stepMs: registry.stepMs, vetsBrands: registry.vetsBrands };
}

/** The sender, locked; a DEACTIVATED one is final (409 INVALID_STATE). */
async function lockedSender(db: TenantDb, organizationId: string, id: string): Promise<sendersQ.SenderRow> {
  const sender = found(await sendersQ.getSender(db, organizationId, id, { forUpdate: true }), 'Sender ID');
  if (sender.status === 'DEACTIVATED')
    throw invalidState(sender.status, 'A DEACTIVATED sender ID cannot be launched, submitted or registered');
  return sender;
}

// ── launch ─────────────────────────────────────────────────────────────────────────────────────────────────
export type LaunchResult = { senderId: string; phase: string; previousPhase: string; alreadyPending: boolean; launchRequestedAt: Date };

export async function launchSenderId(tenant: Tenant, services: Services, id: string, now = new Date()): Promise<LaunchResult> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, id);
    if (sender.type !== 'RCS_AGENT') {
      throw new ApiError(400, 'NOT_RCS_SENDER', `Only an RCS_AGENT sender has an agent to launch; this one is ${sender.type}.`, {
        details: [{ field: 'path.id', message: `the sender ID is ${sender.type}`, code: 'not_rcs_sender' }],
      });
    }
    const phase = sender.rcs_agent_phase ?? 'TESTING';
    if (phase === 'LAUNCH_PENDING') {
      const launch = await q.recordLaunch(db, organizationId, id, now);
      return { senderId: id, phase, previousPhase: phase, alreadyPending: true, launchRequestedAt: launch.requested_at };
    }
    if (phase !== 'TESTING') {
      throw new ApiError(409, 'AGENT_NOT_IN_TESTING', `The RCS agent is ${phase}; only an agent in TESTING can be launched.`, {
        details: [{ field: 'path.id', message: `the agent is ${phase}`, code: 'invalid_state' }],
      });
    }
    await sendersQ.updateSender(db, organizationId, id, { rcs_agent_phase: 'LAUNCH_PENDING' });
    const launch = await q.recordLaunch(db, organizationId, id, now);
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: id, type: 'RCS_AGENT', submissionId: id, previousStatus: 'TESTING', status: 'LAUNCH_PENDING', reasons: [] },
      now,
    );
    return {
      senderId: id,
      phase: 'LAUNCH_PENDING',
      previousPhase: 'TESTING',
      alreadyPending: false,
      launchRequestedAt: launch.requested_at,
    };
  });
}

// ── submit ─────────────────────────────────────────────────────────────────────────────────────────────────
const KIND_BY_TYPE: Record<string, SenderSubmissionKind> = {
  RCS_AGENT: 'RCS_AGENT_LAUNCH',
  TOLL_FREE: 'TOLL_FREE_VERIFICATION',
  SHORT_CODE: 'SENDER_REGISTRATION',
  ALPHANUMERIC: 'SENDER_REGISTRATION',
  CHATAPP_BUSINESS: 'SENDER_REGISTRATION',
};
const OPEN_SUBMISSION = new Set(['pending', 'submitted', 'in_review', 'approved']);

export type SubmitBody = { useCaseDescription?: string; sampleMessages?: string[]; [k: string]: unknown };

/**
 * The reviewer needs a use-case description and at least one sample message; the sender profile holds neither,
 * so both come from the body (400 naming the missing fields).
 */
/** What an RCS agent's launch review needs from its details (column, field name in the document). */
const RCS_AGENT_REQUIRED = [
  ['display_name', 'displayName'],
  ['description', 'description'],
  ['logo_url', 'logoUrl'],
] as const;

export async function submitSenderId(
  tenant: Tenant,
  services: Services,
  id: string,
  body: SubmitBody,
  now = new Date(),
): Promise<q.SubmissionRow> {
  const outcome = await inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, id);
    const kind = KIND_BY_TYPE[sender.type];
    if (!kind)
      throw badRequest('LONG_CODE (10DLC) numbers are registered with the brand and campaign operations, not submitted.', [
        { field: 'path.id', message: 'register the brand and campaign instead', code: 'invalid' },
      ]);
    const missing: FieldError[] = [];
    if (!body.useCaseDescription)
      missing.push({ field: 'body.useCaseDescription', message: 'required by the reviewer (not in the sender profile)', code: 'required' });
    if (!body.sampleMessages?.length)
      missing.push({ field: 'body.sampleMessages', message: 'required by the reviewer (not in the sender profile)', code: 'required' });
    if (missing.length) throw badRequest('Information the reviewer requires is missing.', missing);
    let details: Record<string, unknown> = { ...body };
    if (sender.type === 'RCS_AGENT') {
      const phase = sender.rcs_agent_phase ?? 'TESTING';
      if (phase !== 'LAUNCH_PENDING' && phase !== 'REJECTED')
        throw invalidState(sender.status, `The RCS agent is ${phase}; launch it first (POST /v1/sender-ids/{id}/launch)`);
      // The carriers review the agent as recipients will see it: its details (set with PATCH /v1/sender-ids/{id}
      // `rcsAgent`, or the deprecated createRcsSender) go with the submission.
      const agent = await sendersQ.getRcsAgentProfile(db, organizationId, id);
      const lacking = RCS_AGENT_REQUIRED.filter(([column]) => !agent?.[column]).map(([, field]) => ({
        field: `rcsAgent.${field}`,
        message: 'required to launch an RCS agent; set it with PATCH /v1/sender-ids/{id}',
        code: 'required',
      }));
      if (lacking.length) throw badRequest('The RCS agent’s details the carriers review are incomplete.', lacking);
      details = {
        ...details,
        rcsAgent: {
          displayName: agent!.display_name,
          description: agent!.description,
          brandColor: agent!.brand_color,
          logoUrl: agent!.logo_url,
        },
      };
    }
    const latest = await q.latestSubmission(db, organizationId, id);
    if (latest && OPEN_SUBMISSION.has(latest.status)) throw invalidState(sender.status, `A submission is already ${latest.status}`);
    let submitted: { reference: string | null; stepMs: number };
    try {
      submitted = await submitToRegistry(services, sender, { kind, organizationId, details, subject: sender.name });
    } catch (e) {
      if (!(e instanceof ProviderError)) throw e;
      const failed = await q.insertSubmission(db, organizationId, {
        sender_id: id,
        kind,
        status: 'failed',
        details,
        rejection_reasons: '[]',
        error: { code: 'UPSTREAM_UNAVAILABLE', message: e.message },
      });
      return { ok: false as const, row: failed };
    }
    const row = await q.insertSubmission(db, organizationId, {
      sender_id: id,
      kind,
      status: 'submitted',
      details,
      rejection_reasons: '[]',
      registry_reference: submitted.reference,
      submitted_at: now,
    });
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: id, type: 'SENDER_ID', submissionId: row.id, previousStatus: null, status: 'submitted', reasons: [] },
      now,
    );
    await applyRegistryEvent(db, services, organizationId, sender, 'submitted', 'Waiting for the carriers to approve the submission.', now);
    if (sender.type === 'RCS_AGENT' && sender.rcs_agent_phase === 'REJECTED') {
      await sendersQ.updateSender(db, organizationId, id, { rcs_agent_phase: 'LAUNCH_PENDING' });
    }
    await scheduleReview(db, services, { organizationId, kind: 'SENDER', id: row.id, from: 'submitted' }, submitted.stepMs);
    return { ok: true as const, row };
  });
  if (!outcome.ok) {
    throw new ApiError(502, 'UPSTREAM_ERROR', 'The upstream sender submission failed.', {
      extra: { senderId: id, submission: toSubmission(outcome.row) },
    });
  }
  return outcome.row;
}

// ── brand ──────────────────────────────────────────────────────────────────────────────────────────────────
const BRAND_BLOCKING = new Set(['PENDING', 'IN_REVIEW', 'REGISTERED', 'SUSPENDED']);

export type BrandBody = {
  entityType: BrandEntityType;
  displayName: string;
  companyName?: string;
  country: string;
  vertical: BrandVertical;
  [k: string]: unknown;
};

export async function registerBrand(
  tenant: Tenant,
  services: Services,
  id: string,
  body: BrandBody,
  now = new Date(),
): Promise<q.BrandRow> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, id);
    // A brand registration attaches its sender to the program it creates: the sandbox sender cannot be.
    if (sender.is_sandbox) throw sandboxSenderRefused('path.id');
    const latest = await q.latestBrand(db, organizationId, id, { forUpdate: true });
    if (latest && BRAND_BLOCKING.has(latest.status))
      throw conflict('INVALID_STATE', `The sender already has a brand registration that is ${latest.status}.`);
    let submitted: { reference: string | null; stepMs: number; vetsBrands: boolean };
    try {
      submitted = await submitToRegistry(services, sender, { kind: 'BRAND', organizationId, details: body, subject: body.displayName });
    } catch (e) {
      if (e instanceof ProviderError) throw upstreamError(e);
      throw e;
    }
    const brand = await q.insertBrand(db, organizationId, {
      sender_id: id,
      status: 'PENDING',
      entity_type: body.entityType,
      display_name: body.displayName,
      company_name: body.companyName ?? null,
      country: body.country,
      vertical: body.vertical,
      details: body,
      rejection_reasons: '[]',
      registry_reference: submitted.reference,
      submitted_at: now,
      updated_at: now,
    });
    await programForBrand(db, organizationId, sender, brand);
    // The registration's fee, and its vetting's when ordered with it, are due now whatever the outcome. A registry
    // that does not take the vetting order (Telnyx: vetting is bought in its portal) charges nothing here for it.
    await chargeBrandRegistration(db, organizationId, brand.id, body.requestVetting === true && submitted.vetsBrands, now);
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: id, type: 'BRAND', submissionId: brand.id, previousStatus: null, status: 'PENDING', reasons: [] },
      now,
    );
    await applyRegistryEvent(db, services, organizationId, sender, 'submitted', 'Waiting for the brand and campaign registrations.', now);
    await scheduleReview(db, services, { organizationId, kind: 'BRAND', id: brand.id, from: 'PENDING' }, submitted.stepMs);
    return brand;
  });
}

export async function getBrandStatus(tenant: Tenant, id: string): Promise<q.BrandRow | null> {
  found(await sendersQ.getSender(tenant.db, tenant.organizationId, id), 'Sender ID');
  return (await q.latestBrand(tenant.db, tenant.organizationId, id)) ?? null;
}

// ── campaign ───────────────────────────────────────────────────────────────────────────────────────────────
const CAMPAIGN_BLOCKING = new Set(['PENDING', 'IN_REVIEW', 'REGISTERED', 'SUSPENDED']);
const DEFAULT_OPT_OUT = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];
const DEFAULT_HELP = ['HELP', 'INFO'];

export type CampaignBody = {
  useCase: CampaignUseCase;
  subUseCases?: CampaignUseCase[];
  description: string;
  messageFlow: string;
  sampleMessages: string[];
  optInKeywords?: string[];
  optOutKeywords?: string[];
  helpKeywords?: string[];
  [k: string]: unknown;
};

/**
 * The campaign against the organization's keyword rules (global rules merged with its own): every declared
 * opt-in, opt-out and help keyword must be handled by a rule of that action, and at least one sample message
 * must show how to opt out (contain one of the opt-out keywords). 400 naming each problem.
 */
async function checkCampaignAgainstRules(db: TenantDb, organizationId: string, body: CampaignBody): Promise<void> {
  const rules = effectiveKeywordRules(await orgKeywordRules(db, organizationId));
  const problems: FieldError[] = [];
  if (body.subUseCases?.length && body.useCase !== 'MIXED' && body.useCase !== 'LOW_VOLUME') {
    problems.push({ field: 'body.subUseCases', message: 'subUseCases only with useCase MIXED or LOW_VOLUME', code: 'invalid' });
  }
  const lists: Array<[string, string[], KeywordAction]> = [
    ['optInKeywords', body.optInKeywords ?? [], 'OPT_IN'],
    ['optOutKeywords', body.optOutKeywords ?? DEFAULT_OPT_OUT, 'OPT_OUT'],
    ['helpKeywords', body.helpKeywords ?? DEFAULT_HELP, 'HELP'],
  ];
  for (const [field, keywords, action] of lists) {
    keywords.forEach((k, i) => {
      const rule = rules.get(k.trim().toUpperCase());
      if (!rule)
        problems.push({
          field: `body.${field}.${i}`,
          message: `no keyword rule handles ${k}; add one with action ${action} (/v1/compliance/keyword-rules)`,
          code: 'invalid',
        });
      else if (rule.action !== action)
        problems.push({
          field: `body.${field}.${i}`,
          message: `${k} is handled as ${rule.action} by the organization's keyword rules, not ${action}`,
          code: 'invalid',
        });
    });
  }
  const optOut = (body.optOutKeywords ?? DEFAULT_OPT_OUT).map((k) => k.trim().toUpperCase());
  const mentions = (text: string) => optOut.some((k) => new RegExp(`\\b${k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(text));
  if (!body.sampleMessages.some(mentions)) {
    problems.push({
      field: 'body.sampleMessages',
      message: `at least one sample message must show how to opt out (one of ${optOut.join(', ')})`,
      code: 'invalid',
    });
  }
  if (problems.length) throw badRequest("The campaign does not match the organization's keyword rules.", problems);
}

export async function registerCampaign(
  tenant: Tenant,
  services: Services,
  id: string,
  body: CampaignBody,
  now = new Date(),
): Promise<q.CampaignRow> {
  return inTransaction(tenant.db, async (tx) => {
    const db: TenantDb = tx;
    const { organizationId } = tenant;
    const sender = await lockedSender(db, organizationId, id);
    if (sender.is_sandbox) throw sandboxSenderRefused('path.id');
    await checkCampaignAgainstRules(db, organizationId, body);
    const brand = await q.latestBrand(db, organizationId, id);
    if (brand?.status !== 'REGISTERED')
      throw conflict(
        'INVALID_STATE',
        `The sender's brand registration is ${brand?.status ?? 'missing'}; a campaign needs a REGISTERED brand.`,
      );
    const latest = await q.latestCampaign(db, organizationId, id);
    if (latest && CAMPAIGN_BLOCKING.has(latest.status))
      throw conflict('INVALID_STATE', `The sender already has a campaign registration that is ${latest.status}.`);
    let submitted: { reference: string | null; stepMs: number };
    try {
      submitted = await submitToRegistry(services, sender, {
        kind: 'CAMPAIGN',
        organizationId,
        details: body,
        subject: body.description,
        brandReference: brand.registry_reference,
      });
    } catch (e) {
      if (e instanceof ProviderError) throw upstreamError(e);
      throw e;
    }
    const campaign = await q.insertCampaign(db, organizationId, {
      sender_id: id,
      brand_registration_id: brand.id,
      status: 'PENDING',
      use_case: body.useCase,
      sub_use_cases: JSON.stringify(body.subUseCases ?? []),
      description: body.description,
      details: body,
      rejection_reasons: '[]',
      carrier_statuses: '[]',
      registry_reference: submitted.reference,
      submitted_at: now,
      updated_at: now,
    });
    await setProgramCampaign(db, organizationId, id, campaign.id);
    await chargeCampaignVetting(db, organizationId, { id: campaign.id, brandId: brand.id }, now); // due whatever the outcome
    await emitSubmissionChanged(
      db,
      services,
      organizationId,
      { senderId: id, type: 'CAMPAIGN', submissionId: campaign.id, previousStatus: null, status: 'PENDING', reasons: [] },
      now,
    );
    await applyRegistryEvent(db, services, organizationId, sender, 'submitted', 'Waiting for the campaign registration.', now);
    await scheduleReview(db, services, { organizationId, kind: 'CAMPAIGN', id: campaign.id, from: 'PENDING' }, submitted.stepMs);
    return campaign;
  });
}

export async function getCampaignStatus(tenant: Tenant, id: string): Promise<q.CampaignRow | null> {
  found(await sendersQ.getSender(tenant.db, tenant.organizationId, id), 'Sender ID');
  return (await q.latestCampaign(tenant.db, tenant.organizationId, id)) ?? null;
}
