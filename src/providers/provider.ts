// One interface for every carrier-side provider: the built-in carrier simulator and the adapters on Twilio, Telnyx
// and Google's RCS Business Messaging (RBM). The domain imports this module and nothing else under src/providers
// (an ESLint boundary, eslint.config.js); src/runtime.ts and the test server pick the concrete providers
// (src/providers/assemble.ts) and hand them over as a ProviderDirectory.
//
// Sending is synchronous acceptance; what happens next (delivered, read, failed, inbound messages) comes back later
// through the provider callback route (src/http/provider-callbacks.ts), where the provider playing that slot
// verifies and parses its own callbacks into ProviderCallback.
//
// What a provider supports is what it implements: the operations below marked optional are absent on a provider
// that cannot do them (Twilio has no registry, RBM sends RCS only …), and the domain answers 422
// PROVIDER_UNSUPPORTED for them instead of pretending (src/domain/providers.ts).

export type ProviderName = 'PROVIDER_A' | 'PROVIDER_B';
export const PROVIDER_NAMES: readonly ProviderName[] = ['PROVIDER_A', 'PROVIDER_B'];

/** Which implementation plays a slot. */
type ProviderKind = 'simulator' | 'twilio' | 'telnyx' | 'rbm';

/** A message channel as the document names it (components.schemas.Channel). */
export type Channel = 'RCS' | 'SMS' | 'MMS' | 'CHATAPP';

/**
 * A provider call that did not complete: not billable, retryable. `outage` marks the provider's own failure (5xx,
 * timeout, unreachable), which counts towards its circuit breaker; a rate limit (ProviderRateLimited) does not.
 */
export class ProviderError extends Error {
  readonly retryable: boolean;
  readonly outage: boolean;
  constructor(message: string, opts: { retryable?: boolean; outage?: boolean } = {}) {
    super(message);
    this.retryable = opts.retryable ?? true;
    this.outage = opts.outage ?? true;
  }
}

/**
 * The provider refused this service's credentials (401/403, or Google issued no token for the service account): a
 * configuration error, not an outage. Nothing was sent; retrying cannot help until an operator fixes the credentials,
 * so a message fails at once with `code` (its text keeps the provider's reason) and the slot is reported on /health
 * (`credentialsRefused`) instead of opening the circuit (src/providers/provider-answer.ts decides, for every adapter).
 */
export class ProviderAuthFailed extends ProviderError {
  readonly code = 'PROVIDER_AUTH_FAILED';
  constructor(message: string) {
    super(message, { retryable: false, outage: false });
  }
}

/** The provider answered 429: nothing was sent; the provider's dispatch waits `retryAfterSeconds`. */
export class ProviderRateLimited extends ProviderError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryable: true, outage: false });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The provider refused the message (or the order …) for good: invalid destination, blocked content … */
export class ProviderRejection extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** The provider may or may not have completed a number order (timeout, lost answer): the purchase needs reconciliation. */
export class NumberOrderUncertain extends Error {
  readonly upstreamOrderState: 'UNKNOWN' | 'PENDING' | 'COMPLETED';
  constructor(message: string, upstreamOrderState: 'UNKNOWN' | 'PENDING' | 'COMPLETED' = 'UNKNOWN') {
    super(message);
    this.upstreamOrderState = upstreamOrderState;
  }
}

export type SendOutcome = { ok: true; providerMessageId: string } | { ok: false; error: ProviderError | ProviderRejection };

/** The sender a message goes out from, as the provider needs it. */
type OutboundSender = {
  id: string;
  type: string;
  name: string;
  /** E.164 of a number sender, else null. */
  phoneNumber: string | null;
  /** Short code, alphanumeric name or RCS agent id of a sender without a number. */
  address: string | null;
};

export type OutboundMessage = {
  /**
   * Our message id (with `:fallback` for the SMS/MMS resend of a failed RCS message): the provider idempotency key,
   * sent unchanged on every attempt, so a repeated send never reaches the handset twice.
   */
  dedupeKey: string;
  organizationId: string;
  sender: OutboundSender;
  /** The sender's address as the handset sees it: its number, else its name. */
  from: string;
  to: string;
  channel: Channel;
  body: string | null;
  title: string | null;
  mediaUrl: string | null;
  /** 1 for the first hand-over; more when a previous attempt's outcome is unknown (timeout, 5xx). */
  attempt: number;
  /** When the message was accepted (a provider without idempotency keys looks for an earlier attempt since then). */
  acceptedAt: Date;
  /**
   * RCS only: whether the provider may carry the message as SMS/MMS itself when the handset cannot take RCS (a
   * Twilio Messaging Service does); a provider that cannot fall back ignores it.
   */
  fallbackAllowed: boolean;
};

/** A message the provider accepted, as needed to withdraw it. */
export type SentMessageRef = { providerMessageId: string; dedupeKey: string; to: string };

// --- Numbers -------------------------------------------------------------------------------------------------

export type InventoryType = 'Local' | 'Toll-Free';
export type NumberCapability = 'SMS' | 'MMS' | 'VOICE';

export type InventoryNumber = {
  /** Opaque key of this exact row at its provider (sent back to purchase it). */
  numberKey: string;
  number: string;
  inventoryType: InventoryType;
  provider: ProviderName;
  countryCode: 'US' | 'CA';
  region: string | null;
  locality: string | null;
  capabilities: NumberCapability[];
  /** USD per month, a decimal string; null when the provider quotes none. */
  monthlyCost: string | null;
  purchasable: boolean;
};

export type NumberSearchQuery = {
  provider: ProviderName;
  inventoryType: InventoryType;
  countryCode: 'US' | 'CA';
  /** Leading digits of the national number. */
  leadingNumber?: string | undefined;
  /** Local only. */
  region?: string | undefined;
  capabilities?: readonly NumberCapability[] | undefined;
  /** Rows wanted (a provider may answer fewer). */
  limit: number;
};

/** One number order (purchase): `orderKey` is the purchase attempt's id. */
export type NumberOrder = { provider: ProviderName; organizationId: string; numberKey: string; number: string; orderKey: string };

// --- Registry (The Campaign Registry for 10DLC, the carriers' reviews) ------------------------------------------

/** What is reviewed: a 10DLC brand or campaign, a toll-free verification, an RCS agent launch, a sender registration. */
export type RegistryKind = 'BRAND' | 'CAMPAIGN' | 'TOLL_FREE_VERIFICATION' | 'RCS_AGENT_LAUNCH' | 'SENDER_REGISTRATION';

export type RegistrySubmission = {
  kind: RegistryKind;
  organizationId: string;
  senderId: string;
  /** The registration as the API client sent it (brand, campaign or submission body). */
  details: Record<string, unknown>;
  /** What the reviewer reads first: a brand's display name, a campaign's description, a sender's name. */
  subject: string;
  /** A campaign's brand as the registry knows it (its reference from the brand submission). */
  brandReference?: string | null;
  /** The sender's own number (E.164), which a registry attaches to the campaign (Telnyx); null without one. */
  senderNumber?: string | null;
};

/** The reviewer's decision; `pending` while the review goes on. */
export type RegistryDecision =
  | { outcome: 'pending' }
  | {
      outcome: 'approved';
      registryId: string;
      identityStatus?: string;
      /** A brand's external vetting score (0–100) when vetting was requested (`requestVetting`). */
      vettingScore?: number;
      /** When the registration lapses unless renewed; absent when it renews automatically. */
      expiresAt?: Date;
    }
  | { outcome: 'rejected'; reasons: string[] };

/** What the registry asks of a review: the registration, its reference there and the subject it reads first. */
export type RegistryReviewRequest = {
  kind: RegistryKind;
  reference: string | null;
  subject: string;
  /** The registration as the API client last sent it (a resubmission carries the requested changes). */
  details: Record<string, unknown>;
};

/**
 * A decided (approved) registration's standing at the registry, asked once one step after approval and at every
 * refresh-status: still `active`, `suspended` by the registry or a carrier (with reasons), or `expired` (a
 * campaign not renewed). `suspended` tells whether this service holds it suspended now (a lifted suspension
 * answers `active`).
 */
export type RegistryStanding = { standing: 'active' } | { standing: 'suspended'; reasons: string[] } | { standing: 'expired' };

export interface ProviderRegistry {
  /** The kinds this provider's registry reviews. */
  readonly kinds: ReadonlySet<RegistryKind>;
  /**
   * Whether a brand registration's `requestVetting` orders vetting from this registry (its fee is then charged at
   * cost); false where vetting is ordered elsewhere (Telnyx's portal), so nothing is charged here for it.
   */
  readonly vetsBrands: boolean;
  /** Milliseconds between two looks at a review in progress (the review jobs, src/jobs/submissions.ts). */
  readonly stepMs: number;
  /** Hands a registration to the registry: its reference there (null when it keeps none). Throws ProviderError when unreachable. */
  submit(submission: RegistrySubmission): Promise<{ reference: string | null }>;
  /** The review's state. Throws ProviderError when unreachable. */
  review(request: RegistryReviewRequest): Promise<RegistryDecision>;
  /** The standing of an approved registration (see RegistryStanding). Throws ProviderError when unreachable. */
  standing(request: RegistryReviewRequest & { suspended: boolean }): Promise<RegistryStanding>;
  /** A status read of the registry (refresh-status): throws ProviderError when it cannot be reached. */
  ping(request: { subject: string }): Promise<void>;
}

// --- Senders: voice forwarding, health, RCS testers, chat-app templates ------------------------------------------

/** The forwarding one sender's number should have at its voice provider (`destination` kept when disabled). */
export type VoiceForwardingChange = {
  organizationId: string;
  senderId: string;
  /** The sender's own number (E.164), whose inbound calls are forwarded. */
  number: string | null;
  destination: string;
  enabled: boolean;
};

/** What the provider is asked to check (channel health). */
export type SenderHealthRequest = {
  organizationId: string;
  senderId: string;
  name: string;
  address: string | null;
  type: string;
  channel: Channel;
};

/** The provider's own checks: `ok` false on any is a failure; `degraded` marks a usable sender with warnings. */
export type SenderHealthReport = {
  latencyMs: number;
  degraded: boolean;
  checks: Array<{ name: string; ok: boolean; message: string | null }>;
};

export type RcsTesterInvite = { status: 'INVITED' | 'ACCEPTED' | 'FAILED'; acceptedAt: Date | null };

/**
 * A chat-app template submitted for the platform's review (the document's RegisterChatAppTemplateRequest). The
 * review's answer comes back later through the callback route as a `template` callback naming `reference`.
 */
export type ChatAppTemplateSubmission = {
  organizationId: string;
  senderId: string;
  senderName: string;
  /** Our template id: the provider echoes it in its review callback. */
  reference: string;
  name: string;
  language: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  components: Array<{
    type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
    format?: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT' | 'LOCATION';
    text?: string;
    buttons?: Array<{ type: 'QUICK_REPLY' | 'URL' | 'PHONE_NUMBER' | 'COPY_CODE'; text: string; url?: string; phoneNumber?: string }>;
  }>;
  /** Example values per placeholder, `{component, index, example}`. */
  examples: Array<{ component: 'HEADER' | 'BODY' | 'BUTTONS'; index: number; example: string }>;
};

// --- Callbacks -------------------------------------------------------------------------------------------------

/** What a provider reports back through the callback route. */
export type ProviderCallback =
  | {
      type: 'receipt';
      providerMessageId: string;
      /** Our message id as the provider echoes it (client reference). */
      dedupeKey: string;
      status: 'delivered' | 'read' | 'failed' | 'undeliverable';
      /** The channel that carried (or failed to carry) the message. */
      channel: Channel;
      /**
       * The provider carried an RCS message as SMS/MMS itself (a Twilio Messaging Service's fallback): `channel` is
       * the one it used.
       */
      providerFallback?: boolean;
      errorCode?: string | null;
      errorMessage?: string | null;
      at: string;
    }
  | {
      type: 'inbound';
      providerMessageId: string;
      from: string;
      /** The sender's number, or the RCS agent id the handset wrote to. */
      to: string;
      channel: Channel;
      text: string | null;
      /** Postback data when the contact tapped a suggested reply or button. */
      postback?: string | null;
      mediaUrl?: string | null;
      at: string;
    }
  | {
      /**
       * A handset answered an RCS tester invite (inviteRcsTester answered INVITED): the tester accepted or declined
       * it on the device. `senderId` is the sender the invite request named, echoed as the invite's client reference.
       */
      type: 'tester';
      senderId: string;
      phone: string;
      status: 'ACCEPTED' | 'DECLINED';
      at: string;
    }
  | {
      /**
       * The chat-app platform reviewed a submitted template (submitChatAppTemplate): approved, rejected with a reason,
       * or (an approved one) paused. `reference` is our template id, echoed.
       */
      type: 'template';
      reference: string;
      status: 'APPROVED' | 'REJECTED' | 'PAUSED';
      reason: string | null;
      at: string;
    };

/**
 * A callback request as it reached the route: its path and query as received (`/provider-callbacks/PROVIDER_A?…`;
 * a provider that signs the URL prefixes CALLBACK_BASE_URL, the address it was told to post to), headers (lower
 * case), the raw body and its content type.
 */
export type CallbackRequest = { path: string; headers: Record<string, string | undefined>; rawBody: string; contentType: string };

/**
 * A callback's verdict: its callbacks; `refused` (403) when it is not the provider's (bad or missing signature);
 * `malformed` (400, not retried by the provider) when signed but not a callback this service understands; `reply`
 * when the provider expects an answer body (RBM's webhook verification) instead of 204.
 */
export type CallbackParse =
  { ok: true; callbacks: ProviderCallback[]; reply?: { status: number; body: unknown } } | { ok: false; status: 400 | 403; reason: string };

// --- The provider ----------------------------------------------------------------------------------------------

export interface MessagingProvider {
  /** The slot it plays. */
  readonly name: ProviderName;
  readonly kind: ProviderKind;
  /** The channels `send` carries. */
  readonly channels: ReadonlySet<Channel>;

  /** Hands one message to the provider. Throws ProviderError (retry) or ProviderRejection (final). */
  send(message: OutboundMessage): Promise<{ providerMessageId: string }>;
  /** Hands many messages over (a carrier's batch API, or one call each); one outcome per message, in order. */
  sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]>;

  /** Whether the handset behind `phone` (E.164) can receive RCS now. Throws ProviderError when unknown. */
  checkRcsCapability?(phone: string): Promise<{ rcsCapable: boolean }>;
  /** The same for many handsets in one call (RBM's users:batchGet); a phone left out is unknown. */
  checkRcsCapabilities?(phones: string[]): Promise<Map<string, boolean>>;
  /** Withdraws an RCS message that has not been delivered; false when it is too late. */
  revoke?(message: SentMessageRef): Promise<boolean>;

  /** Purchasable inventory of `query.provider` (assigned numbers excluded). Throws ProviderError when unreachable. */
  searchNumbers?(query: NumberSearchQuery): Promise<InventoryNumber[]>;
  /**
   * Orders one inventory row for the organization; `orderKey` makes a repeated order a no-op where the provider
   * keeps order references. Throws ProviderRejection (`NUMBER_UNAVAILABLE`: taken or unknown; `ORDER_REFUSED`)
   * when nothing was reserved, and NumberOrderUncertain when the outcome is not known.
   */
  orderNumber?(order: NumberOrder): Promise<void>;
  /** Whether `number` is in the account at `provider` (import). Throws ProviderError when unreachable. */
  confirmNumberOwnership?(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    inventoryType: InventoryType;
  }): Promise<{ owned: boolean; capabilities: NumberCapability[] }>;
  /** Returns a purchased number to the provider (an imported one stays in the account). Throws ProviderError or ProviderRejection. */
  releaseNumber?(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    source: 'PURCHASED' | 'IMPORTED';
  }): Promise<void>;

  /** The registry this provider submits to (10DLC, toll-free, RCS launch, sender registration). */
  readonly registry?: ProviderRegistry;

  /**
   * Applies a number's inbound-call forwarding at the voice provider and resolves once the provider confirms it.
   * Throws ProviderError (no confirmation) or ProviderRejection (refused): the provider's setting is then unchanged.
   */
  syncVoiceForwarding?(change: VoiceForwardingChange): Promise<{ confirmedAt: Date }>;
  /** A live check of one sender at the provider. Throws ProviderError when unreachable. */
  checkSenderHealth?(request: SenderHealthRequest): Promise<SenderHealthReport>;
  /** Sends an RCS tester invite from an agent to a handset; FAILED when it cannot be invited. Throws ProviderError when unreachable. */
  inviteRcsTester?(request: { organizationId: string; senderId: string; agentId: string | null; phone: string }): Promise<RcsTesterInvite>;
  /**
   * Submits a chat-app template for the platform's review: the provider's id of it. The answer comes back as a
   * `template` callback. Throws ProviderError when unreachable, ProviderRejection when refused outright.
   */
  submitChatAppTemplate?(submission: ChatAppTemplateSubmission): Promise<{ providerTemplateId: string }>;

  /** Verifies and parses a callback posted to this provider's route. */
  parseCallback(request: CallbackRequest): Promise<CallbackParse>;
}

/** The operations a provider may lack, by name. */
export type OptionalOperation =
  | 'checkRcsCapability'
  | 'revoke'
  | 'searchNumbers'
  | 'orderNumber'
  | 'confirmNumberOwnership'
  | 'releaseNumber'
  | 'syncVoiceForwarding'
  | 'checkSenderHealth'
  | 'inviteRcsTester'
  | 'submitChatAppTemplate';

/** A sender as the directory needs it to find its provider. */
export type SenderOfProvider = { provider: string | null; is_sandbox: boolean };

/** The providers of this process: one per slot, and the carrier simulator that serves the sandbox senders. */
export interface ProviderDirectory {
  /** The provider playing a slot. */
  slot(name: ProviderName): MessagingProvider;
  /**
   * The provider that carries a sender's traffic: the carrier simulator for a sandbox sender (its +1500 number is
   * no carrier's), else the one playing its slot (PROVIDER_A while a draft has none).
   */
  forSender(sender: SenderOfProvider): MessagingProvider;
  /** The simulator playing a slot: it carries the sandbox senders whatever plays the slot. */
  sandbox(name: ProviderName): MessagingProvider;
  /** The first slot's provider that looks a handset's RCS capability up without a sender, if any. */
  rcsLookup(): MessagingProvider | undefined;
  /** Dispatch state of each slot's provider (rate limit, circuit breaker), for /health. */
  readonly guard: ProviderGuard;
}

/** Per-provider dispatch state: a 429's Retry-After and a circuit breaker over outages (src/providers/guard.ts). */
export interface ProviderGuard {
  /** When `provider` may be called again (a rate limit or an open circuit), or null when it may be now. */
  blockedUntil(provider: MessagingProvider, now?: Date): Date | null;
  /**
   * Records a batch's outcome: success, an outage, refused credentials, or a rate limit (`reason`: the provider's
   * answer, kept for unavailable() and logged once when credentials are refused).
   */
  record(
    provider: MessagingProvider,
    outcome: 'ok' | 'outage' | 'auth_failed' | { retryAfterSeconds: number },
    now?: Date,
    reason?: string,
  ): void;
  /**
   * Why `provider` cannot take messages, while it cannot (outages in a row, an open circuit, a 429's wait): its
   * last answer; null when its last call succeeded.
   */
  unavailable(provider: MessagingProvider, now?: Date): string | null;
  /** Each slot's state, for /health and /metrics. */
  report(now?: Date): ProviderHealth[];
}

export type ProviderHealth = {
  name: ProviderName;
  /** closed: calls go through; open: an outage, calls wait; half_open: one trial call decides. */
  circuit: 'closed' | 'open' | 'half_open';
  /** Consecutive outage failures. */
  consecutiveFailures: number;
  /** Until when dispatch waits (an open circuit's next trial, or a 429's Retry-After); null when it does not. */
  waitUntil: Date | null;
  /** Calls refused with 429 since the process started. */
  rateLimited: number;
  /** Times the circuit opened since the process started. */
  circuitOpenings: number;
  /** Times an opening's wait ended and a trial call was let through (half open) since the process started. */
  circuitHalfOpens: number;
  /** The provider's last answer to a send refused this service's credentials (401/403); false once a send succeeds. */
  credentialsRefused: boolean;
};
