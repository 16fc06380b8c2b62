// The sandbox registry: plays The Campaign Registry (brands, campaigns) and the carriers' sender review (RCS
// launch, toll-free verification, sender registration) for the Submissions section. Outcomes are chosen by
// what was submitted, like a carrier's magic test numbers (README, "Carrier sandbox"):
//   - a brand displayName, campaign description or sender name containing `REJECT` is rejected after review,
//     with reasons;
//   - containing `UPSTREAM` (`UPSTREAM_DOWN`): the registry cannot be reached, the call fails (502);
//   - anything else is approved after review.
// A review takes two steps (accepted → in review → decided), each `SANDBOX_REGISTRY_STEP_MS` milliseconds apart
// (default 2000; the jobs in src/jobs/submissions.ts run them). The sandbox keeps no reference: it decides by the
// subject each time it is asked.
import { randomBytes } from 'node:crypto';
import { ProviderError, type ProviderRegistry, type RegistryDecision, type RegistryKind, type RegistrySubmission } from './provider.ts';

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

const group = (kind: RegistryKind): 'BRAND' | 'CAMPAIGN' | 'SENDER' => (kind === 'BRAND' || kind === 'CAMPAIGN' ? kind : 'SENDER');

function id(prefix: string): string {
  return prefix + randomBytes(4).toString('hex').toUpperCase().slice(0, 6);
}

export class SimulatorRegistry implements ProviderRegistry {
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

  async review(request: { kind: RegistryKind; reference: string | null; subject: string }): Promise<RegistryDecision> {
    const kind = group(request.kind);
    if (/REJECT/i.test(request.subject)) return { outcome: 'rejected', reasons: REJECT_REASONS[kind] };
    if (kind === 'BRAND') return { outcome: 'approved', registryId: id('B'), identityStatus: 'VERIFIED' };
    if (kind === 'CAMPAIGN') return { outcome: 'approved', registryId: id('C') };
    return { outcome: 'approved', registryId: id('S') };
  }

  async ping(request: { subject: string }): Promise<void> {
    if (/UPSTREAM/i.test(request.subject)) throw new ProviderError('The registry is unavailable. Try again later.');
  }
}
