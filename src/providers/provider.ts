// One interface for every carrier-side provider (PROVIDER_A, PROVIDER_B, and the built-in simulator that
// plays both). Sending is synchronous acceptance; what happens next (delivered, read, failed, inbound
// messages) comes back later through the provider callback route (src/http/provider-callbacks.ts).
import type { Channel } from '../domain/conversations/render.ts';

export type ProviderName = 'PROVIDER_A' | 'PROVIDER_B';

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
}

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
