// Carrier-facing callback route: POST /provider-callbacks/{PROVIDER_A|PROVIDER_B} with a receipt or an inbound
// message, or a JSON array of them, authenticated by the provider's signature (HMAC-SHA256 of the raw body, hex,
// in X-Provider-Signature). Not part of the public API document: integrators never call it, carriers do, so it
// answers with carrier semantics, never an API ErrorResponse:
//   204  stored (or already stored: a retried callback is idempotent; or for a number no sender owns)
//   400  a body that is not a callback (the carrier must not retry it); 401 bad signature; 404 unknown provider;
//   413  too large
//   500  not stored (the database failed …): the carrier retries, and the retry does the whole work again
// Each inbound message is ingested in one transaction (src/domain/messaging/inbound.ts); a batch's receipts
// in one transaction (receipts.ts).
import { timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppContext } from '../app-context.ts';
import { ingestInbound } from '../domain/messaging/inbound.ts';
import { applyReceipts, type Receipt } from '../domain/messaging/receipts.ts';
import type { ProviderCallback, ProviderName } from '../providers/provider.ts';
import { signCallback, simulatorSecret } from '../providers/simulator.ts';
import { discardUnreadBody } from './body.ts';

const PROVIDERS: ReadonlySet<string> = new Set<ProviderName>(['PROVIDER_A', 'PROVIDER_B']);
const MAX_CALLBACK_BYTES = 256 * 1024;

function validSignature(expectedHex: string, given: string | undefined): boolean {
  if (!given || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(given, 'hex'));
}

/** A carrier's answer: a status and, for a refusal, a one-line reason. */
function answer(res: Response, status: number, error?: string): void {
  if (error === undefined) res.status(status).end();
  else res.status(status).json({ error });
}

const isCallback = (p: unknown): p is ProviderCallback =>
  typeof p === 'object' && p !== null && ((p as { type?: unknown }).type === 'receipt' || (p as { type?: unknown }).type === 'inbound');

/** The callbacks of a body (one or a batch: carriers batch delivery reports), or undefined when it holds none. */
function callbacksOf(raw: string): ProviderCallback[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const payloads: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return payloads.every(isCallback) ? payloads : undefined;
}

export function mountProviderCallbacks(server: express.Express, app: AppContext): void {
  server.post(
    '/provider-callbacks/:provider',
    express.text({ type: 'application/json', limit: MAX_CALLBACK_BYTES }),
    async (req: Request, res: Response) => {
      try {
        const provider = String(req.params.provider);
        if (!PROVIDERS.has(provider)) return answer(res, 404, 'unknown provider');
        const raw = typeof req.body === 'string' ? req.body : '';
        const expected = signCallback(await simulatorSecret(app.db), raw);
        if (!validSignature(expected, req.header('x-provider-signature'))) return answer(res, 401, 'bad signature');
        const payloads = callbacksOf(raw);
        if (!payloads) return answer(res, 400, 'not a callback: expected a receipt or inbound message, or an array of them');
        const receipts = payloads.filter((p): p is Receipt => p.type === 'receipt');
        if (receipts.length) await applyReceipts(app, provider as ProviderName, receipts);
        for (const p of payloads) if (p.type === 'inbound') await ingestInbound(app, p);
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
