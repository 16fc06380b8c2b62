// The handset's YES to a confirmation request (pending.ts) enrolls the waiting public sign-ups of that phone whose
// request went from the sender it replied to. Called by the inbound path before the keyword engine, so for a
// phone with a sign-up waiting a YES confirms it instead of acting as the opt-in keyword; any other phone, or any
// other text, goes on to the keyword engine as before.
//
// What the YES changes: consent is recorded now (source ACQUISITION, the sign-up's wording, address, user agent
// and time as evidence, with the reply's message id and channel), the contact is tagged and welcomed
// (completeEnrollment). The sign-up's name and attributes are written only to a contact the sign-up created:
// the handset confirmed joining the campaign, not what a form said about an existing customer.
import * as q from '../../db/queries/acquisition/campaigns.ts';
import * as p from '../../db/queries/acquisition/pending.ts';
import { isOptedOut } from '../../db/queries/compliance/consent.ts';
import { findDncEntryByPhone } from '../../db/queries/compliance/dnc.ts';
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { normalizeInboundText } from '../compliance/keyword-engine.ts';
import { ApiError } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import type { Services, Tenant } from '../tenant.ts';
import { settled } from './campaigns.ts';
import { assertEnrollable, completeEnrollment, createEnrolledContact, updateEnrolledContact, type SignUpAttributes } from './enroll.ts';

/** The reply that confirms (the request says "reply YES"), compared as the keyword engine compares keywords. */
const CONFIRMATION_REPLY = 'YES';

export type Reply = { phone: string; senderId: string; text: string; messageId: string; channel: 'RCS' | 'SMS' | 'MMS' | 'CHATAPP' };

/**
 * True when the reply confirmed (or was the answer to) waiting sign-ups: the inbound path then stops here. False
 * for any other text, a phone with nothing waiting on this sender, or an opted-out phone (a STOP since the
 * request drops its sign-ups, and YES is then the opt-in keyword it always was). Runs in the inbound transaction.
 */
export async function confirmSignUpsByReply(t: Tenant, services: Services, reply: Reply): Promise<boolean> {
  if (normalizeInboundText(reply.text) !== CONFIRMATION_REPLY) return false;
  const { db, organizationId: orgId } = t;
  const now = new Date();
  const rows = await p.livePendingForReply(db, orgId, reply.phone, reply.senderId, now);
  if (rows.length === 0) return false;
  await p.deletePending(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  if (await isOptedOut(db, orgId, reply.phone)) return false;
  for (const row of rows) await confirmOne(t, services, row, reply, now);
  return true;
}

async function confirmOne(t: Tenant, services: Services, row: p.PendingRow, reply: Reply, now: Date): Promise<void> {
  const { db, organizationId: orgId } = t;
  const stored = await q.getCampaign(db, orgId, row.campaign_id);
  if (!stored) return;
  const campaign = settled(stored, now);
  try {
    assertEnrollable(campaign, 'public', now); // paused, ended or out of its window since the sign-up: not enrolled
  } catch (error) {
    if (error instanceof ApiError) return;
    throw error;
  }
  if (await findDncEntryByPhone(db, orgId, row.phone)) return;
  await q.lockEnrollment(db, campaign.id, row.phone);
  if (await q.findEnrollment(db, orgId, campaign.id, row.phone)) return; // enrolled meanwhile (API, keyword)

  const said = { name: row.name, attributes: row.attributes as SignUpAttributes };
  let contactId = (await contacts.getContact(db, orgId, row.contact_id))?.id ?? (await contacts.findContactIdByPhone(db, orgId, row.phone));
  let created = row.contact_created;
  if (!contactId) {
    // The contact was deleted while the sign-up waited: the handset's YES makes it again, from the sign-up.
    const made = await createEnrolledContact(t, parsePhone(row.phone) ?? { e164: row.phone, country: null }, {
      ...said,
      consentType: 'MARKETING',
    });
    contactId = made.contactId;
    created = made.created;
  }
  if (created) {
    await updateEnrolledContact(t, contactId, said).catch(async (error: unknown) => {
      // Attributes the contact can no longer hold (it gained others meanwhile): consent and enrollment still go through.
      if (!(error instanceof ApiError)) throw error;
      await updateEnrolledContact(t, contactId, { name: said.name, attributes: {} });
    });
  } else {
    await updateEnrolledContact(t, contactId, { name: null, attributes: {} });
  }
  await completeEnrollment(t, services, campaign, {
    contactId,
    phone: row.phone,
    contactCreated: row.contact_created,
    consentText: row.consent_text,
    via: 'public',
    client: { ip: row.ip, userAgent: row.user_agent },
    extraTagIds: row.tag_ids,
    evidence: `, public sign-up from ${row.ip ?? 'an unknown address'} (${row.user_agent ?? 'no user agent'}) at ${row.created_at.toISOString()}, confirmed by the handset's ${CONFIRMATION_REPLY} to ${reply.senderId}`,
    confirmation: { messageId: reply.messageId, channel: reply.channel },
    now,
  });
}
