// GET /openapi.json serves the bundled contract; /docs renders it with Redoc shipped in node_modules (no CDN).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type express from 'express';
import type { AppContext } from '../app-context.ts';

const require = createRequire(import.meta.url);
const redocBundle = join(dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Messaging Service API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/docs/redoc.standalone.js"></script></body></html>`;

export function mountDocs(server: express.Express, app: AppContext): void {
  // Serialised on the first request for it: start-up does not spend the ~1 MB's stringify on it (issue 38).
  let json: string | undefined;
  server.get('/openapi.json', (_req, res) => {
    res.type('application/json').send((json ??= JSON.stringify(app.document)));
  });
  server.get('/docs', (_req, res) => {
    res.type('html').send(page);
  });
  // The bundle's only remote asset is the footer logo; an empty inline image keeps the page free of any CDN.
  let bundle: string | undefined;
  server.get('/docs/redoc.standalone.js', (_req, res) => {
    bundle ??= readFileSync(redocBundle, 'utf8').replaceAll(
      'https://cdn.redoc.ly/redoc/logo-mini.svg',
      "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E",
    );
    res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(bundle);
  });
  server.get('/', (_req, res) => {
    res.redirect(302, '/docs');
  });
}
