// RCS capability lookup for a contact. A completed answer is cached on the contact for 7 days; a fresh
// completed lookup (a valid negative included) is the billable event, recorded in contact_rcs_lookups and counted
// in usage; a cached answer or a lookup the provider could not perform is not, and changes nothing.
// The plan's lookup rate is zero: the specification's only charges are text segments, card/media messages and
// pass-through fees, with "no per-call fee" — so a lookup is counted at 0.0000 USD, never charged.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/contacts/contacts.ts';
import { ProviderError } from '../../providers/provider.ts';
import { found } from '../errors.ts';
import { providerUnsupported } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';

export const RCS_CHECK_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** The plan lookup rate, per fresh completed lookup: zero (documented on GET /v1/contacts/{id}/rcs-check). */
export const RCS_LOOKUP_PRICE = { amount: '0.0000', currency: 'USD' } as const;

export type RcsCheckResult = {
  contactId: string;
  phone: string;
  status: 'COMPLETED' | 'FAILED';
  rcsCapable: boolean | null;
  checkedAt: Date;
  cached: boolean;
  /** A fresh completed lookup: the counted event, priced at RCS_LOOKUP_PRICE (zero). */
  billable: boolean;
  failureReason: string | null;
};

/** 404 when the organization has no such contact. */
export async function checkContactRcs(tenant: Tenant, services: Pick<Services, 'providers'>, contactId: string): Promise<RcsCheckResult> {
  const { providers } = services;
  const orgId = tenant.organizationId;
  // The contact row stays locked during the provider call, so two concurrent checks of one contact make (and
  // bill) one lookup: the second finds the first one's cached answer.
  return inTransaction(tenant.db, async (tx) => {
    const contact = found(await q.getContact(tx, orgId, contactId, { forUpdate: true }), 'Contact');
    const now = new Date();
    const answer = { contactId: contact.id, phone: contact.phone };
    const checked = contact.rcs_checked_at;
    if (contact.rcs_capable !== null && checked && now.getTime() - checked.getTime() < RCS_CHECK_TTL_MS) {
      return {
        ...answer,
        status: 'COMPLETED',
        rcsCapable: contact.rcs_capable,
        checkedAt: checked,
        cached: true,
        billable: false,
        failureReason: null,
      };
    }
    // The first slot whose provider looks capabilities up (Twilio, Telnyx: none; RBM, the simulator: yes).
    const provider = providers.rcsLookup();
    if (!provider?.checkRcsCapability) throw providerUnsupported(providers.slot('PROVIDER_A'), 'RCS capability lookup');
    let capable: boolean;
    try {
      ({ rcsCapable: capable } = await provider.checkRcsCapability(contact.phone));
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      return {
        ...answer,
        status: 'FAILED',
        rcsCapable: null,
        checkedAt: now,
        cached: false,
        billable: false,
        failureReason: error.message,
      };
    }
    await q.setRcsCapability(tx, orgId, contact.id, capable, now);
    await q.recordRcsLookup(tx, orgId, {
      contactId: contact.id,
      phone: contact.phone,
      provider: provider.name,
      rcsCapable: capable,
      price: RCS_LOOKUP_PRICE.amount,
      currency: RCS_LOOKUP_PRICE.currency,
      actor: tenant.apiKeyId ?? null,
      at: now,
    });
    return { ...answer, status: 'COMPLETED', rcsCapable: capable, checkedAt: now, cached: false, billable: true, failureReason: null };
  });
}
