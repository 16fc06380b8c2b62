// Landing pages through HTTP against the real database: the template catalogue, create (template, default,
// overrides, slugs, validation), PATCH, delete, the state machine (every legal and illegal transition), the public
// page at /p/{organizationId}/{slug} (escaping, CSP, 404 unless PUBLISHED), form submissions recording the contact,
// consent evidence and, for a page tied to an acquisition campaign, the enrollment; submissions listed with
// paging; tenancy and scopes. And, when /usr/bin/chromium exists, the page in a real headless browser.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/processes.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

let srv: TestServer;
let key: string;
let orgId: string;
let other: { key: string; orgId: string };

beforeAll(async () => {
  srv = await startTestServer({ config: { trustProxy: 'loopback' } }); // the tests' X-Forwarded-For comes through a trusted proxy
  const org = await srv.newOrg('Landing org');
  key = org.apiKey.secret;
  orgId = org.organizationId;
  const o = await srv.newOrg('Other landing org');
  other = { key: o.apiKey.secret, orgId: o.organizationId };
});
afterAll(() => srv.close());

const SMS_OPT_IN = '0b6f3c2a-8e1d-4a57-9c3e-5f2d7a1b4c60';
const UNKNOWN = '6f5e4d3c-2b1a-4f9e-8d7c-6b5a4f3e2d1c';
const ip = () => `198.51.100.${randomInt(1, 254)}`;
let seq = 0;
const phone = () => `+1415555${String(1000 + (seq++ % 8999)).padStart(4, '0')}`;

async function create(body: Record<string, unknown>, k = key) {
  const res = await call(srv, 'POST', '/v1/landing-pages', { key: k, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}
const act = (id: string, action: 'publish' | 'unpublish', k = key) => call(srv, 'POST', `/v1/landing-pages/${id}/${action}`, { key: k });
const publicPath = (page: { slug: string }, org = orgId) => `/p/${org}/${page.slug}`;
const get = (path: string) => fetch(srv.baseUrl + path);
const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(srv.baseUrl + path, {
    method: 'POST',
    body: new URLSearchParams(form),
    redirect: 'manual',
    headers: { 'x-forwarded-for': ip(), 'user-agent': 'LandingTest/1.0', ...headers },
  });

describe('template catalogue', () => {
  it('lists the whole catalogue sorted by name, previews served as PNG', async () => {
    const res = await call(srv, 'GET', '/v1/landing-page-templates', { key });
    expect(res.status, res.text).toBe(200);
    const names = res.body.data.map((t: { name: string }) => t.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')));
    expect(res.body.data.length).toBeGreaterThanOrEqual(5);
    const optIn = res.body.data.find((t: { id: string }) => t.id === SMS_OPT_IN);
    expect(optIn.defaults.formFields.filter((f: { type: string }) => f.type === 'phone')).toHaveLength(1);
    const png = await fetch(optIn.previewUrl.replace(/^https?:\/\/[^/]+/, srv.baseUrl));
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect([...new Uint8Array(await png.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
  });
});

describe('create, get, list, update, delete', () => {
  it('creates from a template with overrides, from the default, and picks unique slugs', async () => {
    const a = await create({ name: 'Spring Sale!', templateId: SMS_OPT_IN, headline: 'Custom headline' });
    expect(a).toMatchObject({
      status: 'DRAFT',
      slug: 'spring-sale',
      templateId: SMS_OPT_IN,
      title: 'Join our text club',
      headline: 'Custom headline',
      url: null,
      submissionCount: 0,
      publishedAt: null,
      acquisitionCampaignId: null,
    });
    const b = await create({ name: 'Spring sale' });
    expect(b.slug).toBe('spring-sale-2');
    expect(b.templateId).toBeNull();
    expect(b.formFields).toEqual([
      { key: 'phone', label: 'Mobile number', type: 'phone', required: true, options: null, attributeKey: null },
    ]);
    expect(b.consent).toMatchObject({ required: true, messageType: 'MARKETING' });
    const dup = await call(srv, 'POST', '/v1/landing-pages', { key, body: { name: 'x', slug: 'spring-sale' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    expect((await call(srv, 'GET', `/v1/landing-pages/${a.id}`, { key })).body.data).toEqual(a);
  });

  it('refuses invalid pages with 400 details', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await call(srv, 'POST', '/v1/landing-pages', { key, body: { name: 'Bad', ...body } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.details)).toContain(field);
    };
    await bad({ formFields: [{ key: 'email', label: 'Email', type: 'email' }] }, 'body.formFields');
    await bad(
      {
        formFields: [
          { key: 'p', label: 'P', type: 'phone' },
          { key: 'p', label: 'Q', type: 'text' },
        ],
      },
      'body.formFields.1.key',
    );
    await bad(
      {
        formFields: [
          { key: 'p', label: 'P', type: 'phone' },
          { key: 's', label: 'S', type: 'select' },
        ],
      },
      'body.formFields.1.options',
    );
    await bad({ templateId: UNKNOWN }, 'body.templateId');
    await bad({ heroAssetId: UNKNOWN }, 'body.heroAssetId');
    await bad({ tagIds: [UNKNOWN] }, 'body.tagIds.0');
    await bad({ redirectUrl: 'http://example.com/thanks' }, 'body.redirectUrl');
  });

  it('lists newest first with a status filter and paging; PATCH changes only the fields given', async () => {
    const k = (await srv.newOrg('List org')).apiKey.secret;
    const p1 = await create({ name: 'One' }, k);
    const p2 = await create({ name: 'Two' }, k);
    await act(p2.id, 'publish', k);
    const all = await call(srv, 'GET', '/v1/landing-pages?limit=1', { key: k });
    expect(all.body.data.map((p: { id: string }) => p.id)).toEqual([p2.id]);
    expect(all.body.pagination).toEqual({ page: 1, limit: 1, total: 2, hasMore: true });
    const drafts = await call(srv, 'GET', '/v1/landing-pages?status=DRAFT', { key: k });
    expect(drafts.body.data.map((p: { id: string }) => p.id)).toEqual([p1.id]);
    const patched = await call(srv, 'PATCH', `/v1/landing-pages/${p1.id}`, {
      key: k,
      body: { headline: 'New', body: null, theme: { primaryColor: '#000000' } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({
      headline: 'New',
      body: null,
      name: 'One',
      theme: { primaryColor: '#000000', backgroundColor: '#FFFFFF' },
    });
    const slugTaken = await call(srv, 'PATCH', `/v1/landing-pages/${p1.id}`, { key: k, body: { slug: p2.slug } });
    expect(slugTaken.status).toBe(409);
  });

  it('deletes a non-published page and its submissions; a published one is 409', async () => {
    const p = await create({ name: 'Doomed' });
    await act(p.id, 'publish');
    expect((await call(srv, 'DELETE', `/v1/landing-pages/${p.id}`, { key })).status).toBe(409);
    await act(p.id, 'unpublish');
    const del = await call(srv, 'DELETE', `/v1/landing-pages/${p.id}`, { key });
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ success: true, id: p.id });
    expect((await call(srv, 'GET', `/v1/landing-pages/${p.id}`, { key })).status).toBe(404);
  });
});

describe('state machine', () => {
  it('walks every legal transition and refuses the illegal ones with 409 INVALID_STATE', async () => {
    const p = await create({ name: 'States' });
    expect((await act(p.id, 'unpublish')).status).toBe(409); // DRAFT → unpublish
    const pub = await act(p.id, 'publish');
    expect(pub.status).toBe(200);
    expect(pub.body.data).toMatchObject({ status: 'PUBLISHED', url: `${srv.context.config.assetBaseUrl}/p/${orgId}/states` });
    const firstPublishedAt = pub.body.data.publishedAt;
    expect((await act(p.id, 'publish')).body.data.publishedAt).toBe(firstPublishedAt); // idempotent
    expect((await call(srv, 'PATCH', `/v1/landing-pages/${p.id}`, { key, body: { status: 'ARCHIVED' } })).status).toBe(409); // PUBLISHED → archive
    const unpub = await act(p.id, 'unpublish');
    expect(unpub.body.data).toMatchObject({ status: 'UNPUBLISHED', url: null });
    expect((await act(p.id, 'unpublish')).status).toBe(200); // idempotent
    expect((await act(p.id, 'publish')).body.data.status).toBe('PUBLISHED'); // UNPUBLISHED → PUBLISHED
    await act(p.id, 'unpublish');
    const arch = await call(srv, 'PATCH', `/v1/landing-pages/${p.id}`, { key, body: { status: 'ARCHIVED' } });
    expect(arch.body.data.status).toBe('ARCHIVED');
    for (const res of [
      await act(p.id, 'publish'),
      await act(p.id, 'unpublish'),
      await call(srv, 'PATCH', `/v1/landing-pages/${p.id}`, { key, body: { name: 'x' } }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('INVALID_STATE');
    }
    const d = await create({ name: 'Draft archive' });
    expect((await call(srv, 'PATCH', `/v1/landing-pages/${d.id}`, { key, body: { status: 'ARCHIVED' } })).body.data.status).toBe(
      'ARCHIVED',
    );
  });
});

describe('public page', () => {
  it('is 404 until published, escapes every value, sends a strict CSP, and is 404 again once unpublished', async () => {
    const evil = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>';
    const p = await create({
      name: 'Evil',
      title: evil,
      headline: evil,
      body: evil,
      submitLabel: 'Go <b>now</b>',
      formFields: [
        { key: 'phone', label: evil, type: 'phone' },
        { key: 'flavour', label: 'Flavour', type: 'select', options: [evil, 'plain'] },
      ],
      consent: { text: `Consent ${evil}` },
    });
    expect((await get(publicPath(p))).status).toBe(404);
    await act(p.id, 'publish');
    const res = await get(publicPath(p));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>now');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;&#47;script&#62;');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toMatch(/style-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("form-action 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    await act(p.id, 'unpublish');
    expect((await get(publicPath(p))).status).toBe(404);
    expect((await post(publicPath(p), { phone: '+14155550101', consent: 'on' })).status).toBe(404);
    expect((await get(`/p/${other.orgId}/${p.slug}`)).status).toBe(404);
    expect((await get(`/p/not-an-org/${p.slug}`)).status).toBe(404);
  });

  it('a submission records the contact, consent evidence and submission; errors re-render the form', async () => {
    const tag = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `lp-${randomInt(1e9)}` } })).body.data.id;
    const p = await create({ name: 'Signup', templateId: SMS_OPT_IN, tagIds: [tag] });
    await act(p.id, 'publish');
    const missing = await post(publicPath(p), { phone: '+14155550101' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('Please tick the box');
    const num = phone();
    const ok = await post(
      publicPath(p),
      { phone: num, first_name: '<i>Maya</i>', consent: 'on' },
      { 'x-forwarded-for': '203.0.113.24', 'user-agent': 'Evidence/2.0' },
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Check your phone');
    const subs = await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key });
    expect(subs.status, subs.text).toBe(200);
    expect(subs.body.pagination.total).toBe(1);
    const s = subs.body.data[0];
    expect(s).toMatchObject({
      landingPageId: p.id,
      phone: num,
      contactAction: 'created',
      fields: { phone: num, first_name: '<i>Maya</i>' },
    });
    expect(s.consent).toEqual({
      granted: true,
      messageType: 'MARKETING',
      text: p.consent.text,
      ipAddress: '203.0.113.24',
      userAgent: 'Evidence/2.0',
    });
    const contact = await call(srv, 'GET', `/v1/contacts/${s.contactId}`, { key });
    expect(contact.body.phone).toBe(num);
    expect(JSON.stringify(contact.body)).toContain(tag);
    const consent = await call(srv, 'GET', `/v1/contacts/${s.contactId}/consent`, { key });
    expect(JSON.stringify(consent.body)).toContain('Evidence/2.0');
    // the same phone again links the existing contact; paging
    await post(publicPath(p), { phone: num, consent: 'on' });
    const page2 = await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions?limit=1&page=1`, { key });
    expect(page2.body.data[0]).toMatchObject({ contactAction: 'linked', contactId: s.contactId });
    expect(page2.body.pagination).toEqual({ page: 1, limit: 1, total: 2, hasMore: true });
    expect((await call(srv, 'GET', `/v1/landing-pages/${p.id}`, { key })).body.data.submissionCount).toBe(2);
  });

  it('an optional consent left unticked records the submission without consent', async () => {
    const p = await create({ name: 'Feedback', templateId: '9c1e3a5b-7d9f-4e1a-8b3c-4d5e6f7a8b94' });
    expect(p.consent.required).toBe(false);
    await act(p.id, 'publish');
    const bad = await post(publicPath(p), { phone: phone(), rating: '9' });
    expect(bad.status).toBe(400);
    const num = phone();
    expect((await post(publicPath(p), { phone: num, rating: '4', comments: 'Nice' })).status).toBe(200);
    const s = (await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key })).body.data[0];
    expect(s).toMatchObject({ phone: num, fields: { rating: '4', comments: 'Nice' }, consent: { granted: false } });
    const contact = (await call(srv, 'GET', `/v1/contacts/${s.contactId}`, { key })).body;
    expect(JSON.stringify(contact)).toContain('"consentType":"NONE"');
  });

  it('publish checks the references again: a tag deleted since answers 400', async () => {
    const tag = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `gone-${randomInt(1e9)}` } })).body.data.id;
    const p = await create({ name: 'Tag gone', tagIds: [tag] });
    expect((await call(srv, 'DELETE', `/v1/tags/${tag}`, { key })).status).toBe(200);
    const res = await act(p.id, 'publish');
    expect(res.status, res.text).toBe(400);
    expect(res.body.details[0].field).toBe('tagIds.0');
    expect((await call(srv, 'GET', `/v1/landing-pages/${p.id}`, { key })).body.data.status).toBe('DRAFT');
  });

  it('the hero image: must be an image asset, ready to publish, then served from the public page', async () => {
    const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const f = new FormData();
    f.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'hero.png');
    const up = await call(srv, 'POST', '/v1/assets/upload', { key, rawBody: f });
    expect(up.status, up.text).toBe(201);
    const asset = up.body.data;
    const p = await create({ name: 'Hero page', heroAssetId: asset.id });
    // no workers in this file: the asset is still processing, so publishing is refused
    const refused = await act(p.id, 'publish');
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.details[0].field).toBe('heroAssetId');
    await srv.context.db.updateTable('assets').set({ status: 'ready' }).where('id', '=', asset.id).execute();
    expect((await act(p.id, 'publish')).status).toBe(200);
    const html = await (await get(publicPath(p))).text();
    expect(html).toContain(`<img class="hero" src="&#47;p&#47;${orgId}&#47;hero-page&#47;hero"`);
    const hero = await get(`${publicPath(p)}/hero`);
    expect(hero.status).toBe(200);
    expect(hero.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await hero.arrayBuffer()).equals(png)).toBe(true);
    expect((await get(`/p/${orgId}/states-none/hero`)).status).toBe(404);
  });

  it('a page tied to an acquisition campaign enrolls through the campaign', async () => {
    const listId = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `list-${randomInt(1e9)}` } })).body.data.id;
    const camp = await call(srv, 'POST', '/acquisition-campaigns', {
      key,
      body: { name: 'Tied', type: 'LINK', listId, status: 'ACTIVE', confirmedOptIn: false },
    });
    expect(camp.status, camp.text).toBe(201);
    const notMarketing = await call(srv, 'POST', '/v1/landing-pages', {
      key,
      body: { name: 'Tied bad', acquisitionCampaignId: camp.body.id, consent: { text: 'ok', required: false } },
    });
    expect(notMarketing.status).toBe(400);
    const unknown = await call(srv, 'POST', '/v1/landing-pages', { key, body: { name: 'Tied unknown', acquisitionCampaignId: UNKNOWN } });
    expect(unknown.status).toBe(404);
    const p = await create({ name: 'Tied page', acquisitionCampaignId: camp.body.id, redirectUrl: 'https://shop.example.com/thanks' });
    expect(p.acquisitionCampaignId).toBe(camp.body.id);
    await act(p.id, 'publish');
    expect((await get(publicPath(p))).headers.get('content-security-policy')).toContain("form-action 'self' https://shop.example.com");
    const num = phone();
    const res = await post(publicPath(p), { phone: num, consent: 'on' }, { 'x-forwarded-for': '203.0.113.77', 'user-agent': 'Tied/1.0' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('https://shop.example.com/thanks');
    const enrollment = await srv.context.db
      .selectFrom('acquisition_enrollments')
      .selectAll()
      .where('campaign_id', '=', camp.body.id)
      .executeTakeFirstOrThrow();
    expect(enrollment).toMatchObject({ phone: num, ip: '203.0.113.77', user_agent: 'Tied/1.0', consent_text: p.consent.text });
    const subs = await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key });
    expect(subs.body.data[0]).toMatchObject({ phone: num, contactId: enrollment.contact_id, contactAction: 'created' });
  });

  it('a submission with an existing contact’s phone is linked and changes nothing of theirs', async () => {
    const tag = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `lp-${randomInt(1e9)}` } })).body.data.id;
    const p = await create({ name: 'Existing', templateId: SMS_OPT_IN, tagIds: [tag] });
    await act(p.id, 'publish');
    const num = phone();
    const made = await call(srv, 'POST', '/v1/contacts', {
      key,
      body: { phone: num, name: 'Kim', attributes: { first_name: 'Kim', tier: 'gold' } },
    });
    expect(made.status, made.text).toBe(201);
    const before = (await call(srv, 'GET', `/v1/contacts/${made.body.id}`, { key })).body;
    const history = (await call(srv, 'GET', `/v1/contacts/${made.body.id}/consent`, { key })).body;
    expect((await post(publicPath(p), { phone: num, first_name: 'Mallory', consent: 'on' })).status).toBe(200);
    expect((await call(srv, 'GET', `/v1/contacts/${made.body.id}`, { key })).body).toEqual(before);
    expect((await call(srv, 'GET', `/v1/contacts/${made.body.id}/consent`, { key })).body).toEqual(history);
    const s = (await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key })).body.data[0];
    expect(s).toMatchObject({
      contactId: made.body.id,
      contactAction: 'linked',
      fields: { first_name: 'Mallory' },
      consent: { granted: true },
    });
  });

  it('a text field that goes to the contact takes what the contact holds: 1,000 characters for an attribute, 100 for the name', async () => {
    const p = await create({
      name: 'Long values',
      formFields: [
        { key: 'phone', label: 'Phone', type: 'phone', required: true },
        { key: 'name', label: 'Name', type: 'text' },
        { key: 'comments', label: 'Comments', type: 'textarea', attributeKey: 'comments' },
        { key: 'notes', label: 'Notes', type: 'textarea' },
      ],
    });
    await act(p.id, 'publish');
    const html = await (await get(publicPath(p))).text();
    expect(html).toContain('<textarea id="f_comments" name="comments" maxlength="1000"');
    expect(html).toContain('<textarea id="f_notes" name="notes" maxlength="2000"');
    expect(html).toContain('name="name" value="" maxlength="100"');

    const num = phone();
    const long = await post(publicPath(p), {
      phone: num,
      name: 'n'.repeat(101),
      comments: 'c'.repeat(1001),
      notes: 'n'.repeat(2000),
      consent: 'on',
    });
    expect(long.status).toBe(400);
    const again = await long.text();
    expect(again).toContain('id="f_comments_error">Enter at most 1,000 characters.');
    expect(again).toContain('id="f_name_error">Enter at most 100 characters.');
    expect(again).not.toContain('id="f_notes_error"');

    const ok = await post(publicPath(p), {
      phone: num,
      name: 'n'.repeat(100),
      comments: 'c'.repeat(1000),
      notes: 'n'.repeat(2000),
      consent: 'on',
    });
    expect(ok.status).toBe(200);
    const s = (await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key })).body.data[0];
    const contact = await call(srv, 'GET', `/v1/contacts/${s.contactId}`, { key }); // the response is validated
    expect(contact.status, contact.text).toBe(200);
    expect(contact.body.attributes.comments).toHaveLength(1000);
    expect((await call(srv, 'GET', '/v1/contacts?limit=100', { key })).status).toBe(200);
  });

  it('a page tied to a campaign that confirms: the submission waits for the handset’s YES, which adds the page’s tags; another country’s number gets the form back', async () => {
    const listId = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `list-${randomInt(1e9)}` } })).body.data.id;
    const tag = (await call(srv, 'POST', '/v1/tags', { key, body: { name: `page-${randomInt(1e9)}` } })).body.data.id;
    const camp = (
      await call(srv, 'POST', '/acquisition-campaigns', {
        key,
        body: { name: 'Confirmed', type: 'LINK', listId, status: 'ACTIVE', welcomeMessage: 'Hi {{name}}!' },
      })
    ).body;
    const p = await create({ name: 'Confirmed page', templateId: SMS_OPT_IN, acquisitionCampaignId: camp.id, tagIds: [tag] });
    await act(p.id, 'publish');

    const foreign = await post(publicPath(p), { phone: '+6797012345', consent: 'on' });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain('id="f_phone_error">This campaign does not take sign-ups of numbers from this country.');

    const num = phone();
    expect(
      (await post(publicPath(p), { phone: num, first_name: 'Maya', consent: 'on' }, { 'x-forwarded-for': '203.0.113.88' })).status,
    ).toBe(200);
    const s = (await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key })).body.data[0];
    expect(s).toMatchObject({ phone: num, contactAction: 'created' });
    const waiting = (await call(srv, 'GET', `/v1/contacts/${s.contactId}`, { key })).body;
    expect(waiting).toMatchObject({ name: null, attributes: {}, tags: [], tcpa: { consentType: 'NONE' } });
    expect((await call(srv, 'GET', `/acquisition-campaigns/${camp.id}`, { key })).body.stats).toMatchObject({
      enrolledCount: 0,
      pendingCount: 1,
    });

    const { signCallback, simulatorSecret } = await import('../src/providers/simulator.ts');
    const sender = await srv.context.db
      .selectFrom('sender_ids')
      .select('phone_number')
      .where('organization_id', '=', orgId)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    const payload = JSON.stringify({
      type: 'inbound',
      providerMessageId: `SIMIN${randomInt(1e12)}`,
      from: num,
      to: sender.phone_number,
      channel: 'SMS',
      text: 'YES',
      at: new Date().toISOString(),
    });
    const res = await fetch(`${srv.baseUrl}/provider-callbacks/PROVIDER_A`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-signature': signCallback(await simulatorSecret(srv.context.db), payload) },
      body: payload,
    });
    expect(res.status).toBe(204);
    const enrolled = (await call(srv, 'GET', `/v1/contacts/${s.contactId}`, { key })).body;
    expect(enrolled).toMatchObject({ attributes: { first_name: 'Maya' }, tcpa: { consentType: 'MARKETING' } });
    expect([...enrolled.tags].sort()).toEqual([listId, tag].sort());
    const enrollment = await srv.context.db
      .selectFrom('acquisition_enrollments')
      .selectAll()
      .where('campaign_id', '=', camp.id)
      .executeTakeFirstOrThrow();
    expect(enrollment).toMatchObject({
      phone: num,
      ip: '203.0.113.88',
      consent_text: p.consent.text,
      welcome_message_id: expect.any(String),
    });
  });
});

describe('tenancy and scopes', () => {
  it('another organization sees 404 on every id; a key without the scope gets 403', async () => {
    const p = await create({ name: 'Mine' });
    for (const [method, path, body] of [
      ['GET', `/v1/landing-pages/${p.id}`],
      ['PATCH', `/v1/landing-pages/${p.id}`, { name: 'x' }],
      ['DELETE', `/v1/landing-pages/${p.id}`],
      ['POST', `/v1/landing-pages/${p.id}/publish`],
      ['POST', `/v1/landing-pages/${p.id}/unpublish`],
      ['GET', `/v1/landing-pages/${p.id}/submissions`],
    ] as const) {
      const res = await call(srv, method, path, { key: other.key, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(srv, 'GET', '/v1/landing-pages', { key: other.key })).body.data).toEqual([]);
    const readOnly = await srv.newKey(orgId, ['landing-pages:read']);
    const denied = await call(srv, 'POST', `/v1/landing-pages/${p.id}/publish`, { key: readOnly.secret });
    expect(denied.status).toBe(403);
    expect((await call(srv, 'GET', `/v1/landing-pages/${p.id}`, { key: readOnly.secret })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------------
// A real browser: headless Chromium driven over the DevTools protocol (Node's WebSocket and fetch).
const CHROMIUM = '/usr/bin/chromium';
/**
 * Debian's chromium, installed here when missing and the run may install packages (root, apt-get present): the
 * page is tested in a real browser wherever that can be had; elsewhere the test is skipped with the reason printed.
 */
function ensureChromium(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get'))
    return `${CHROMIUM} is not installed and this run cannot install it (needs root and apt-get)`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { env, timeout: 180_000, stdio: 'ignore' });
  const install =
    update.status === 0 ? spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { env, timeout: 480_000, stdio: 'ignore' }) : update;
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} could not be installed (apt-get exit ${install.status ?? install.signal})`;
}

const browserSkip = ensureChromium();
if (browserSkip) console.warn(`skipping the headless-browser test: ${browserSkip}`);

describe.skipIf(browserSkip !== undefined)('public page in headless Chromium', () => {
  it('loads the page, fills and submits the form; the submission appears through the API', async () => {
    const p = await create({ name: 'Browser page', templateId: SMS_OPT_IN });
    await act(p.id, 'publish');
    const port = await freePort();
    const profile = await mkdtemp(join(tmpdir(), 'lp-chromium-'));
    const child = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profile}`,
        `--remote-debugging-port=${port}`,
        'about:blank',
      ],
      { stdio: 'ignore' },
    );
    try {
      let targets: Array<{ type: string; webSocketDebuggerUrl: string }> = [];
      for (let i = 0; i < 100 && !targets.some((t) => t.type === 'page'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        targets = await fetch(`http://127.0.0.1:${port}/json/list`).then(
          (r) => r.json() as Promise<typeof targets>,
          () => [],
        );
      }
      const ws = new WebSocket(targets.find((t) => t.type === 'page')!.webSocketDebuggerUrl);
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      });
      let id = 0;
      const pending = new Map<number, (v: any) => void>();
      ws.onmessage = (e) => {
        const msg = JSON.parse(String(e.data));
        if (msg.id) pending.get(msg.id)?.(msg);
      };
      const send = (method: string, params: Record<string, unknown> = {}) =>
        new Promise<any>((resolve) => {
          const n = ++id;
          pending.set(n, resolve);
          ws.send(JSON.stringify({ id: n, method, params }));
        });
      const evaluate = async (expression: string) =>
        (await send('Runtime.evaluate', { expression, returnByValue: true })).result?.result?.value;
      const waitFor = async (expression: string) => {
        for (let i = 0; i < 100; i++) {
          if (await evaluate(expression)) return;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`timed out waiting for ${expression}`);
      };
      await send('Page.enable');
      await send('Page.navigate', { url: srv.baseUrl + publicPath(p) });
      await waitFor(`document.getElementById('landing-form') !== null`);
      expect(await evaluate('document.title')).toBe('Join our text club');
      const num = phone();
      await evaluate(
        `document.getElementById('f_phone').value = '${num}'; document.getElementById('f_first_name').value = 'Browser'; document.getElementById('consent').checked = true; document.getElementById('landing-form').requestSubmit(); true`,
      );
      await waitFor(`document.getElementById('success') !== null`);
      ws.close();
      const subs = await call(srv, 'GET', `/v1/landing-pages/${p.id}/submissions`, { key });
      expect(subs.body.data[0]).toMatchObject({ phone: num, fields: { first_name: 'Browser' }, consent: { granted: true } });
      expect(subs.body.data[0].consent.userAgent).toContain('Chrome');
    } finally {
      // Chromium writes to its profile while it shuts down: wait for it to exit before removing the profile.
      const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
      child.kill();
      await exited;
      await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  }, 60_000);
});
