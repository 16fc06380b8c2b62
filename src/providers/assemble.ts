// Picks the concrete providers of a process (src/runtime.ts and the test server call this; the domain never
// does): for each slot, the real provider configured for it (PROVIDER_A / PROVIDER_B, src/config.ts), or the carrier
// simulator. A simulator per slot is always built: it carries the sandbox senders (their +1500 numbers are no
// carrier's) whatever plays the slot, and posts its callbacks to the same route.
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { CallbackEndpoint } from './endpoint.ts';
import { DispatchGuard } from './guard.ts';
import { PROVIDER_NAMES, type MessagingProvider, type ProviderDirectory, type ProviderName, type SenderOfProvider } from './provider.ts';
import type { ProvidersConfig } from './config.ts';
import { CarrierSimulator } from './simulator.ts';

export class Providers implements ProviderDirectory {
  readonly endpoint: CallbackEndpoint;
  readonly guard: DispatchGuard;
  private readonly simulators: Record<ProviderName, CarrierSimulator>;
  private readonly slots: Record<ProviderName, MessagingProvider>;

  constructor(opts: {
    endpoint: CallbackEndpoint;
    simulators: Record<ProviderName, CarrierSimulator>;
    real: Partial<Record<ProviderName, MessagingProvider>>;
    log?: Logger;
  }) {
    this.endpoint = opts.endpoint;
    this.simulators = opts.simulators;
    this.slots = {
      PROVIDER_A: opts.real.PROVIDER_A ?? opts.simulators.PROVIDER_A,
      PROVIDER_B: opts.real.PROVIDER_B ?? opts.simulators.PROVIDER_B,
    };
    this.guard = new DispatchGuard(opts.log);
  }

  slot(name: ProviderName): MessagingProvider {
    return this.slots[name];
  }

  sandbox(name: ProviderName): CarrierSimulator {
    return this.simulators[name];
  }

  /** The simulator that plays PROVIDER_A's sandbox: the one admin tools inject inbound messages through. */
  get simulator(): CarrierSimulator {
    return this.simulators.PROVIDER_A;
  }

  forSender(sender: SenderOfProvider): MessagingProvider {
    const name: ProviderName = sender.provider === 'PROVIDER_B' ? 'PROVIDER_B' : 'PROVIDER_A';
    return sender.is_sandbox ? this.simulators[name] : this.slots[name];
  }

  rcsLookup(): MessagingProvider | undefined {
    return PROVIDER_NAMES.map((n) => this.slots[n]).find((p) => p.checkRcsCapability !== undefined);
  }
}

/** The simulators alone: what a process gets with no carrier configured. */
export function simulatorProviders(opts: { db: Db; queue: JobQueue | undefined; endpoint: CallbackEndpoint; log?: Logger }): Providers {
  return assembleProviders({ ...opts, real: {} });
}

export function assembleProviders(opts: {
  db: Db;
  queue: JobQueue | undefined;
  endpoint: CallbackEndpoint;
  real: Partial<Record<ProviderName, MessagingProvider>>;
  log?: Logger;
}): Providers {
  const simulator = (name: ProviderName) => new CarrierSimulator({ name, db: opts.db, queue: opts.queue, endpoint: opts.endpoint });
  return new Providers({
    endpoint: opts.endpoint,
    simulators: { PROVIDER_A: simulator('PROVIDER_A'), PROVIDER_B: simulator('PROVIDER_B') },
    real: opts.real,
    ...(opts.log ? { log: opts.log } : {}),
  });
}

/**
 * The real providers the configuration names (src/providers/config.ts); a simulator slot is left to the simulators.
 * Each adapter (and its SDK: telnyx, twilio and google-auth-library take about 275 ms to load) is imported only when
 * configured, so a process on the simulators does not pay for them at start-up (bench part a).
 */
export async function configuredProviders(
  config: ProvidersConfig,
  endpoint: CallbackEndpoint,
  media: { ownBaseUrl: string; allowPrivate: boolean },
): Promise<Partial<Record<ProviderName, MessagingProvider>>> {
  const real: Partial<Record<ProviderName, MessagingProvider>> = {};
  for (const name of PROVIDER_NAMES) {
    const slot = config[name];
    if (slot.kind === 'twilio') real[name] = new (await import('./twilio/adapter.ts')).TwilioProvider({ name, endpoint, settings: slot });
    if (slot.kind === 'telnyx') real[name] = new (await import('./telnyx/adapter.ts')).TelnyxProvider({ name, endpoint, settings: slot });
    if (slot.kind === 'rbm') real[name] = new (await import('./rbm/adapter.ts')).RbmProvider({ name, settings: { ...slot, media } });
  }
  return real;
}
