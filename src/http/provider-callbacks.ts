// Carrier-facing callback route: POST /provider-callbacks/{PROVIDER_A|PROVIDER_B}. The provider playing that slot
// verifies and parses its own callbacks (Twilio's X-Twilio-Signature, Telnyx's Ed25519 signature, RBM's
// X-Goog-Signature, the sandbox simulator's HMAC in X-Provider-Signature) into receipts, inbound messages and RCS
// tester answers and chat-app template reviews, which then take the one path every provider shares
// (src/domain/messaging/receipts.ts, inbound.ts, src/domain/bots/testers.ts, src/domain/templates/templates.ts). The slot's sandbox
// simulator is asked too when the slot's provider does not recognise the request: it carries the sandbox senders
// whatever plays the slot. Not part of the public API document: integrators never call it, carriers do, so it
// answers with carrier semantics, never an API ErrorResponse:
//   204  stored (or already stored: a retried callback is idempotent; or for a number no sender owns); or the
//        provider's expected answer (RBM's webhook verification echoes its secret)
//   400  signed, but not a callback this service understands (logged; the provider must not retry it for ever)
//   403  not signed by the provider (forged, or a missing or bad signature); 404 unknown provider; 413 too large
//   500  not stored (the database failed …): the carrier retries, and the retry does the whole work again
// Each inbound message is ingested in one transaction (inbound.ts); a batch's receipts in one transaction (receipts.ts).
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppContext } from '../app-context.ts';
import { applyTesterAnswers, type TesterAnswer } from '../domain/bots/testers.ts';
import { ingestInbound } from '../domain/messaging/inbound.ts';
import { applyReceipts, type Receipt } from '../domain/messaging/receipts.ts';
import { applyTemplateReviews, type TemplateReview } from '../domain/templates/templates.ts';
import { PROVIDER_NAMES, type CallbackParse, type CallbackRequest, type ProviderName } from '../providers/provider.ts';
import { discardUnreadBody } from './body.ts';

const MAX_CALLBACK_BYTES = 256 * 1024;

/** A carrier's answer: a status and, for a refusal, a one-line reason. */
function answer(res: Response, status: number, error?: string): void {
  if (error === undefined) res.status(status).end();
  else res.status(status).json({ error });
}

/** The slot's provider's verdict, else its sandbox simulator's when the provider did not recognise the request. */
async function parse(app: AppContext, slot: ProviderName, request: CallbackRequest): Promise<CallbackParse> {
  const provider = app.providers.slot(slot);
  const verdict = await provider.parseCallback(request);
  const sandbox = app.providers.sandbox(slot);
  if (verdict.ok || verdict.status !== 403 || sandbox === provider) return verdict;
  return sandbox.parseCallback(request);
}

export function mountProviderCallbacks(server: express.Express, app: AppContext): void {
  server.post(
    '/provider-callbacks/:provider',
    // Every content type as text: the signatures cover the exact bytes (Twilio posts forms, the others JSON).
    express.text({ type: () => true, limit: MAX_CALLBACK_BYTES }),
    async (req: Request, res: Response) => {
      try {
        const slot = String(req.params.provider);
        if (!(PROVIDER_NAMES as readonly string[]).includes(slot)) return answer(res, 404, 'unknown provider');
        const headers: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        const verdict = await parse(app, slot as ProviderName, {
          path: req.originalUrl,
          headers,
          rawBody: typeof req.body === 'string' ? req.body : '',
          contentType: req.header('content-type') ?? '',
        });
        if (!verdict.ok) {
          if (verdict.status === 400) req.log.warn({ provider: slot, reason: verdict.reason }, 'provider callback refused: malformed');
          else req.log.warn({ provider: slot, reason: verdict.reason }, 'provider callback refused: not signed by the provider');
          return answer(res, verdict.status, verdict.status === 403 ? 'bad signature' : verdict.reason);
        }
        const receipts = verdict.callbacks.filter((p): p is Receipt => p.type === 'receipt');
        if (receipts.length) await applyReceipts(app, slot as ProviderName, receipts);
        for (const p of verdict.callbacks) if (p.type === 'inbound') await ingestInbound(app, p);
        await applyTesterAnswers(
          app,
          verdict.callbacks.filter((p): p is TesterAnswer => p.type === 'tester'),
        );
        await applyTemplateReviews(
          app,
          verdict.callbacks.filter((p): p is TemplateReview => p.type === 'template'),
        );
        if (verdict.reply) return void res.status(verdict.reply.status).json(verdict.reply.body);
        answer(res, 204);
      } catch (error) {
        req.log.error({ err: error }, 'provider callback not stored; the carrier will retry');
        answer(res, 500, 'not stored; retry later');
      }
    },
    // The body reader's refusals (too large, unreadable), in the carrier's terms too.
    (error: { status?: number; statusCode?: number; message?: string }, req: Request, res: Response, _next: NextFunction) => {
      const status = error.status ?? error.statusCode;
      discardUnreadBody(req, res);
      if (typeof status === 'number' && status >= 400 && status < 500)
        return answer(res, status, status === 413 ? `body larger than ${MAX_CALLBACK_BYTES} bytes` : 'body could not be read');
      req.log.error({ err: error }, 'provider callback could not be read');
      answer(res, 500, 'not stored; retry later');
    },
  );
}
