// The sandbox registry: plays The Campaign Registry (brands, campaigns) and the carriers' sender review (RCS
// launch, toll-free verification, sender registration) for the Submissions section. Outcomes are chosen by
// what was submitted, like a carrier's magic test numbers (README, "Carrier sandbox"); the subject is a brand's
// displayName, a campaign's description or a sender's name, matched case-insensitively:
//   - `REJECT`: rejected after review, with reasons;
//   - `CHANGES`: the reviewer requests changes: rejected with a reason naming one field to add (brand `website`,
//     campaign `privacyPolicyUrl`, sender submission `optInEvidenceUrl`); registered or submitted again with that
//     field, it is approved;
//   - `SUSPEND`: approved, then suspended with reasons one step later; the next refresh-status lifts it (the
//     appeal succeeded);
//   - `EXPIRE`: a campaign is approved, then EXPIRED one step later (it was not renewed);
//   - `UPSTREAM` (`UPSTREAM_DOWN`): the registry cannot be reached, the call fails (502);
//   - anything else is approved after review.
// A brand registered with `requestVetting: true` is vetted on approval: score 85 when its displayName contains
// `VET_HIGH`, 30 with `VET_LOW`, 60 otherwise (the 10DLC throughput classes 75, 4 and 40 msg/s).
// A review takes two steps (accepted → in review → decided), each `SANDBOX_REGISTRY_STEP_MS` milliseconds apart
// (default 2000; the jobs in src/jobs/submissions.ts run them). The sandbox keeps no reference: it decides by the
// subject and details each time it is asked.
import { randomBytes } from 'node:crypto';
import {
  ProviderError,
  type ProviderRegistry,
  type RegistryDecision,
  type RegistryKind,
  type RegistryReviewRequest,
  type RegistryStanding,
  type RegistrySubmission,
} from './provider.ts';

/** Milliseconds between two review steps. */
function registryStepMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SANDBOX_REGISTRY_STEP_MS;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : 2000;
}

const REJECT_REASONS: Record<'BRAND' | 'CAMPAIGN' | 'SENDER', string[]> = {
  BRAND: ['The brand identity could not be verified against the tax id given.'],
  CAMPAIGN: ['Sample messages lack opt-out language.', 'The call to action does not state message frequency.'],
  SENDER: ['The sender profile does not match the brand the recipients know.'],
};

/** The field a `CHANGES` review asks for, and why. */
const REQUESTED_CHANGE: Record<'BRAND' | 'CAMPAIGN' | 'SENDER', { field: string; reason: string }> = {
  BRAND: { field: 'website', reason: 'Changes requested: add the brand’s website (website) so its identity can be checked.' },
  CAMPAIGN: {
    field: 'privacyPolicyUrl',
    reason: 'Changes requested: add the privacy policy recipients can read (privacyPolicyUrl).',
  },
  SENDER: {
    field: 'optInEvidenceUrl',
    reason: 'Changes requested: add a public page or screenshot showing the opt-in (optInEvidenceUrl).',
  },
};

const SUSPEND_REASONS = ['A carrier suspended the registration after complaints about unsolicited messages.'];

/** The sandbox vetting score of a brand (see the header). */
function vettingScore(subject: string): number {
  if (/VET_HIGH/i.test(subject)) return 85;
  if (/VET_LOW/i.test(subject)) return 30;
  return 60;
}

const group = (kind: RegistryKind): 'BRAND' | 'CAMPAIGN' | 'SENDER' => (kind === 'BRAND' || kind === 'CAMPAIGN' ? kind : 'SENDER');

function id(prefix: string): string {
  return prefix + randomBytes(4).toString('hex').toUpperCase().slice(0, 6);
}

export class SimulatorRegistry implements ProviderRegistry {
  readonly vetsBrands = true;
  readonly kinds: ReadonlySet<RegistryKind> = new Set<RegistryKind>([
    'BRAND',
    'CAMPAIGN',
    'TOLL_FREE_VERIFICATION',
    'RCS_AGENT_LAUNCH',
    'SENDER_REGISTRATION',
  ]);

  get stepMs(): number {
    return registryStepMs();
  }

  async submit(submission: RegistrySubmission): Promise<{ reference: string | null }> {
    if (/UPSTREAM/i.test(submission.subject))
      throw new ProviderError(
        `The ${group(submission.kind) === 'SENDER' ? 'carrier submission service' : 'registry'} is unavailable. Try again later.`,
      );
    return { reference: null };
  }

  async review(request: RegistryReviewRequest): Promise<RegistryDecision> {
    const kind = group(request.kind);
    if (/REJECT/i.test(request.subject)) return { outcome: 'rejected', reasons: REJECT_REASONS[kind] };
    const change = REQUESTED_CHANGE[kind];
    if (/CHANGES/i.test(request.subject) && !request.details[change.field]) return { outcome: 'rejected', reasons: [change.reason] };
    if (kind === 'BRAND') {
      if (request.details.requestVetting !== true) return { outcome: 'approved', registryId: id('B'), identityStatus: 'VERIFIED' };
      return { outcome: 'approved', registryId: id('B'), identityStatus: 'VETTED_VERIFIED', vettingScore: vettingScore(request.subject) };
    }
    if (kind === 'CAMPAIGN') {
      const expiring = /EXPIRE/i.test(request.subject);
      return { outcome: 'approved', registryId: id('C'), ...(expiring && { expiresAt: new Date(Date.now() + this.stepMs) }) };
    }
    return { outcome: 'approved', registryId: id('S') };
  }

  async standing(request: RegistryReviewRequest & { suspended: boolean }): Promise<RegistryStanding> {
    if (/UPSTREAM/i.test(request.subject)) throw new ProviderError('The registry is unavailable. Try again later.');
    if (/SUSPEND/i.test(request.subject) && !request.suspended) return { standing: 'suspended', reasons: SUSPEND_REASONS };
    if (/EXPIRE/i.test(request.subject) && request.kind === 'CAMPAIGN') return { standing: 'expired' };
    return { standing: 'active' };
  }

  async ping(request: { subject: string }): Promise<void> {
    if (/UPSTREAM/i.test(request.subject)) throw new ProviderError('The registry is unavailable. Try again later.');
  }
}
