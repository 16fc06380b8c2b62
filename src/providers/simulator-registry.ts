// The sandbox registry: plays The Campaign Registry (brands, campaigns) and the carriers' sender review (RCS
// launch, toll-free verification, sender registration) for the Submissions section. Outcomes are chosen by
// what was submitted, like a carrier's magic test numbers (README, "Carrier sandbox"):
//   - a brand displayName, campaign description or sender name containing `REJECT` is rejected after review,
//     with reasons;
//   - containing `UPSTREAM` (`UPSTREAM_DOWN`): the registry cannot be reached, the call fails (502);
//   - anything else is approved after review.
// A review takes two steps (accepted → in review → decided), each `SANDBOX_REGISTRY_STEP_MS` milliseconds apart
// (default 2000; the jobs in src/jobs/submissions.ts run them).
import { randomBytes } from 'node:crypto';
import { ProviderError } from './provider.ts';

export type RegistryKind = 'BRAND' | 'CAMPAIGN' | 'SENDER';

export type RegistryDecision =
  { outcome: 'approved'; registryId: string; identityStatus?: string; carriers?: string[] } | { outcome: 'rejected'; reasons: string[] };

export const REGISTRY_CARRIERS = ['AT&T', 'T-Mobile', 'Verizon'] as const;

/** Milliseconds between two review steps. */
export function registryStepMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SANDBOX_REGISTRY_STEP_MS;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : 2000;
}

const REJECT_REASONS: Record<RegistryKind, string[]> = {
  BRAND: ['The brand identity could not be verified against the tax id given.'],
  CAMPAIGN: ['Sample messages lack opt-out language.', 'The call to action does not state message frequency.'],
  SENDER: ['The sender profile does not match the brand the recipients know.'],
};

function id(prefix: string): string {
  return prefix + randomBytes(4).toString('hex').toUpperCase().slice(0, 6);
}

/** Hands a submission to the registry: throws ProviderError when the registry cannot be reached. */
export function registryAccept(kind: RegistryKind, text: string): void {
  if (/UPSTREAM/i.test(text))
    throw new ProviderError(`The ${kind === 'SENDER' ? 'carrier submission service' : 'registry'} is unavailable. Try again later.`);
}

/** The reviewer's decision on a submission (deterministic by what was submitted). */
export function registryDecide(kind: RegistryKind, text: string): RegistryDecision {
  if (/REJECT/i.test(text)) return { outcome: 'rejected', reasons: REJECT_REASONS[kind] };
  if (kind === 'BRAND') return { outcome: 'approved', registryId: id('B'), identityStatus: 'VERIFIED' };
  if (kind === 'CAMPAIGN') return { outcome: 'approved', registryId: id('C'), carriers: [...REGISTRY_CARRIERS] };
  return { outcome: 'approved', registryId: id('S') };
}

/** A status read of the registry (refresh-status): throws ProviderError when it cannot be reached. */
export function registryReachable(text: string): void {
  if (/UPSTREAM/i.test(text)) throw new ProviderError('The registry is unavailable. Try again later.');
}
