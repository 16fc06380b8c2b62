// KEYWORD campaigns: a handset texting a campaign's keyword to its short code (or long code) enrolls, exactly like
// the server-side enrollment (consent recorded with the campaign as its source, list tag, welcome message once).
// The inbound path calls enrollByKeyword for an inbound text the compliance keyword engine did not consume
// (STOP/HELP/START always win): one call in src/domain/messaging/inbound.ts, owned by Conversations.
import * as q from '../../db/queries/acquisition/campaigns.ts';
import { ApiError } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { settled } from './campaigns.ts';
import { enroll, type Enrollment } from './enroll.ts';

/** The enrollment an inbound text caused, or null when it is no live campaign's keyword on that sender. */
export async function enrollByKeyword(
  tenant: Tenant,
  services: Services,
  inbound: {
    phone: string;
    text: string;
    sender: { phone_number: string | null; address: string | null };
    /** The inbound message created the contact (a new number): the sign-up counts as a new contact. */
    contactCreated?: boolean;
  },
): Promise<Enrollment | null> {
  const keyword = inbound.text.trim().toUpperCase();
  if (!/^[A-Z0-9]{1,20}$/.test(keyword)) return null;
  const addresses = [inbound.sender.phone_number, inbound.sender.address].filter((a): a is string => Boolean(a));
  const now = new Date();
  const live = (await q.keywordCampaigns(tenant.db, tenant.organizationId, keyword, addresses)).map((r) => settled(r, now));
  const campaign = live.find((c) => c.status === 'ACTIVE' && (!c.starts_at || c.starts_at.getTime() <= now.getTime()));
  if (!campaign) return null;
  try {
    return (
      await enroll(tenant, services, campaign.id, { phone: inbound.phone, consent: true }, 'keyword', {
        contactCreated: inbound.contactCreated ?? false,
      })
    ).enrollment;
  } catch (error) {
    // A DNC-listed handset that texts the keyword is not enrolled (and gets nothing); other refusals likewise.
    if (error instanceof ApiError && error.status < 500) return null;
    throw error;
  }
}
