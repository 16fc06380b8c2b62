// Public landing pages, served outside the API document (like /docs): the address a PUBLISHED page's `url` names.
//   GET  /p/{organizationId}/{slug}        the page: server-rendered HTML
//   POST /p/{organizationId}/{slug}        its form (application/x-www-form-urlencoded): 303 to the page's
//                                          redirectUrl, or the success message; 400 with the form again on errors
//   GET  /p/{organizationId}/{slug}/hero   the page's hero image (the asset's original bytes)
//   GET  /p/-/templates/{name}.png         a catalogue template's preview image (previewUrl)
// Anything not PUBLISHED (draft, unpublished, archived, deleted, an old slug) answers 404. Every user-supplied
// value is HTML-escaped; no script is ever sent, and the Content-Security-Policy allows none (styles only by a
// per-response nonce, images and form posts only to this origin, plus the redirect's origin for form-action).
import { sharp } from '../domain/assets/images.ts';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import express, { type NextFunction, type Request, type Response } from 'express';
import { servicesOf, type AppContext } from '../app-context.ts';
import { clientOf } from './client.ts';
import { openVariant } from '../domain/assets/assets.ts';
import { toDownload } from '../domain/assets/mappers.ts';
import { ApiError } from '../domain/errors.ts';
import { findTemplateByPreview } from '../domain/landing-pages/catalog.ts';
import { findPublishedPage, maxCharsOf, submit, type PublicPage } from '../domain/landing-pages/submit.ts';
import type { StoredFormField } from '../db/tables/landing-pages.ts';

const MAX_FORM_BYTES = 64 * 1024;

/** Escapes text for HTML element content and double-quoted attribute values. */
function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=/]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/;
const color = (c: string, fallback: string) => (HEX_COLOR.test(c) ? c : fallback);

function securityHeaders(res: Response, nonce: string, formTargets: string[] = []): void {
  res.set({
    'Content-Security-Policy': [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      "img-src 'self'",
      `form-action 'self'${formTargets.map((t) => ` ${t}`).join('')}`,
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
}

function document(nonce: string, title: string, theme: { primaryColor: string; backgroundColor: string }, inner: string): string {
  const primary = color(theme.primaryColor, '#1A73E8');
  const background = color(theme.backgroundColor, '#FFFFFF');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
body{margin:0;font-family:system-ui,sans-serif;background:${background};color:#202124}
main{max-width:32rem;margin:0 auto;padding:1.5rem}
img.hero{max-width:100%;border-radius:8px}
.body{white-space:pre-line}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input,select,textarea{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
.consent{display:flex;gap:.5rem;align-items:flex-start;margin:1rem 0;font-size:.9rem}
.consent input{width:auto}
.error{color:#c5221f;font-size:.9rem}
button{background:${primary};color:#fff;border:0;border-radius:4px;padding:.75rem 1.5rem;font:inherit;cursor:pointer}
</style></head>
<body><main>${inner}</main></body></html>`;
}

function fieldHtml(f: StoredFormField, value: string, error: string | undefined): string {
  const id = `f_${f.key}`;
  const req = f.required ? ' required' : '';
  const err = error ? `<div class="error" id="${id}_error">${escapeHtml(error)}</div>` : '';
  const label = `<label for="${id}">${escapeHtml(f.label)}</label>`;
  switch (f.type) {
    case 'checkbox':
      return `<div class="consent"><input type="checkbox" id="${id}" name="${f.key}" value="on"${value ? ' checked' : ''}${req}><label for="${id}">${escapeHtml(f.label)}</label></div>${err}`;
    case 'textarea':
      return `${label}<textarea id="${id}" name="${f.key}" maxlength="${maxCharsOf(f)}"${req}>${escapeHtml(value)}</textarea>${err}`;
    case 'select':
      return `${label}<select id="${id}" name="${f.key}"${req}><option value=""></option>${(f.options ?? [])
        .map((o) => `<option value="${escapeHtml(o)}"${o === value ? ' selected' : ''}>${escapeHtml(o)}</option>`)
        .join('')}</select>${err}`;
    default: {
      const type = f.type === 'phone' ? 'tel' : f.type;
      const auto = f.type === 'phone' ? ' autocomplete="tel"' : f.type === 'email' ? ' autocomplete="email"' : '';
      // What the server takes (parseForm): the browser stops the visitor there instead of the form coming back.
      const max = f.type === 'text' ? ` maxlength="${maxCharsOf(f)}"` : '';
      return `${label}<input type="${type}" id="${id}" name="${f.key}" value="${escapeHtml(value)}"${auto}${max}${req}>${err}`;
    }
  }
}

function pageHtml(
  found: PublicPage,
  nonce: string,
  state: { values?: Record<string, string>; errors?: Record<string, string>; consent?: boolean } = {},
): string {
  const p = found.page;
  const action = `/p/${p.organization_id}/${p.slug}`;
  const errors = state.errors ?? {};
  const hero = p.hero_asset_id ? `<img class="hero" src="${escapeHtml(`${action}/hero`)}" alt="">` : '';
  const fields = p.form_fields.map((f) => fieldHtml(f, state.values?.[f.key] ?? '', errors[f.key])).join('\n');
  const consent = `<div class="consent"><input type="checkbox" id="consent" name="consent" value="on"${state.consent ? ' checked' : ''}${p.consent.required ? ' required' : ''}><label for="consent">${escapeHtml(p.consent.text)}</label></div>${errors.consent ? `<div class="error">${escapeHtml(errors.consent)}</div>` : ''}`;
  return document(
    nonce,
    p.title,
    p.theme,
    `${hero}<h1>${escapeHtml(p.headline)}</h1>${p.body ? `<p class="body">${escapeHtml(p.body)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" id="landing-form">
${fields}
${consent}
<button type="submit">${escapeHtml(p.submit_label)}</button>
</form>`,
  );
}

function redirectOrigin(url: string | null): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}

function notFoundPage(res: Response): void {
  const nonce = randomBytes(16).toString('base64');
  securityHeaders(res, nonce);
  res
    .status(404)
    .type('html')
    .send(document(nonce, 'Page not found', { primaryColor: '#1A73E8', backgroundColor: '#FFFFFF' }, '<h1>Page not found</h1>'));
}

const firstString = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '');

async function previewPng(name: string, headline: string, primary: string, background: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400"><rect width="600" height="400" fill="${background}"/>
<rect x="40" y="40" width="520" height="320" rx="16" fill="#fff" stroke="#dadce0"/>
<text x="300" y="130" font-family="sans-serif" font-size="30" text-anchor="middle" fill="#202124">${escapeHtml(headline)}</text>
<rect x="140" y="180" width="320" height="40" rx="4" fill="#f1f3f4" stroke="#dadce0"/>
<rect x="200" y="250" width="200" height="48" rx="6" fill="${primary}"/>
<text x="300" y="340" font-family="sans-serif" font-size="16" text-anchor="middle" fill="#5f6368">${escapeHtml(name)}</text></svg>`;
  return sharp()(Buffer.from(svg)).png().toBuffer();
}

export function mountLandingPages(server: express.Express, app: AppContext): void {
  const previews = new Map<string, Buffer>();
  server.get('/p/-/templates/:file', (req: Request, res: Response, next: NextFunction) => {
    const match = /^([a-z0-9-]+)\.png$/.exec(String(req.params.file));
    const template = match ? findTemplateByPreview(match[1]!) : undefined;
    if (!template) return notFoundPage(res);
    const cached = previews.get(template.id);
    const send = (png: Buffer) =>
      res.type('image/png').set({ 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' }).send(png);
    if (cached) return send(cached);
    const d = template.defaults;
    previewPng(template.name, d.headline, d.theme.primaryColor, d.theme.backgroundColor).then((png) => {
      previews.set(template.id, png);
      send(png);
    }, next);
  });

  server.get('/p/:org/:slug', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const found = await findPublishedPage(app, String(req.params.org), String(req.params.slug));
      if (!found) return notFoundPage(res);
      const nonce = randomBytes(16).toString('base64');
      securityHeaders(res, nonce, redirectOrigin(found.page.redirect_url));
      res.status(200).type('html').send(pageHtml(found, nonce));
    } catch (error) {
      next(error);
    }
  });

  server.get('/p/:org/:slug/hero', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const found = await findPublishedPage(app, String(req.params.org), String(req.params.slug));
      if (!found?.page.hero_asset_id) return notFoundPage(res);
      const services = servicesOf(app);
      const download = toDownload(await openVariant(found.tenant, services, found.page.hero_asset_id, 'original'));
      res
        .status(200)
        .type(download.contentType)
        .set({ ETag: download.headers.ETag, 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' });
      // Streamed from storage; a store failing mid-way can only cut the connection.
      pipeline(download.body!, res).catch(() => res.destroy());
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return notFoundPage(res);
      next(error);
    }
  });

  server.post(
    '/p/:org/:slug',
    express.urlencoded({ extended: false, limit: MAX_FORM_BYTES, parameterLimit: 100 }),
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const found = await findPublishedPage(app, String(req.params.org), String(req.params.slug));
        if (!found) return notFoundPage(res);
        const body = (req.body ?? {}) as Record<string, unknown>;
        const form = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, firstString(v)]));
        const outcome = await submit(app, found, form, clientOf(req));
        const nonce = randomBytes(16).toString('base64');
        securityHeaders(res, nonce, redirectOrigin(found.page.redirect_url));
        if (!outcome.ok) {
          res
            .status(400)
            .type('html')
            .send(
              pageHtml(found, nonce, {
                values: outcome.values,
                errors: outcome.errors,
                consent: form.consent !== undefined && form.consent !== '',
              }),
            );
        } else if (outcome.redirectUrl) {
          res.redirect(303, outcome.redirectUrl);
        } else {
          res
            .status(200)
            .type('html')
            .send(document(nonce, found.page.title, found.page.theme, `<h1 id="success">${escapeHtml(outcome.message)}</h1>`));
        }
      } catch (error) {
        if (error instanceof ApiError && error.status < 500) {
          const nonce = randomBytes(16).toString('base64');
          securityHeaders(res, nonce);
          if (error.headers) res.set(error.headers);
          const status = error.status === 404 ? 404 : error.status;
          res
            .status(status)
            .type('html')
            .send(
              document(
                nonce,
                'Sign-up not taken',
                { primaryColor: '#1A73E8', backgroundColor: '#FFFFFF' },
                `<h1>${escapeHtml(error.message)}</h1>`,
              ),
            );
          return;
        }
        next(error);
      }
    },
  );
}
