// SQL for the contact-level compliance operations: 24-hour consent overrides and TCPA settings. Both write
// the ConsentAuditLog (consent_events) in the same transaction as the change.
import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { inTransaction, type Db } from '../database.ts';
import type { ComplianceOverridesTable } from '../tables/compliance.ts';
import type { ContactsTable } from '../tables/contacts.ts';
import { tenant } from '../tenant.ts';
import { recordConsentEvent } from './consent.ts';

export type ComplianceOverrideRow = Selectable<ComplianceOverridesTable>;
export type ContactRow = Selectable<ContactsTable>;

export const OVERRIDE_HOURS = 24;

export type CreateOverrideResult = { override: ComplianceOverrideRow } | { error: 'contact_not_found' | 'dnc_listed' };

export function createOverride(
  db: Db,
  orgId: string,
  req: { contactId: string; type: string; reason: string; actor: string },
): Promise<CreateOverrideResult> {
  return inTransaction(db, async (tx) => {
    const contact = await tenant(tx.selectFrom('contacts'), orgId).select(['id', 'phone']).where('id', '=', req.contactId).forShare().executeTakeFirst();
    if (!contact) return { error: 'contact_not_found' as const };
    const dnc = await tenant(tx.selectFrom('dnc_entries'), orgId).select('id').where('phone', '=', contact.phone).executeTakeFirst();
    if (dnc) return { error: 'dnc_listed' as const };
    // The override's times come from the database (one clock for every API process); the audit entry copies them.
    const auditLogId = randomUUID();
    const override = await tx
      .insertInto('compliance_overrides')
      .values({
        organization_id: orgId,
        contact_id: contact.id,
        type: req.type,
        reason: req.reason,
        actor: req.actor,
        audit_log_id: auditLogId,
        expires_at: sql<Date>`now() + make_interval(hours => ${OVERRIDE_HOURS})`,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordConsentEvent(tx, {
      id: auditLogId,
      organization_id: orgId,
      contact_id: contact.id,
      phone: contact.phone,
      action: 'OVERRIDE',
      source: 'OVERRIDE',
      actor: req.actor,
      reason: req.reason,
      created_at: override.created_at,
      expires_at: override.expires_at,
    });
    return { override };
  });
}

export type TcpaColumns = Pick<ContactRow, 'time_zone' | 'quiet_hours_start' | 'quiet_hours_end' | 'consent_type'>;

/**
 * Changes a contact's TCPA columns: `decide` sees the current contact (locked until commit) and answers the
 * new values, or throws to refuse. A consent type change writes a CONSENT_UPDATED audit entry (source API).
 * Undefined when the contact is not the organization's.
 */
export function updateContactTcpa(
  db: Db,
  orgId: string,
  contactId: string,
  actor: string,
  decide: (current: ContactRow) => TcpaColumns,
): Promise<ContactRow | undefined> {
  return inTransaction(db, async (tx) => {
    const current = await tenant(tx.selectFrom('contacts'), orgId).selectAll().where('id', '=', contactId).forUpdate().executeTakeFirst();
    if (!current) return undefined;
    const next = decide(current);
    const row = await tenant(tx.updateTable('contacts'), orgId)
      .set({ ...next, updated_at: sql`now()` })
      .where('id', '=', contactId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (next.consent_type !== current.consent_type) {
      await recordConsentEvent(tx, {
        organization_id: orgId,
        contact_id: contactId,
        phone: current.phone,
        action: 'CONSENT_UPDATED',
        source: 'API',
        consent_type: next.consent_type,
        actor,
      });
    }
    return row;
  });
}
