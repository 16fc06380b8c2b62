// Enrollment in an acquisition campaign. One step ends every enrollment (completeEnrollment): marketing consent
// recorded with its evidence (source ACQUISITION, this campaign, the consent wording; public: the client address
// and user agent), the enrollment row, the list tag (and a landing page's tags), and the welcome message accepted
// through the send entry in a conversation whose source is the campaign. The ways in:
//  - server-side (POST /v1/acquisition/{id}/enroll: the API key vouches for the consent) and keyword (the handset
//    texted the keyword): enroll(), which finds or creates the contact and updates it;
//  - public (the hosted page, web forms, landing pages; public-enroll.ts): a new phone under a campaign without
//    confirmedOptIn is enrolled at once (enrollNewContact); every other public sign-up waits for the handset's
//    YES (pending.ts), which completes it (confirm.ts). A public sign-up never changes an existing contact.
//
// Idempotent per phone and campaign: the enrollment row is unique on (campaign, phone), and enrollments of one
// phone in one campaign are serialized, so a second one answers `already_enrolled` and sends nothing.
// An API call never undoes a STOP: an opted-out phone is enrolled and its consent recorded, but it stays opted
// out and is sent nothing (no welcome, no confirmation request).
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/acquisition/campaigns.ts';
import { isOptedOut, recordConsentEvent } from '../../db/queries/compliance/consent.ts';
import { findDncEntryByPhone } from '../../db/queries/compliance/dnc.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { existingTagIds, tagContactsSet } from '../../db/queries/contacts/tags.ts';
import { releaseSavepoint, rollbackToSavepoint, savepoint } from '../../db/queries/events/events.ts';
import { attributeMergeProblems } from '../contacts/attribute-limits.ts';
import { MAX_TAGS_PER_CONTACT } from '../contacts/tags.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { send } from '../messaging/send.ts';
import { ApiError, badRequest, conflict, invalidField, notFound, unprocessable } from '../errors.ts';
import { parsePhone, type ParsedPhone } from '../phone.ts';
import type { Services, Tenant } from '../tenant.ts';
import { loadCampaign, type CampaignRow } from './campaigns.ts';
import type { PublicClient } from './client.ts';
import { renderWelcome, storedName } from './names.ts';

type EnrollRequest = components['schemas']['AcquisitionEnrollRequest'];
export type SignUpAttributes = Record<string, string | number | boolean>;

/** `AcquisitionEnrollRequest.name` (and so the stored name of an enrollment) holds at most this. */
export const MAX_ENROLL_NAME_CHARS = 100;

export type Enrollment = {
  row: q.EnrollmentRow;
  status: 'enrolled' | 'already_enrolled';
  /** Null when nothing was sent (no welcome message, already enrolled, opted out, or the gate refused it). */
  welcomeMessageId: string | null;
};

/** Public callers learn nothing about drafts: a DRAFT campaign is "not found" to them. */
export function assertEnrollable(campaign: CampaignRow, via: 'api' | 'keyword' | 'public', now: Date): void {
  if (via === 'public' && campaign.status === 'DRAFT') throw notFound('Acquisition campaign');
  if (campaign.status !== 'ACTIVE') throw conflict('INVALID_STATE', `The campaign is ${campaign.status}; only ACTIVE campaigns enroll.`);
  if (campaign.starts_at && campaign.starts_at.getTime() > now.getTime())
    throw conflict('INVALID_STATE', 'The campaign’s enrollment window has not started.');
  if (campaign.ends_at && campaign.ends_at.getTime() <= now.getTime())
    throw conflict('INVALID_STATE', 'The campaign’s enrollment window has ended.');
}

/** The phone of a request, or 400 INVALID_PHONE naming `body.phone`. */
export function phoneOf(input: string): ParsedPhone {
  const parsed = parsePhone(input);
  if (!parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
  return parsed;
}

/** What a sign-up stores on a contact it creates or is allowed to change: the email is one more attribute. */
export function signUpAttributes(body: Pick<EnrollRequest, 'email' | 'attributes'>): SignUpAttributes {
  return { ...(body.email ? { email: body.email } : {}), ...(body.attributes ?? {}) };
}

/** A contact created by an enrollment; `consentType` MARKETING when enrolled at once, NONE while it waits. */
export async function createEnrolledContact(
  t: Tenant,
  phone: ParsedPhone,
  c: { name: string | null; attributes: SignUpAttributes; consentType: 'MARKETING' | 'NONE' },
): Promise<{ contactId: string; created: boolean }> {
  const created = await contacts.insertContact(t.db, t.organizationId, {
    phone: phone.e164,
    phoneCountry: phone.country,
    name: storedName(c.name, MAX_ENROLL_NAME_CHARS),
    attributes: c.attributes,
    timeZone: null,
    consentType: c.consentType,
  });
  if (created) return { contactId: created.id, created: true };
  return { contactId: (await contacts.findContactIdByPhone(t.db, t.organizationId, phone.e164))!, created: false }; // a concurrent insert won
}

/**
 * The name (when it has none), attributes merged and MARKETING consent, on a contact the enrollment may change;
 * 400 naming `field` when the merged attributes would break the contact's limits (nothing is stored).
 */
export async function updateEnrolledContact(
  t: Tenant,
  contactId: string,
  c: { name: string | null; attributes: SignUpAttributes },
  field = 'body.attributes',
): Promise<void> {
  if (Object.keys(c.attributes).length > 0) {
    const current = await contacts.getContact(t.db, t.organizationId, contactId, { forUpdate: true });
    const problems = attributeMergeProblems(current?.attributes ?? {}, c.attributes, field);
    if (problems.length) throw badRequest('The contact cannot hold these attributes.', problems);
  }
  await q.updateEnrolledContact(t.db, t.organizationId, contactId, {
    name: storedName(c.name, MAX_ENROLL_NAME_CHARS),
    attributes: c.attributes,
    consentType: 'MARKETING',
  });
}

export type Completion = {
  contactId: string;
  phone: string;
  contactCreated: boolean;
  consentText: string;
  via: 'api' | 'keyword' | 'public';
  /** Public: the sign-up's address and user agent (consent evidence). */
  client: PublicClient | null;
  /** Tags besides the campaign's list (a landing page's); those deleted since are skipped. */
  extraTagIds: readonly string[];
  /** Said in the consent entry after the campaign: how the consent was given. */
  evidence: string;
  /** The handset's reply that confirmed a public sign-up: the consent entry's message and channel. */
  confirmation?: { messageId: string; channel: 'RCS' | 'SMS' | 'MMS' | 'CHATAPP' };
  now: Date;
};

/** The one end of every enrollment: consent, enrollment row, tags, welcome (best effort). Runs in the caller's transaction. */
export async function completeEnrollment(t: Tenant, services: Services, campaign: CampaignRow, c: Completion): Promise<Enrollment> {
  const { db, organizationId: orgId } = t;
  const consent = await recordConsentEvent(db, {
    organization_id: orgId,
    contact_id: c.contactId,
    phone: c.phone,
    action: 'CONSENT_UPDATED',
    source: 'ACQUISITION',
    consent_type: 'MARKETING',
    keyword: null,
    channel: c.confirmation?.channel ?? null,
    message_id: c.confirmation?.messageId ?? null,
    actor: null, // ConsentAuditLogEntry.actor: null for acquisition
    reason: `Acquisition campaign ${campaign.id} (${campaign.name})${c.evidence}: ${c.consentText}`.slice(0, 4000),
    expires_at: null,
  });
  const row = (await q.insertEnrollment(db, {
    organization_id: orgId,
    campaign_id: campaign.id,
    contact_id: c.contactId,
    phone: c.phone,
    contact_created: c.contactCreated,
    consent_text: c.consentText,
    consent_event_id: consent.id,
    via: c.via,
    ip: c.client?.ip ?? null,
    user_agent: c.client?.userAgent ?? null,
  }))!; // serialized by lockEnrollment: never a conflict here
  // The list tag and the page's (those deleted since the campaign or page was made have nothing to attach), all or
  // none, within the contact's 50 tags (ContactTagIds): a contact that has no room keeps its tags.
  const tags = [...(await existingTagIds(db, orgId, [campaign.list_id, ...c.extraTagIds]))];
  if (tags.length) await tagContactsSet(db, orgId, [c.contactId], tags, MAX_TAGS_PER_CONTACT);

  let welcomeMessageId: string | null = null;
  if (campaign.welcome_message && !(await isOptedOut(db, orgId, c.phone))) {
    const name = (await contacts.getContact(db, orgId, c.contactId))?.name ?? null;
    // The welcome is best effort: a refusal (content rule, no channel, sender gone) never undoes the enrollment.
    await savepoint(db, 'acquisition_welcome');
    try {
      const message = await send(t, services, {
        contactId: c.contactId,
        senderId: campaign.sender_id ?? undefined,
        messageType: 'MARKETING',
        content: { type: 'text', text: renderWelcome(campaign.welcome_message, name) },
        origin: 'event',
        conversationSource: { type: 'acquisition', campaignId: campaign.id },
        now: c.now,
      });
      await releaseSavepoint(db, 'acquisition_welcome');
      welcomeMessageId = message.id;
      await q.setWelcomeMessage(db, orgId, row.id, message.id);
    } catch (error) {
      await rollbackToSavepoint(db, 'acquisition_welcome');
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
    }
  }
  return { row: { ...row, welcome_message_id: welcomeMessageId }, status: 'enrolled', welcomeMessageId };
}

/** Server-side and keyword enrollment; a DNC-listed phone → 422 DNC_LISTED. */
export async function enroll(
  tenant: Tenant,
  services: Services,
  campaignId: string,
  body: EnrollRequest,
  via: 'api' | 'keyword',
): Promise<{ campaign: CampaignRow; enrollment: Enrollment }> {
  const now = new Date();
  const parsed = phoneOf(body.phone);
  return inTenantTransaction(tenant, async (t) => {
    const { db, organizationId: orgId } = t;
    const campaign = await loadCampaign(t, campaignId);
    assertEnrollable(campaign, via, now);
    if (await findDncEntryByPhone(db, orgId, parsed.e164))
      throw unprocessable('DNC_LISTED', 'The phone is on the Do-Not-Contact list; it was not enrolled.');

    await q.lockEnrollment(db, campaign.id, parsed.e164);
    const earlier = await q.findEnrollment(db, orgId, campaign.id, parsed.e164);
    if (earlier) return { campaign, enrollment: { row: earlier, status: 'already_enrolled', welcomeMessageId: null } };

    const signUp = { name: body.name ?? null, attributes: signUpAttributes(body) };
    const existing = await contacts.findContactIdByPhone(db, orgId, parsed.e164);
    const { contactId, created } = existing
      ? { contactId: existing, created: false }
      : await createEnrolledContact(t, parsed, { ...signUp, consentType: 'MARKETING' });
    if (!created) await updateEnrolledContact(t, contactId, signUp);
    const enrollment = await completeEnrollment(t, services, campaign, {
      contactId,
      phone: parsed.e164,
      contactCreated: created,
      consentText: body.consentText ?? campaign.consent_text,
      via,
      client: null,
      extraTagIds: [],
      evidence: via === 'keyword' ? ', the handset texted the keyword' : '',
      now,
    });
    return { campaign, enrollment };
  });
}

/** POST /v1/acquisition/{campaignId}/enroll. */
export async function enrollContact(tenant: Tenant, services: Services, campaignId: string, body: EnrollRequest): Promise<Enrollment> {
  return (await enroll(tenant, services, campaignId, body, 'api')).enrollment;
}
