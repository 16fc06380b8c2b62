// A batch sent one message per request, as the carriers' APIs take them (Twilio, Telnyx, RBM): `concurrency`
// requests in flight, an outcome per message in its order. Once an error halts the batch (which ones do is each
// provider's call; refused credentials always do: every later call would be refused too), the messages not yet tried
// are not tried: they answer that error (wait with the provider, or fail with it).
import { ProviderAuthFailed, ProviderError, type OutboundMessage, type ProviderRejection, type SendOutcome } from './provider.ts';

type SendEach = {
  concurrency: number;
  send: (message: OutboundMessage) => Promise<{ providerMessageId: string }>;
  /** The failure an error of `send` records (it may rethrow what is not a provider's answer). */
  failure: (error: unknown) => ProviderError | ProviderRejection;
  /** Whether this error (a rejection never does) stops the rest of the batch. */
  halts: (error: ProviderError) => boolean;
};

export async function sendEach(messages: OutboundMessage[], { concurrency, send, failure, halts }: SendEach): Promise<SendOutcome[]> {
  const outcomes: SendOutcome[] = new Array(messages.length);
  let next = 0;
  let halted: ProviderError | undefined;
  const worker = async () => {
    while (next < messages.length) {
      const i = next++;
      if (halted) {
        outcomes[i] = { ok: false, error: halted };
        continue;
      }
      try {
        outcomes[i] = { ok: true, providerMessageId: (await send(messages[i]!)).providerMessageId };
      } catch (error) {
        const e = failure(error);
        if (e instanceof ProviderError && (e instanceof ProviderAuthFailed || halts(e))) halted ??= e;
        outcomes[i] = { ok: false, error: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, messages.length) }, worker));
  return outcomes;
}
