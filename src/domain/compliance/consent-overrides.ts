// 24-hour consent overrides: while one is active, the contact's consent checks pass (the gate, gate.ts); DNC,
// quiet hours and content rules still apply. Each override writes its ConsentAuditLog entry (action and source
// OVERRIDE) in the same transaction. A DNC-listed phone cannot be overridden.
import { randomUUID } from 'node:crypto';
import { inTransaction } from '../../db/database.ts';
import { recordConsentEvent } from '../../db/queries/compliance/consent.ts';
import * as q from '../../db/queries/compliance/consent-overrides.ts';
import { findDncEntryByPhone } from '../../db/queries/compliance/dnc.ts';
import { forbidden, unknownReference, unprocessable } from '../errors.ts';
import type { Tenant } from '../tenant.ts';

export type ComplianceOverrideRow = q.ComplianceOverrideRow;

const OVERRIDE_HOURS = 24;

export type OverrideType = 'CONSENT_GRANT';

/** 404 naming body.contactId for an unknown contact, 422 DNC_LISTED for a listed phone (nothing is written). */
export async function createComplianceOverride(
  tenant: Tenant,
  body: { contactId: string; type?: OverrideType; reason: string },
): Promise<ComplianceOverrideRow> {
  const actor = tenant.apiKeyId;
  if (!actor) throw forbidden('A consent override is made with an API key.');
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    const contact = await q.getContactForOverride(tx, orgId, body.contactId);
    if (!contact) throw unknownReference('body.contactId', 'contact');
    if (await findDncEntryByPhone(tx, orgId, contact.phone)) {
      throw unprocessable('DNC_LISTED', 'The contact’s phone is on the Do-Not-Contact list; an override cannot lift it.');
    }
    const auditLogId = randomUUID();
    const override = await q.insertOverride(tx, orgId, {
      contactId: contact.id,
      type: body.type ?? 'CONSENT_GRANT',
      reason: body.reason,
      actor,
      auditLogId,
      hours: OVERRIDE_HOURS,
    });
    await recordConsentEvent(tx, {
      id: auditLogId,
      organization_id: orgId,
      contact_id: contact.id,
      phone: contact.phone,
      action: 'OVERRIDE',
      source: 'OVERRIDE',
      actor,
      reason: body.reason,
      created_at: override.created_at,
      expires_at: override.expires_at,
    });
    return override;
  });
}
