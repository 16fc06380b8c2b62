// Tracked links, served outside the API document (like landing pages and /docs): `GET {base}/l/{code}` answers 302
// to the original URL of the message's link and counts the click (src/domain/links/redirect.ts); HEAD answers the
// same without counting (link previews and scanners look first). An unknown or altered code answers 404. Never
// cached: every visit is a click. Past the client address's limit (60 a minute; the address as TRUST_PROXY says,
// src/http/client.ts): 429 RATE_LIMITED as the API answers it, with Retry-After, and no click counted.
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from '../app-context.ts';
import { followLink } from '../domain/links/redirect.ts';
import { clientOf } from './client.ts';

export function mountTrackedLinks(server: express.Express, app: AppContext): void {
  server.get('/l/:code', async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' });
      const url = await followLink(app, String(req.params.code), req.method === 'GET', clientOf(req).ip);
      if (!url) return void res.status(404).type('text/plain').send('Not found');
      res.redirect(302, url);
    } catch (error) {
      next(error);
    }
  });
}
