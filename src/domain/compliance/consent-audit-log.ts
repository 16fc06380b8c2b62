// ConsentAuditLog entries as the API shows them (contact consent history and the consent compliance report).
import type { components } from '../../../generated/api.d.ts';
import type { ConsentEventRow } from '../../db/queries/consent.ts';

type ConsentAuditLog = components['schemas']['ConsentAuditLog'];

/** A consent audit entry of the contact's history (entries written before the contact existed are shown as its own). */
export function toConsentAuditLog(row: ConsentEventRow, contactId = row.contact_id!): ConsentAuditLog {
  return {
    id: row.id,
    contactId: row.contact_id ?? contactId,
    phone: row.phone,
    action: row.action as ConsentAuditLog['action'],
    source: row.source as ConsentAuditLog['source'],
    consentType: row.consent_type as ConsentAuditLog['consentType'],
    keyword: row.keyword,
    channel: row.channel as ConsentAuditLog['channel'],
    messageId: row.message_id,
    actor: row.actor,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
  };
}
