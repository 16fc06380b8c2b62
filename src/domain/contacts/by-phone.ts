// The contact a request names by phone (POST /v1/events `phone`, POST /v1/messages/send `to`): the organization's
// contact with that number, or a new one (no name, consent NONE: the consent rules then apply to it as to any
// contact). One way for both, so a phone means the same contact whichever operation names it.
import * as contacts from '../../db/queries/contacts/contacts.ts';
import { invalidField } from '../errors.ts';
import { parsePhone } from '../phone.ts';
import type { Tenant } from '../tenant.ts';

/** `field` names the phone in a 400 INVALID_PHONE (e.g. `body.to`). Run it in the transaction of what follows. */
export async function contactByPhone(tenant: Tenant, phone: string, field: string): Promise<{ id: string; created: boolean }> {
  const { db, organizationId: orgId } = tenant;
  const parsed = parsePhone(phone);
  if (!parsed) throw invalidField(field, 'is not a valid phone number for its country', 'INVALID_PHONE');
  const existing = await contacts.findContactIdByPhone(db, orgId, parsed.e164);
  if (existing) return { id: existing, created: false };
  const created = await contacts.insertContact(db, orgId, {
    phone: parsed.e164,
    phoneCountry: parsed.country,
    name: null,
    attributes: {},
    timeZone: null,
    consentType: 'NONE',
  });
  if (created) return { id: created.id, created: true };
  // Created concurrently by another request: reuse it.
  return { id: (await contacts.findContactIdByPhone(db, orgId, parsed.e164))!, created: false };
}
