// RCS capability lookup for a contact. A completed answer is cached on the contact for 7 days; a fresh
// completed lookup (a valid negative included) is billed at the lookup rate and recorded in
// contact_rcs_lookups; a cached answer or a lookup the provider could not perform is free and changes nothing.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import * as q from '../../db/queries/contacts.ts';
import { ProviderError, type MessagingProvider } from '../../providers/provider.ts';

type RcsCheck = components['schemas']['ContactRcsCheck'];

export const RCS_CHECK_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** The plan lookup rate, per fresh completed lookup (documented on GET /v1/contacts/{id}/rcs-check). */
export const RCS_LOOKUP_PRICE = { amount: '0.0050', currency: 'USD' } as const;

/** undefined when the organization has no such contact. */
export async function checkContactRcs(
  db: Db,
  provider: MessagingProvider,
  orgId: string,
  contactId: string,
  actor: string | null,
): Promise<RcsCheck | undefined> {
  // The contact row stays locked during the provider call, so two concurrent checks of one contact make (and
  // bill) one lookup: the second finds the first one's cached answer.
  return inTransaction(db, async (tx) => {
    const contact = await q.getContactForUpdate(tx, orgId, contactId);
    if (!contact) return undefined;
    const now = new Date();
    const checked = contact.rcs_checked_at;
    if (contact.rcs_capable !== null && checked && now.getTime() - checked.getTime() < RCS_CHECK_TTL_MS) {
      return result(contact, 'COMPLETED', contact.rcs_capable, checked, { cached: true });
    }
    let capable: boolean;
    try {
      ({ rcsCapable: capable } = await provider.checkRcsCapability(contact.phone));
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      return result(contact, 'FAILED', null, now, { cached: false, failureReason: error.message });
    }
    await q.setRcsCapability(tx, orgId, contactId, capable, now);
    await q.recordRcsLookup(tx, {
      organizationId: orgId,
      contactId,
      phone: contact.phone,
      provider: provider.name,
      rcsCapable: capable,
      price: RCS_LOOKUP_PRICE.amount,
      currency: RCS_LOOKUP_PRICE.currency,
      actor,
      at: now,
    });
    return result(contact, 'COMPLETED', capable, now, { cached: false, billable: true });
  });
}

function result(
  contact: { id: string; phone: string },
  status: RcsCheck['status'],
  rcsCapable: boolean | null,
  checkedAt: Date,
  o: { cached: boolean; billable?: boolean; failureReason?: string },
): RcsCheck {
  return {
    contactId: contact.id,
    phone: contact.phone,
    status,
    rcsCapable,
    checkedAt: checkedAt.toISOString(),
    cached: o.cached,
    expiresAt: status === 'COMPLETED' ? new Date(checkedAt.getTime() + RCS_CHECK_TTL_MS).toISOString() : null,
    billable: o.billable ?? false,
    cost: o.billable ? { ...RCS_LOOKUP_PRICE } : null,
    failureReason: o.failureReason ?? null,
  };
}
