// The public side of a landing page (served by src/http/landing-pages.ts, outside the API): find a PUBLISHED page
// by organization and slug, and take a form submission, limited per client address (the socket's, unless
// TRUST_PROXY says otherwise). Anyone can type any number into a public form, so a submission never changes an
// existing contact (name, attributes, tags, consent): with the phone of a new contact it creates the contact with
// the mapped fields, the page's tags and the consent with its evidence (the disclosure shown, address, user
// agent); with an existing contact's phone it is only recorded and linked. A page tied to an acquisition campaign
// goes through the campaign's public sign-up instead (admitPublicSignUp + signUp: limits, countries, confirmation
// by the handset), the one enrollment path, and the submission row joins its transaction. Acts for the page's
// organization (tenantFor).
import type { AppContext } from '../../app-context.ts';
import { recordConsentEvent } from '../../db/queries/compliance/consent.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { existingTagIds } from '../../db/queries/contacts/tags.ts';
import * as q from '../../db/queries/landing-pages/pages.ts';
import type { StoredFormField } from '../../db/tables/landing-pages.ts';
import { clientKey, type PublicClient } from '../acquisition/client.ts';
import { MAX_ENROLL_NAME_CHARS } from '../acquisition/enroll.ts';
import { storedName } from '../acquisition/names.ts';
import { admitPublicSignUp, signUp, type Admitted } from '../acquisition/public-enroll.ts';
import { MAX_ATTRIBUTE_VALUE_CHARACTERS } from '../contacts/attribute-limits.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { ApiError } from '../errors.ts';
import { consumeOrTooMany, sharedLimiter } from '../rate-limits.ts';
import { parsePhone } from '../phone.ts';
import { tenantFor, type Tenant } from '../tenant.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
/** Submissions per client address per minute, across pages and processes. */
const PUBLIC_SUBMIT_LIMIT = { points: 20, durationSeconds: 60 };
/** A text value kept on the submission only (a `textarea`'s `maxlength`). */
const MAX_VALUE_CHARS = 2000;

/**
 * The longest value a text field takes: what the contact holds when the value goes to it (a field keyed `name`:
 * the name; one with an `attributeKey`: an attribute value), else what a submission keeps.
 */
export function maxCharsOf(f: Pick<StoredFormField, 'key' | 'attributeKey'>): number {
  if (f.key === 'name') return MAX_ENROLL_NAME_CHARS;
  return f.attributeKey ? MAX_ATTRIBUTE_VALUE_CHARACTERS : MAX_VALUE_CHARS;
}

export type PublicPage = { tenant: Tenant; page: q.LandingPageRow };
export type SubmitOutcome =
  { ok: true; redirectUrl: string | null; message: string } | { ok: false; errors: Record<string, string>; values: Record<string, string> };
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

const consumeOrRefuse = (app: AppContext, client: PublicClient) =>
  consumeOrTooMany(
    sharedLimiter(app.pool, 'landing-page-ip', PUBLIC_SUBMIT_LIMIT.points, PUBLIC_SUBMIT_LIMIT.durationSeconds),
    clientKey(client.ip),
    'submissions',
  );

/** Form values (strings) → typed values by the page's fields, or the per-field problems. */
function parseForm(
  fields: readonly StoredFormField[],
  form: Record<string, string>,
): { values: Record<string, Value>; errors: Record<string, string> } {
  const values: Record<string, Value> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const raw = (form[f.key] ?? '').trim();
    if (raw.length > maxCharsOf(f)) {
      errors[f.key] = `Enter at most ${maxCharsOf(f).toLocaleString('en-US')} characters.`;
      continue;
    }
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

export async function submit(
  app: AppContext,
  found: PublicPage,
  form: Record<string, string>,
  client: PublicClient,
): Promise<SubmitOutcome> {
  const { page } = found;
  const { values, errors } = parseForm(page.form_fields, form);
  const granted = (form.consent ?? '') !== '';
  if (page.consent.required && !granted) errors.consent = 'Please tick the box to agree.';
  const again = () => Object.fromEntries(page.form_fields.map((f) => [f.key, (form[f.key] ?? '').slice(0, MAX_VALUE_CHARS)]));
  if (Object.keys(errors).length) return { ok: false, errors, values: again() };
  await consumeOrRefuse(app, client);

  const phoneField = page.form_fields.find((f) => f.type === 'phone')!;
  const phone = values[phoneField.key] as string;
  const name =
    page.form_fields.some((f) => f.key === 'name') && typeof values.name === 'string'
      ? storedName(values.name, MAX_ENROLL_NAME_CHARS)
      : null;
  const attributes: Record<string, string | number | boolean> = {};
  for (const f of page.form_fields) {
    const v = values[f.key];
    if (f.attributeKey && v !== null && v !== undefined) attributes[f.attributeKey] = v;
  }
  const done: SubmitOutcome = { ok: true, redirectUrl: page.redirect_url, message: page.success_message };
  const submission = (contactId: string, created: boolean) => ({
    landing_page_id: page.id,
    fields: JSON.stringify(values),
    phone,
    contact_id: contactId,
    contact_action: created ? ('created' as const) : ('linked' as const),
    consent_given: granted,
    consent_text: page.consent.text,
    consent_message_type: page.consent.messageType,
    ip: client.ip,
    user_agent: client.userAgent,
  });

  if (page.acquisition_campaign_id) {
    let admitted: Admitted;
    try {
      admitted = await admitPublicSignUp(app, page.acquisition_campaign_id, phone, client);
    } catch (error) {
      // A number of a country the campaign does not take: the form again, with the reason on the phone field.
      if (error instanceof ApiError && error.code === 'INVALID_PHONE')
        return { ok: false, errors: { [phoneField.key]: error.message }, values: again() };
      throw error;
    }
    await inTenantTransaction(admitted.tenant, async (t) => {
      const outcome = await signUp(t, admitted, { name, attributes, consentText: page.consent.text, tagIds: page.tag_ids, client });
      // A DNC-listed phone is silently not enrolled, and nothing is recorded of it.
      if (outcome.contactId) await q.insertSubmission(t.db, t.organizationId, submission(outcome.contactId, outcome.contactCreated));
    });
    return done;
  }

  const tenant = await tenantFor(app, page.organization_id);
  await inTenantTransaction(tenant, async (t) => {
    const orgId = t.organizationId;
    const existing = await contacts.findContactIdByPhone(t.db, orgId, phone);
    const row = existing
      ? undefined
      : await contacts.insertContact(t.db, orgId, {
          phone,
          phoneCountry: parsePhone(phone)?.country ?? null,
          name,
          attributes,
          timeZone: null,
          // The contact's consent: the page's kind when the box is ticked (TRANSACTIONAL for a SERVICE page).
          consentType: granted ? (page.consent.messageType === 'MARKETING' ? 'MARKETING' : 'TRANSACTIONAL') : 'NONE',
        });
    // An existing contact (or one a concurrent submission created first) is linked and left as it is.
    const contactId = row?.id ?? existing ?? (await contacts.findContactIdByPhone(t.db, orgId, phone))!;
    if (row) {
      const tags = [...(await existingTagIds(t.db, orgId, page.tag_ids))];
      if (tags.length) await contacts.addContactTags(t.db, orgId, contactId, tags);
      if (granted) {
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
          reason:
            `Landing page ${page.id} (${page.slug}), submitted from ${client.ip ?? 'an unknown address'} (${client.userAgent ?? 'no user agent'}): ${page.consent.text}`.slice(
              0,
              4000,
            ),
          expires_at: null,
        });
      }
    }
    await q.insertSubmission(t.db, orgId, submission(contactId, row !== undefined));
  });
  return done;
}
