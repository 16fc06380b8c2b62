// A public sign-up that waits for the handset (AcquisitionConfirmedOptIn): the row keeps what the sign-up said, and
// one text asks the handset to reply YES to the sender it came from. Nothing else is stored: a new phone becomes a
// bare contact (no name, no attributes, consent NONE) only so that the text has a recipient, and an existing
// contact is not touched. Expires after PENDING_TTL_HOURS; confirm.ts turns a YES into the enrollment.
import type { Db } from '../../db/database.ts';
import * as p from '../../db/queries/acquisition/pending.ts';
import { releaseSavepoint, rollbackToSavepoint, savepoint } from '../../db/queries/events/events.ts';
import { send } from '../messaging/send.ts';
import type { SenderRow } from '../messaging/senders.ts';
import { ApiError } from '../errors.ts';
import type { ParsedPhone } from '../phone.ts';
import type { Services, Tenant } from '../tenant.ts';
import type { CampaignRow } from './campaigns.ts';
import type { PublicClient } from './client.ts';
import { createEnrolledContact, MAX_ENROLL_NAME_CHARS, type SignUpAttributes } from './enroll.ts';
import { storedName } from './names.ts';

/** How long a sign-up waits for the handset's YES (documented on AcquisitionConfirmedOptIn). */
const PENDING_TTL_HOURS = 24;

/** The confirmation request (documented on AcquisitionConfirmedOptIn). The campaign's name is the organization's. */
const confirmationText = (campaign: CampaignRow): string =>
  `${campaign.name}: reply YES to confirm your sign-up for recurring marketing texts. Msg & data rates may apply. Reply STOP to cancel.`;

export type SignUp = {
  name: string | null;
  attributes: SignUpAttributes;
  consentText: string;
  /** A landing page's tags, added with the list tag once confirmed. */
  tagIds: readonly string[];
  client: PublicClient;
};

/**
 * Stores the sign-up and sends the confirmation request from `sender`. Answers the contact the request went to,
 * or null when nothing was stored: one of this phone waits already (nothing is sent again), or the request was
 * refused (opt-out, DNC, content rule …): a sign-up the handset cannot confirm is not kept. Runs in the caller's
 * transaction, with the caller holding lockEnrollment.
 */
export async function requestConfirmation(
  t: Tenant,
  services: Services,
  campaign: CampaignRow,
  sender: SenderRow,
  phone: ParsedPhone,
  existingContactId: string | undefined,
  signUp: SignUp,
  now: Date,
): Promise<{ contactId: string; contactCreated: boolean } | null> {
  const { db, organizationId: orgId } = t;
  await savepoint(db, 'acquisition_confirmation');
  try {
    const contact = existingContactId
      ? { contactId: existingContactId, created: false }
      : await createEnrolledContact(t, phone, { name: null, attributes: {}, consentType: 'NONE' });
    const row = await p.insertPending(db, {
      organization_id: orgId,
      campaign_id: campaign.id,
      contact_id: contact.contactId,
      phone: phone.e164,
      sender_id: sender.id,
      contact_created: contact.created,
      name: storedName(signUp.name, MAX_ENROLL_NAME_CHARS),
      attributes: JSON.stringify(signUp.attributes),
      tag_ids: [...signUp.tagIds],
      consent_text: signUp.consentText,
      ip: signUp.client.ip,
      user_agent: signUp.client.userAgent,
      expires_at: new Date(now.getTime() + PENDING_TTL_HOURS * 3_600_000),
    });
    if (!row) {
      await rollbackToSavepoint(db, 'acquisition_confirmation');
      return null;
    }
    const message = await send(t, services, {
      contactId: contact.contactId,
      senderId: sender.id,
      // Asked for by the sign-up and about it, not marketing: no marketing consent yet, and not held for quiet hours.
      messageType: 'TRANSACTIONAL',
      content: { type: 'text', text: confirmationText(campaign) },
      origin: 'event',
      conversationSource: { type: 'acquisition', campaignId: campaign.id },
      now,
    });
    await p.setConfirmationMessage(db, orgId, row.id, message.id);
    await releaseSavepoint(db, 'acquisition_confirmation');
    return { contactId: contact.contactId, contactCreated: contact.created };
  } catch (error) {
    await rollbackToSavepoint(db, 'acquisition_confirmation');
    if (error instanceof ApiError && error.status < 500) return null;
    throw error;
  }
}

/** Removes every organization's expired sign-ups (the hourly job); answers how many. */
export function purgeExpiredSignUps(db: Db): Promise<number> {
  return p.purgeExpiredPending(db);
}
