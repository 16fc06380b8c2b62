// Which provider plays each slot, and its credentials, from the environment (validated once at start by
// src/config.ts): PROVIDER_A / PROVIDER_B = simulator (the default) | twilio | telnyx | rbm, with the provider's own variables.
// Nothing configured: the carrier simulator plays both slots and `npm start` needs nothing. A real provider with
// incomplete credentials stops the process at start with one line naming what is missing (exit code 2). The
// credentials never reach a log: Config is never logged whole, and the logger redacts these keys wherever they
// appear (src/app.ts, PROVIDER_SECRET_KEYS).
import { readFileSync } from 'node:fs';

type ProviderSlotConfig =
  | { kind: 'simulator' }
  | {
      kind: 'twilio';
      accountSid: string;
      authToken: string;
      /** MG…: required for RCS and for senders without a number. */
      messagingServiceSid: string | undefined;
      /** Replaces https://api.twilio.com (a proxy, a contract fake). */
      apiBaseUrl: string | undefined;
    }
  | {
      kind: 'telnyx';
      apiKey: string;
      /** Base64 Ed25519 public key verifying the webhooks. */
      publicKey: string;
      messagingProfileId: string | undefined;
      /** Replaces https://api.telnyx.com/v2. */
      apiBaseUrl: string | undefined;
    }
  | {
      kind: 'rbm';
      /** From the service account's JSON key (RBM_SERVICE_ACCOUNT_KEY_FILE). */
      clientEmail: string;
      privateKey: string;
      webhookClientToken: string;
      apiBaseUrl: string | undefined;
      tokenUrl: string | undefined;
    };

export type ProvidersConfig = { PROVIDER_A: ProviderSlotConfig; PROVIDER_B: ProviderSlotConfig };

/** Config keys holding provider credentials, for the logger's redaction paths. */
export const PROVIDER_SECRET_KEYS = ['authToken', 'apiKey', 'privateKey', 'webhookClientToken'] as const;

const KINDS = ['simulator', 'twilio', 'telnyx', 'rbm'] as const;

/** Thrown with the one line the operator reads (src/config.ts turns it into a ConfigError). */
export class ProviderConfigError extends Error {}

function required(env: NodeJS.ProcessEnv, slot: string, kind: string, names: string[]): void {
  const missing = names.filter((n) => !env[n]);
  if (missing.length) throw new ProviderConfigError(`${slot}=${kind} is missing ${missing.join(', ')}`);
}

function slotConfig(env: NodeJS.ProcessEnv, slot: 'PROVIDER_A' | 'PROVIDER_B'): ProviderSlotConfig {
  const kind = (env[slot] || 'simulator').toLowerCase();
  if (!(KINDS as readonly string[]).includes(kind))
    throw new ProviderConfigError(`${slot} must be one of ${KINDS.join(', ')} (got "${env[slot]}")`);
  if (kind === 'simulator') return { kind };
  if (kind === 'rbm') {
    required(env, slot, kind, ['RBM_SERVICE_ACCOUNT_KEY_FILE', 'RBM_WEBHOOK_CLIENT_TOKEN']);
    let key: { client_email?: unknown; private_key?: unknown };
    try {
      key = JSON.parse(readFileSync(env.RBM_SERVICE_ACCOUNT_KEY_FILE!, 'utf8'));
    } catch (error) {
      throw new ProviderConfigError(
        `RBM_SERVICE_ACCOUNT_KEY_FILE cannot be read as a service account JSON key (${(error as Error).message})`,
      );
    }
    if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
      throw new ProviderConfigError(
        'RBM_SERVICE_ACCOUNT_KEY_FILE has no client_email and private_key (download a JSON key of the service account)',
      );
    }
    return {
      kind,
      clientEmail: key.client_email,
      privateKey: key.private_key,
      webhookClientToken: env.RBM_WEBHOOK_CLIENT_TOKEN!,
      apiBaseUrl: env.RBM_API_BASE_URL || undefined,
      tokenUrl: env.RBM_TOKEN_URL || undefined,
    };
  }
  if (kind === 'telnyx') {
    required(env, slot, kind, ['TELNYX_API_KEY', 'TELNYX_PUBLIC_KEY']);
    if (Buffer.from(env.TELNYX_PUBLIC_KEY!, 'base64').length !== 32 || !/^[A-Za-z0-9+/]{43}=$/.test(env.TELNYX_PUBLIC_KEY!)) {
      throw new ProviderConfigError('TELNYX_PUBLIC_KEY must be the base64 Ed25519 public key from Mission Control (32 bytes)');
    }
    const base = env.TELNYX_API_BASE_URL || undefined;
    if (base && !/^https?:\/\/\S+$/.test(base)) throw new ProviderConfigError(`TELNYX_API_BASE_URL must be an http(s) URL (got "${base}")`);
    return {
      kind,
      apiKey: env.TELNYX_API_KEY!,
      publicKey: env.TELNYX_PUBLIC_KEY!,
      messagingProfileId: env.TELNYX_MESSAGING_PROFILE_ID || undefined,
      apiBaseUrl: base,
    };
  }
  required(env, slot, kind, ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN']);
  if (!/^AC[0-9a-fA-F]{32}$/.test(env.TWILIO_ACCOUNT_SID!))
    throw new ProviderConfigError('TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits');
  const service = env.TWILIO_MESSAGING_SERVICE_SID || undefined;
  if (service && !/^MG[0-9a-fA-F]{32}$/.test(service))
    throw new ProviderConfigError('TWILIO_MESSAGING_SERVICE_SID must be MG followed by 32 hex digits');
  const base = env.TWILIO_API_BASE_URL || undefined;
  if (base && !/^https?:\/\/[^/\s]+\/?$/.test(base))
    throw new ProviderConfigError(`TWILIO_API_BASE_URL must be an http(s) origin (got "${base}")`);
  return {
    kind: 'twilio',
    accountSid: env.TWILIO_ACCOUNT_SID!,
    authToken: env.TWILIO_AUTH_TOKEN!,
    messagingServiceSid: service,
    apiBaseUrl: base,
  };
}

export function providersConfig(env: NodeJS.ProcessEnv, callbackBaseUrl: string | undefined): ProvidersConfig {
  const config = { PROVIDER_A: slotConfig(env, 'PROVIDER_A'), PROVIDER_B: slotConfig(env, 'PROVIDER_B') };
  const real = (['PROVIDER_A', 'PROVIDER_B'] as const).filter((s) => config[s].kind !== 'simulator');
  // One set of credentials per provider: the same account in both slots would double its limits' accounting.
  if (real.length === 2 && config.PROVIDER_A.kind === config.PROVIDER_B.kind) {
    throw new ProviderConfigError(`PROVIDER_A and PROVIDER_B cannot both be ${config.PROVIDER_A.kind}`);
  }
  // A carrier posts to the public address it was given (Twilio signs it): the listening address is no such thing.
  if (real.length && !callbackBaseUrl) {
    throw new ProviderConfigError(
      `${real[0]}=${config[real[0]!].kind} needs CALLBACK_BASE_URL (the public https:// address the provider posts callbacks to)`,
    );
  }
  return config;
}
