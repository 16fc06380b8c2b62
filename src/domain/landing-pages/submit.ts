// The public side of a landing page (served by src/http/landing-pages.ts, outside the API): find a PUBLISHED page
// by organization and slug, and take a form submission. A submission records the contact (created, or the
// existing one with the same phone linked and updated: name, mapped attributes, the page's tags), the consent
// with its evidence (the disclosure shown, IP, user agent) and the submission row. A page tied to an acquisition
// campaign goes through the campaign's public enrollment (enrollPublic: contact, consent, enrollment, welcome),
// the one enrollment path; the page then adds its tags and the submission row. Acts for the page's organization
// (tenantFor); rate limited per client address like the public enrollment (the connection's, unless TRUST_PROXY
// says otherwise).
import type { AppContext } from '../../app-context.ts';
import { updateEnrolledContact } from '../../db/queries/acquisition/campaigns.ts';
import { recordConsentEvent } from '../../db/queries/compliance/consent.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { existingTagIds } from '../../db/queries/contacts/tags.ts';
import * as q from '../../db/queries/landing-pages/pages.ts';
import type { StoredFormField } from '../../db/tables/landing-pages.ts';
import { clientKey, type PublicClient } from '../acquisition/client.ts';
import { enrollPublic } from '../acquisition/public-enroll.ts';
import { inTenantTransaction } from '../conversations/context.ts';
import { consumeOrTooMany, sharedLimiter } from '../rate-limits.ts';
import { parsePhone } from '../phone.ts';
import { tenantFor, type Tenant } from '../tenant.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
/** Submissions per client IP per minute, across pages and processes. */
export const PUBLIC_SUBMIT_LIMIT = { points: 20, durationSeconds: 60 };
const MAX_VALUE_CHARS = 2000;

export type PublicPage = { tenant: Tenant; page: q.LandingPageRow };
export type SubmitOutcome = { ok: true; redirectUrl: string | null; message: string } | { ok: false; errors: Record<string, string>; values: Record<string, string> };
type Value = string | number | boolean | null;

/** The PUBLISHED page at /p/{organizationId}/{slug}; undefined for anything else (the route answers 404). */
export async function findPublishedPage(app: AppContext, organizationId: string, slug: string): Promise<PublicPage | undefined> {
  if (!UUID_RE.test(organizationId) || !SLUG_RE.test(slug)) return undefined;
  const exists = await app.db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
  if (!exists) return undefined;
  const tenant = await tenantFor(app, organizationId);
  const page = await q.pageBySlug(tenant.db, organizationId, slug);
  return page?.status === 'PUBLISHED' ? { tenant, page } : undefined;
}

const consumeOrRefuse = (app: AppContext, ip: string) =>
  consumeOrTooMany(sharedLimiter(app.pool, 'landing-page-ip', PUBLIC_SUBMIT_LIMIT.points, PUBLIC_SUBMIT_LIMIT.durationSeconds), ip, 'submissions');

/** Form values (strings) → typed values by the page's fields, or the per-field problems. */
export function parseForm(fields: readonly StoredFormField[], form: Record<string, string>): { values: Record<string, Value>; errors: Record<string, string> } {
  const values: Record<string, Value> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const raw = (form[f.key] ?? '').trim().slice(0, MAX_VALUE_CHARS);
    if (f.type === 'checkbox') {
      values[f.key] = raw !== '';
      if (f.required && raw === '') errors[f.key] = 'Please tick this box.';
      continue;
    }
    if (raw === '') {
      values[f.key] = null;
      if (f.required) errors[f.key] = 'This field is required.';
      continue;
    }
    switch (f.type) {
      case 'phone': {
        const parsed = parsePhone(raw, 'US');
        if (parsed) values[f.key] = parsed.e164;
        else errors[f.key] = 'Enter a valid mobile number.';
        break;
      }
      case 'number': {
        const n = Number(raw);
        if (Number.isFinite(n)) values[f.key] = n;
        else errors[f.key] = 'Enter a number.';
        break;
      }
      case 'email':
        if (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw) && raw.length <= 254) values[f.key] = raw;
        else errors[f.key] = 'Enter a valid email address.';
        break;
      case 'date':
        if (/^\d{4}-\d{2}-\d{2}$/.test(raw) && !Number.isNaN(Date.parse(raw))) values[f.key] = raw;
        else errors[f.key] = 'Enter a date (YYYY-MM-DD).';
        break;
      case 'select':
        if (f.options?.includes(raw)) values[f.key] = raw;
        else errors[f.key] = 'Choose one of the options.';
        break;
      default:
        values[f.key] = raw;
    }
  }
  return { values, errors };
}

const CONSENT_RANK: Record<string, number> = { NONE: 0, TRANSACTIONAL: 1, MARKETING: 2 };
const strongerConsent = (a: string, b: string): string => ((CONSENT_RANK[b] ?? 0) > (CONSENT_RANK[a] ?? 0) ? b : a);

export async function submit(app: AppContext, found: PublicPage, form: Record<string, string>, client: PublicClient): Promise<SubmitOutcome> {
  const { page } = found;
  const { values, errors } = parseForm(page.form_fields, form);
  const granted = (form.consent ?? '') !== '';
  if (page.consent.required && !granted) errors.consent = 'Please tick the box to agree.';
  if (Object.keys(errors).length) return { ok: false, errors, values: Object.fromEntries(page.form_fields.map((f) => [f.key, (form[f.key] ?? '').slice(0, MAX_VALUE_CHARS)])) };
  await consumeOrRefuse(app, clientKey(client.ip));

  const phoneField = page.form_fields.find((f) => f.type === 'phone')!;
  const phone = values[phoneField.key] as string;
  const name = page.form_fields.some((f) => f.key === 'name') && typeof values.name === 'string' ? values.name.slice(0, 100) : null;
  const attributes: Record<string, string | number | boolean> = {};
  for (const f of page.form_fields) {
    const v = values[f.key];
    if (f.attributeKey && v !== null && v !== undefined) attributes[f.attributeKey] = v;
  }
  const userAgent = client.userAgent?.slice(0, 1000) ?? null;
  const done: SubmitOutcome = { ok: true, redirectUrl: page.redirect_url, message: page.success_message };
  const tenant = await tenantFor(app, page.organization_id);
  const orgId = page.organization_id;
  // The contact's consent type (NONE < TRANSACTIONAL < MARKETING): a ticked box grants the page's kind, never lowers it.
  const given = page.consent.messageType === 'MARKETING' ? 'MARKETING' : 'TRANSACTIONAL';
  const existedBefore = (await contacts.findContactIdByPhone(tenant.db, orgId, phone)) !== undefined;

  if (page.acquisition_campaign_id) {
    await enrollPublic(app, page.acquisition_campaign_id, { phone, consent: true, consentText: page.consent.text, ...(name ? { name } : {}), ...(Object.keys(attributes).length ? { attributes } : {}) }, client);
  }
  await inTenantTransaction(tenant, async (t) => {
    let contactId = await contacts.findContactIdByPhone(t.db, orgId, phone);
    // A tied page whose enrollment was silently refused (a DNC-listed phone): nothing is recorded.
    if (!contactId && page.acquisition_campaign_id) return;
    let created = false;
    if (!contactId) {
      const parsed = parsePhone(phone)!;
      const row = await contacts.insertContact(t.db, orgId, { phone, phoneCountry: parsed.country, name, attributes, timeZone: null, consentType: granted ? given : 'NONE' });
      created = row !== undefined;
      contactId = row?.id ?? (await contacts.findContactIdByPhone(t.db, orgId, phone))!;
    }
    if (!created && !page.acquisition_campaign_id) {
      const current = await contacts.getContact(t.db, orgId, contactId);
      await updateEnrolledContact(t.db, orgId, contactId, { name, attributes, consentType: strongerConsent(current?.consent_type ?? 'NONE', granted ? given : 'NONE') });
    }
    const tags = [...(await existingTagIds(t.db, orgId, page.tag_ids))];
    if (tags.length) await contacts.addContactTags(t.db, orgId, contactId, tags);
    if (granted && !page.acquisition_campaign_id) {
      await recordConsentEvent(t.db, {
        organization_id: orgId,
        contact_id: contactId,
        phone,
        action: 'CONSENT_UPDATED',
        source: 'ACQUISITION',
        consent_type: page.consent.messageType,
        keyword: null,
        channel: null,
        message_id: null,
        actor: null,
        reason: `Landing page ${page.id} (${page.slug}), submitted from ${client.ip ?? 'an unknown address'} (${userAgent ?? 'no user agent'}): ${page.consent.text}`.slice(0, 4000),
        expires_at: null,
      });
    }
    await q.insertSubmission(t.db, orgId, {
      landing_page_id: page.id,
      fields: JSON.stringify(values),
      phone,
      contact_id: contactId,
      contact_action: existedBefore ? 'linked' : 'created',
      consent_given: granted,
      consent_text: page.consent.text,
      consent_message_type: page.consent.messageType,
      ip: client.ip,
      user_agent: userAgent,
    });
  });
  return done;
}
