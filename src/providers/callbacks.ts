// Carrier-facing callback route: POST /provider-callbacks/{PROVIDER_A|PROVIDER_B} with a receipt or inbound
// message, or a JSON array of them, authenticated by the provider's signature (HMAC-SHA256 of the raw body, hex, in
// X-Provider-Signature). Not part of the public API document: integrators never call it, carriers do.
import { timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppContext } from '../app-context.ts';
import { applyReceipts } from '../domain/messaging/receipts.ts';
import { ingestInbound } from '../domain/messaging/inbound.ts';
import type { ProviderCallback, ProviderName } from './provider.ts';
import { signCallback, simulatorSecret } from './simulator.ts';

const PROVIDERS = new Set(['PROVIDER_A', 'PROVIDER_B']);

function validSignature(expectedHex: string, given: string | undefined): boolean {
  if (!given || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(given, 'hex'));
}

export function mountProviderCallbacks(server: express.Express, app: AppContext): void {
  server.post(
    '/provider-callbacks/:provider',
    express.text({ type: 'application/json', limit: '256kb' }),
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const provider = String(req.params.provider);
        if (!PROVIDERS.has(provider)) return void res.status(404).json({ error: 'unknown provider' });
        const raw = typeof req.body === 'string' ? req.body : '';
        const expected = signCallback(await simulatorSecret(app.db), raw);
        if (!validSignature(expected, req.header('x-provider-signature'))) return void res.status(401).json({ error: 'bad signature' });
        // One callback or a batch of them (carriers batch delivery reports).
        const parsed = JSON.parse(raw) as ProviderCallback | ProviderCallback[];
        const payloads = Array.isArray(parsed) ? parsed : [parsed];
        if (payloads.some((p) => p.type !== 'receipt' && p.type !== 'inbound')) return void res.status(400).json({ error: 'unknown callback type' });
        const receipts = payloads.filter((p): p is Extract<ProviderCallback, { type: 'receipt' }> => p.type === 'receipt');
        if (receipts.length) await applyReceipts(app, provider as ProviderName, receipts);
        for (const p of payloads) if (p.type === 'inbound') await ingestInbound(app, p);
        res.status(204).end();
      } catch (error) {
        next(error);
      }
    },
  );
}
