// One interface for every carrier-side provider (PROVIDER_A, PROVIDER_B, and the built-in simulator that
// plays both). The message-lifecycle work adds sending, receipts and inbound messages to it.
export type ProviderName = 'PROVIDER_A' | 'PROVIDER_B';

/** A provider call that did not complete (network, timeout, upstream 5xx): not billable, retryable. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable = true) {
    super(message);
    this.retryable = retryable;
  }
}

export interface MessagingProvider {
  readonly name: ProviderName;
  /** Whether the handset behind `phone` (E.164) can receive RCS now. Throws ProviderError when unknown. */
  checkRcsCapability(phone: string): Promise<{ rcsCapable: boolean }>;
}
