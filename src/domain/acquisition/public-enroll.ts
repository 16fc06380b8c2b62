// Public sign-ups (`security: []`): the enrollment endpoint behind hosted pages, web forms and QR codes, and
// landing pages tied to a campaign. Anyone can call them with any number, so (documented on
// enrollPublicAcquisitionContact):
//  - limits, shared by every API process (rate-limiter-flexible on PostgreSQL): per client address (the
//    socket's unless TRUST_PROXY says otherwise; IPv6 by /64), per campaign (maxSignupsPerHour) and per phone
//    across the organization;
//  - the phone must be of a country the campaign allows (by default its sender's);
//  - a sign-up of a new phone under a campaign without confirmedOptIn is enrolled at once; every other one (the
//    campaign confirms, or the phone is an existing contact) only waits for the handset's YES (pending.ts): a
//    public sign-up never changes an existing contact;
//  - the answer is the same whatever became of the number (new, contact, enrolled, waiting, opted out, DNC).
// Acts for the campaign's organization (tenantFor).
import type { components } from '../../../generated/api.d.ts';
import { servicesOf, type AppContext } from '../../app-context.ts';
import * as q from '../../db/queries/acquisition/campaigns.ts';
import { campaignOrganization } from '../../db/queries/acquisition/public.ts';
import { isOptedOut } from '../../db/queries/compliance/consent.ts';
import { findDncEntryByPhone } from '../../db/queries/compliance/dnc.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { getSender, oldestActiveSender } from '../../db/queries/sender-ids/senders.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import type { SenderRow } from '../messaging/senders.ts';
import { ApiError, notFound } from '../errors.ts';
import type { ParsedPhone } from '../phone.ts';
import { consumeOrTooMany, sharedLimiter } from '../rate-limits.ts';
import { tenantFor, type Services, type Tenant } from '../tenant.ts';
import { loadCampaign, type CampaignRow } from './campaigns.ts';
import { clientKey, type PublicClient } from './client.ts';
import { assertEnrollable, completeEnrollment, createEnrolledContact, phoneOf, signUpAttributes } from './enroll.ts';
import { requestConfirmation, type SignUp } from './pending.ts';

type EnrollRequest = components['schemas']['AcquisitionEnrollRequest'];

/** Requests per client address per window (the document: 10 per minute). */
const PUBLIC_ENROLL_LIMIT = { points: 10, durationSeconds: 60 };
/** Public sign-ups per phone number per window across the organization (the document: 3 per 24 hours). */
const PUBLIC_PHONE_LIMIT = { points: 3, durationSeconds: 86_400 };
const PUBLIC_ENROLL_MESSAGE = 'Thanks! Your sign-up was received.';
export const PUBLIC_CONFIRM_MESSAGE = 'Thanks! Check your phone and reply YES to the text we sent to confirm your sign-up.';

export type PublicEnrollResult = { redirectUrl: string | null; message: string };

/** A public sign-up past its limits and checks, ready to be stored (signUp). */
export type Admitted = { tenant: Tenant; services: Services; campaign: CampaignRow; phone: ParsedPhone; sender: SenderRow | undefined };

/** The sender the campaign's texts go from: its own, or the organization's default (undefined: none). */
async function senderOf(t: Tenant, campaign: CampaignRow): Promise<SenderRow | undefined> {
  return campaign.sender_id ? getSender(t.db, t.organizationId, campaign.sender_id) : oldestActiveSender(t.db, t.organizationId);
}

/** 400 INVALID_PHONE naming `body.phone` unless the campaign takes numbers of the phone's country. */
function assertCountryAllowed(campaign: CampaignRow, sender: SenderRow | undefined, phone: ParsedPhone): void {
  const allowed = campaign.allowed_countries ?? (sender?.country_code ? [sender.country_code] : []);
  if (phone.country && allowed.includes(phone.country)) return;
  throw new ApiError(400, 'INVALID_PHONE', 'This campaign does not take sign-ups of numbers from this country.', {
    details: [
      {
        field: 'body.phone',
        code: 'country_not_allowed',
        message: `numbers of ${phone.country ?? 'no single country'} are not accepted; allowed: ${allowed.join(', ') || 'none'}`,
      },
    ],
  });
}

/**
 * The checks of a public sign-up before anything is stored, cheapest first: the client address's limit, the
 * campaign (404 unknown or DRAFT, 409 not enrolling), the phone (400) and its country (400), the campaign's
 * hourly limit and the phone's daily one (429).
 */
export async function admitPublicSignUp(app: AppContext, campaignId: string, phoneInput: string, client: PublicClient): Promise<Admitted> {
  const limit = (name: string, points: number, seconds: number) => sharedLimiter(app.pool, name, points, seconds);
  await consumeOrTooMany(
    limit('public-enroll-ip', PUBLIC_ENROLL_LIMIT.points, PUBLIC_ENROLL_LIMIT.durationSeconds),
    clientKey(client.ip),
    'sign-ups',
  );
  const orgId = await campaignOrganization(app.db, campaignId);
  if (!orgId) throw notFound('Acquisition campaign');
  const tenant = await tenantFor(app, orgId);
  const services = servicesOf(app);
  const campaign = await loadCampaign(tenant, campaignId);
  assertEnrollable(campaign, 'public', new Date());
  const phone = phoneOf(phoneInput);
  const sender = await senderOf(tenant, campaign);
  assertCountryAllowed(campaign, sender, phone);
  await consumeOrTooMany(
    limit('public-signup-campaign', campaign.max_signups_per_hour, 3600),
    campaign.id,
    'sign-ups',
    'for this campaign',
  );
  await consumeOrTooMany(
    limit('public-signup-phone', PUBLIC_PHONE_LIMIT.points, PUBLIC_PHONE_LIMIT.durationSeconds),
    `${orgId}:${phone.e164}`,
    'sign-ups',
    'for this phone number',
  );
  return { tenant, services, campaign, phone, sender };
}

/**
 * Stores an admitted sign-up in the caller's transaction: enrolled at once, waiting for the handset, or nothing
 * (DNC-listed, opted out, already enrolled or waiting). Answers the contact of the phone afterwards, if any, and
 * whether this sign-up created it.
 */
export async function signUp(
  t: Tenant,
  a: Admitted,
  s: SignUp,
  now = new Date(),
): Promise<{ contactId: string | null; contactCreated: boolean }> {
  const { db, organizationId: orgId } = t;
  const { campaign, phone } = a;
  const none = async () => ({ contactId: (await contacts.findContactIdByPhone(db, orgId, phone.e164)) ?? null, contactCreated: false });
  if (await findDncEntryByPhone(db, orgId, phone.e164)) return { contactId: null, contactCreated: false };
  await q.lockEnrollment(db, campaign.id, phone.e164);
  if (await q.findEnrollment(db, orgId, campaign.id, phone.e164)) return none();
  if (await isOptedOut(db, orgId, phone.e164)) return none();

  const existing = await contacts.findContactIdByPhone(db, orgId, phone.e164);
  if (!existing && !campaign.confirmed_opt_in) {
    const made = await createEnrolledContact(t, phone, { name: s.name, attributes: s.attributes, consentType: 'MARKETING' });
    if (made.created) {
      await completeEnrollment(t, a.services, campaign, {
        contactId: made.contactId,
        phone: phone.e164,
        contactCreated: true,
        consentText: s.consentText,
        via: 'public',
        client: s.client,
        extraTagIds: s.tagIds,
        evidence: `, public sign-up from ${s.client.ip ?? 'an unknown address'} (${s.client.userAgent ?? 'no user agent'})`,
        now,
      });
      return { contactId: made.contactId, contactCreated: true };
    }
    // A concurrent request created the contact first: it is an existing contact now, and waits like one.
  }
  if (!a.sender) return none(); // nothing could send the confirmation request
  const waiting = await requestConfirmation(
    t,
    a.services,
    campaign,
    a.sender,
    phone,
    existing ?? (await contacts.findContactIdByPhone(db, orgId, phone.e164)),
    s,
    now,
  );
  return waiting ?? none();
}

/** POST /public/acquisition/{campaignId}/enroll. */
export async function enrollPublic(
  app: AppContext,
  campaignId: string,
  body: EnrollRequest,
  client: PublicClient,
): Promise<PublicEnrollResult> {
  const admitted = await admitPublicSignUp(app, campaignId, body.phone, client);
  // The body's attributes fit a new contact by the schema (50 keys of 1,000 characters at most).
  const s: SignUp = {
    name: body.name ?? null,
    attributes: signUpAttributes(body),
    consentText: body.consentText ?? admitted.campaign.consent_text,
    tagIds: [],
    client,
  };
  await inTenantTransaction(admitted.tenant, (t) => signUp(t, admitted, s));
  return publicAnswer(admitted.campaign);
}

/** The one answer of a public sign-up, whatever became of the number. */
function publicAnswer(campaign: CampaignRow): PublicEnrollResult {
  return { redirectUrl: campaign.redirect_url, message: campaign.confirmed_opt_in ? PUBLIC_CONFIRM_MESSAGE : PUBLIC_ENROLL_MESSAGE };
}
