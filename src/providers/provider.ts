// One interface for every carrier-side provider (PROVIDER_A, PROVIDER_B, and the built-in simulator that
// plays both). Sending is synchronous acceptance; what happens next (delivered, read, failed, inbound
// messages) comes back later through the provider callback route (src/http/provider-callbacks.ts).
import type { Channel } from '../domain/messaging/render.ts';

export type ProviderName = 'PROVIDER_A' | 'PROVIDER_B';

// Numbers of a provider's inventory (the simulator's: simulator-inventory.ts).
export type InventoryType = 'Local' | 'Toll-Free';
export type NumberCapability = 'SMS' | 'MMS' | 'VOICE';

export type InventoryNumber = {
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
};

/** A provider call that did not complete (network, timeout, upstream 5xx): not billable, retryable. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable = true) {
    super(message);
    this.retryable = retryable;
  }
}

/** The provider refused the message for good (invalid destination, blocked content …). */
export class ProviderRejection extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export type SendOutcome = { ok: true; providerMessageId: string } | { ok: false; error: ProviderError | ProviderRejection };

export type OutboundMessage = {
  /** Our message id: the provider keeps one message per key, so a repeated send never reaches the handset twice. */
  dedupeKey: string;
  organizationId: string;
  from: string;
  to: string;
  channel: Channel;
  body: string | null;
  title: string | null;
  mediaUrl: string | null;
};

export interface MessagingProvider {
  readonly name: ProviderName;
  /** Whether the handset behind `phone` (E.164) can receive RCS now. Throws ProviderError when unknown. */
  checkRcsCapability(phone: string): Promise<{ rcsCapable: boolean }>;
  /** Hands one message to the carrier. Throws ProviderError (retry) or ProviderRejection (final). */
  send(message: OutboundMessage): Promise<{ providerMessageId: string }>;
  /** Hands many messages over in one call (a carrier's batch API); one outcome per message, in order. */
  sendBatch(messages: OutboundMessage[]): Promise<SendOutcome[]>;
  /** Withdraws an RCS message that has not been delivered; false when it is too late. */
  revoke(providerMessageId: string): Promise<boolean>;

  // --- Voice forwarding (Sender IDs section, voice-forwarding.ts) ---
  /**
   * Applies a number's inbound-call forwarding at the voice provider and resolves once the provider confirms it.
   * Throws ProviderError (no confirmation) or ProviderRejection (refused): the provider's setting is then unchanged.
   */
  syncVoiceForwarding(change: VoiceForwardingChange): Promise<{ confirmedAt: Date }>;

  // --- Numbers (Sender IDs section: search, purchase, import, release; inventory in simulator-inventory.ts) ---
  /** Purchasable inventory of `query.provider` (assigned numbers excluded). Throws ProviderError when unreachable. */
  searchNumbers(query: NumberSearchQuery): Promise<InventoryNumber[]>;
  /**
   * Orders one inventory row for the organization; `orderKey` makes a repeated order a no-op. Throws
   * ProviderRejection (`NUMBER_UNAVAILABLE`: taken or unknown; `ORDER_REFUSED`) when nothing was reserved, and
   * NumberOrderUncertain when the outcome is not known.
   */
  orderNumber(order: NumberOrder): Promise<void>;
  /** Whether `number` is in the organization's own account at `provider` (import). Throws ProviderError when unreachable. */
  confirmNumberOwnership(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    inventoryType: InventoryType;
  }): Promise<{ owned: boolean; capabilities: NumberCapability[] }>;
  /** Returns a purchased number to the provider (an imported one stays in the customer's account). Throws ProviderError or ProviderRejection. */
  releaseNumber(request: {
    provider: ProviderName;
    organizationId: string;
    number: string;
    source: 'PURCHASED' | 'IMPORTED';
  }): Promise<void>;

  // --- Channel health and RCS testers (Sender IDs section, deprecated channels view: src/domain/sender-ids/channels.ts) ---
  /** A live check of one sender at the provider (credentials, the sender as the provider knows it). Throws ProviderError when unreachable. */
  checkSenderHealth(request: SenderHealthRequest): Promise<SenderHealthReport>;
  /** Sends an RCS tester invite from an agent to a handset; FAILED when the handset cannot be invited. Throws ProviderError when unreachable. */
  inviteRcsTester(request: {
    organizationId: string;
    senderId: string;
    phone: string;
  }): Promise<{ status: 'INVITED' | 'ACCEPTED' | 'FAILED'; acceptedAt: Date | null }>;

  // --- BEGIN Templates section (src/domain/templates/templates.ts) ---
  /** Every template registered for a chat-app business sender, with its review status. Throws ProviderError when unreachable. */
  listChatAppTemplates(request: { organizationId: string; senderId: string; senderName: string }): Promise<ProviderChatAppTemplate[]>;
  // --- END Templates section ---
}

// --- BEGIN Templates section ---
/** A chat-app template as the provider reports it (the platform's review status included). */
export type ProviderChatAppTemplate = {
  /** The provider's own id; never shown to API clients. */
  providerTemplateId: string;
  name: string;
  language: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  status: 'APPROVED' | 'PENDING' | 'REJECTED' | 'PAUSED';
  components: Array<{
    type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
    format?: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT' | 'LOCATION';
    text?: string;
    buttons?: Array<{ type: 'QUICK_REPLY' | 'URL' | 'PHONE_NUMBER' | 'COPY_CODE'; text: string; url?: string; phoneNumber?: string }>;
  }>;
  /** Example values per placeholder, `{component, index, example}`. */
  examples: Array<{ component: 'HEADER' | 'BODY' | 'BUTTONS'; index: number; example: string }>;
  approvedAt: Date | null;
  updatedAt: Date;
};
// --- END Templates section ---

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

/** One number order (purchase): `orderKey` is the purchase attempt's id. */
export type NumberOrder = { provider: ProviderName; organizationId: string; numberKey: string; number: string; orderKey: string };

/** The provider may or may not have completed a number order (timeout, lost answer): the purchase needs reconciliation. */
export class NumberOrderUncertain extends Error {
  readonly upstreamOrderState: 'UNKNOWN' | 'PENDING' | 'COMPLETED';
  constructor(message: string, upstreamOrderState: 'UNKNOWN' | 'PENDING' | 'COMPLETED' = 'UNKNOWN') {
    super(message);
    this.upstreamOrderState = upstreamOrderState;
  }
}

/** The forwarding one sender's number should have at its voice provider (`destination` kept when disabled). */
export type VoiceForwardingChange = {
  organizationId: string;
  senderId: string;
  /** The sender's own number (E.164), whose inbound calls are forwarded. */
  number: string | null;
  destination: string;
  enabled: boolean;
};

/** What a provider reports back through the callback route. */
export type ProviderCallback =
  | {
      type: 'receipt';
      providerMessageId: string;
      /** Our message id as the provider echoes it (client reference). */
      dedupeKey: string;
      status: 'delivered' | 'read' | 'failed' | 'undeliverable';
      channel: Channel;
      errorCode?: string | null;
      errorMessage?: string | null;
      at: string;
    }
  | {
      type: 'inbound';
      providerMessageId: string;
      from: string;
      to: string;
      channel: Channel;
      text: string | null;
      /** Postback data when the contact tapped a suggested reply or button. */
      postback?: string | null;
      mediaUrl?: string | null;
      at: string;
    };
