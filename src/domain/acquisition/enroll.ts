// Enrollment in an acquisition campaign, server-side (POST /v1/acquisition/{id}/enroll) and public (the hosted
// page / web forms / QR codes). One path for both: the contact is found or created, tagged with the campaign's
// list, its marketing consent recorded (source ACQUISITION, this campaign, the consent wording; public: the
// client IP and user agent on the enrollment row), and the welcome message accepted through acceptMessage.
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
import { existingTagIds } from '../../db/queries/contacts/tags.ts';
import { releaseSavepoint, rollbackToSavepoint, savepoint } from '../../db/queries/events/events.ts';
import { inTenantTransaction } from '../conversations/context.ts';
import { acceptMessage } from '../conversations/send.ts';
import { ApiError, conflict, invalidField, notFound, unprocessable } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import type { Services, Tenant } from '../tenant.ts';
import { loadCampaign, type CampaignRow } from './campaigns.ts';

type EnrollRequest = components['schemas']['AcquisitionEnrollRequest'];

/** How the person enrolled: an API key's server-side call, or the public endpoint (with what it knows of the client). */
export type EnrollVia = { kind: 'api' } | { kind: 'keyword' } | { kind: 'public'; ip: string | null; userAgent: string | null };

export type Enrollment = {
  row: q.EnrollmentRow;
  status: 'enrolled' | 'already_enrolled';
  /** Null when nothing was sent (no welcome message, already enrolled, opted out, or the gate refused it). */
  welcomeMessageId: string | null;
};

/** Public enrollment of a DNC-listed phone: nothing stored, the same answer as any other. */
export type PublicOutcome = { campaign: CampaignRow; enrollment: Enrollment | null };

function assertEnrollable(campaign: CampaignRow, via: EnrollVia, now: Date): void {
  // Public callers learn nothing about drafts: a DRAFT campaign is "not found" to them.
  if (via.kind === 'public' && campaign.status === 'DRAFT') throw notFound('Acquisition campaign');
  if (campaign.status !== 'ACTIVE') throw conflict('INVALID_STATE', `The campaign is ${campaign.status}; only ACTIVE campaigns enroll.`);
  if (campaign.starts_at && campaign.starts_at.getTime() > now.getTime()) throw conflict('INVALID_STATE', 'The campaign’s enrollment window has not started.');
  if (campaign.ends_at && campaign.ends_at.getTime() <= now.getTime()) throw conflict('INVALID_STATE', 'The campaign’s enrollment window has ended.');
}

export const renderWelcome = (template: string, name: string | null): string => template.replaceAll('{{name}}', name ?? '').replace(/ +([,.!?])/g, '$1');

/** The shared enrollment; a DNC-listed phone → 422 DNC_LISTED (the public caller turns that into silence). */
export async function enroll(tenant: Tenant, services: Services, campaignId: string, body: EnrollRequest, via: EnrollVia): Promise<{ campaign: CampaignRow; enrollment: Enrollment }> {
  const now = new Date();
  const parsed = parsePhone(body.phone);
  if (!parsed) throw invalidField('body.phone', 'is not a valid phone number for its country', 'INVALID_PHONE');
  return inTenantTransaction(tenant, async (t) => {
    const { db, organizationId: orgId } = t;
    const campaign = await loadCampaign(t, campaignId);
    assertEnrollable(campaign, via, now);
    if (await findDncEntryByPhone(db, orgId, parsed.e164)) throw unprocessable('DNC_LISTED', 'The phone is on the Do-Not-Contact list; it was not enrolled.');

    await q.lockEnrollment(db, campaign.id, parsed.e164);
    const earlier = await q.findEnrollment(db, orgId, campaign.id, parsed.e164);
    if (earlier) return { campaign, enrollment: { row: earlier, status: 'already_enrolled', welcomeMessageId: null } };

    const attributes: Record<string, string | number | boolean> = { ...(body.email ? { email: body.email } : {}), ...(body.attributes ?? {}) };
    let contactId = await contacts.findContactIdByPhone(db, orgId, parsed.e164);
    let contactCreated = false;
    if (!contactId) {
      const created = await contacts.insertContact(db, orgId, {
        phone: parsed.e164,
        phoneCountry: parsed.country,
        name: body.name ?? null,
        attributes,
        timeZone: null,
        consentType: 'MARKETING',
      });
      contactCreated = created !== undefined;
      contactId = created?.id ?? (await contacts.findContactIdByPhone(db, orgId, parsed.e164))!;
    }
    if (!contactCreated) await q.updateEnrolledContact(db, orgId, contactId, { name: body.name ?? null, attributes, consentType: 'MARKETING' });
    // The list tag (kept when the tag was deleted since the campaign was made: then there is nothing to attach).
    if ((await existingTagIds(db, orgId, [campaign.list_id])).has(campaign.list_id)) await contacts.addContactTags(db, orgId, contactId, [campaign.list_id]);

    const consentText = body.consentText ?? campaign.consent_text;
    const consent = await recordConsentEvent(db, {
      organization_id: orgId,
      contact_id: contactId,
      phone: parsed.e164,
      action: 'CONSENT_UPDATED',
      source: 'ACQUISITION',
      consent_type: 'MARKETING',
      keyword: null,
      channel: null,
      message_id: null,
      actor: null, // ConsentAuditLogEntry.actor: null for acquisition
      reason: `Acquisition campaign ${campaign.id} (${campaign.name})${via.kind === 'public' ? `, public enrollment from ${via.ip ?? 'an unknown address'}` : ''}: ${consentText}`.slice(0, 4000),
      expires_at: null,
    });
    const row = (await q.insertEnrollment(db, {
      organization_id: orgId,
      campaign_id: campaign.id,
      contact_id: contactId,
      phone: parsed.e164,
      contact_created: contactCreated,
      consent_text: consentText,
      consent_event_id: consent.id,
      via: via.kind,
      ip: via.kind === 'public' ? via.ip : null,
      user_agent: via.kind === 'public' ? via.userAgent?.slice(0, 1000) ?? null : null,
    }))!; // serialized by the lock above: never a conflict here

    let welcomeMessageId: string | null = null;
    if (campaign.welcome_message && !(await isOptedOut(db, orgId, parsed.e164))) {
      const name = contactCreated ? body.name ?? null : ((await contacts.getContact(db, orgId, contactId))?.name ?? null);
      // The welcome is best effort: a refusal (content rule, no channel, sender gone) never undoes the enrollment.
      await savepoint(db, 'acquisition_welcome');
      try {
        const message = await acceptMessage(t, services, {
          contactId,
          senderId: campaign.sender_id ?? undefined,
          messageType: 'MARKETING',
          content: { type: 'text', text: renderWelcome(campaign.welcome_message, name) },
          origin: 'event',
          now,
        });
        await releaseSavepoint(db, 'acquisition_welcome');
        welcomeMessageId = message.id;
        await q.setWelcomeMessage(db, orgId, row.id, message.id);
      } catch (error) {
        await rollbackToSavepoint(db, 'acquisition_welcome');
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
      }
    }
    return { campaign, enrollment: { row: { ...row, welcome_message_id: welcomeMessageId }, status: 'enrolled', welcomeMessageId } };
  });
}

/** POST /v1/acquisition/{campaignId}/enroll. */
export async function enrollContact(tenant: Tenant, services: Services, campaignId: string, body: EnrollRequest): Promise<Enrollment> {
  return (await enroll(tenant, services, campaignId, body, { kind: 'api' })).enrollment;
}
