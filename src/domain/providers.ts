// The domain's one way to reach a provider operation that not every provider has (src/providers/provider.ts): the
// operation, bound to its provider, or 422 PROVIDER_UNSUPPORTED naming what the configured provider cannot do —
// asked before anything is written, so an unsupported request changes nothing.
import type { MessagingProvider, OptionalOperation, ProviderRegistry, RegistryKind } from '../providers/provider.ts';
import { ApiError } from './errors.ts';

/**
 * 422 PROVIDER_UNSUPPORTED: "The configured provider (PROVIDER_A) does not support number search.", naming the
 * request field that chose the provider or the sender when there is one.
 */
export function providerUnsupported(provider: MessagingProvider, what: string, field?: string): ApiError {
  const message = `The configured provider (${provider.name}) does not support ${what}.`;
  return new ApiError(422, 'PROVIDER_UNSUPPORTED', message, field ? { details: [{ field, message, code: 'provider_unsupported' }] } : {});
}

/** `provider[op]`, bound; 422 PROVIDER_UNSUPPORTED when the provider lacks it. */
export function providerOperation<K extends OptionalOperation>(
  provider: MessagingProvider,
  op: K,
  what: string,
  field?: string,
): NonNullable<MessagingProvider[K]> {
  const fn = provider[op] as ((...args: never[]) => unknown) | undefined;
  if (!fn) throw providerUnsupported(provider, what, field);
  return fn.bind(provider) as NonNullable<MessagingProvider[K]>;
}

const REGISTRY_WHAT: Record<RegistryKind, string> = {
  BRAND: '10DLC brand registration',
  CAMPAIGN: '10DLC campaign registration',
  TOLL_FREE_VERIFICATION: 'toll-free verification',
  RCS_AGENT_LAUNCH: 'RCS agent launch review',
  SENDER_REGISTRATION: 'sender registration',
};

/** The provider's registry when it reviews `kind`; 422 PROVIDER_UNSUPPORTED otherwise. */
export function registryFor(provider: MessagingProvider, kind: RegistryKind, field = 'path.id'): ProviderRegistry {
  if (!provider.registry?.kinds.has(kind)) throw providerUnsupported(provider, REGISTRY_WHAT[kind], field);
  return provider.registry;
}
