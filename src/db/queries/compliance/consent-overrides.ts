// SQL for 24-hour consent overrides. The service writes the override and its ConsentAuditLog entry
// (consent.ts) in one transaction.
import { sql, type Selectable } from 'kysely';
import type { ComplianceOverridesTable } from '../../tables/compliance.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ComplianceOverrideRow = Selectable<ComplianceOverridesTable>;

/** The contact an override is for, locked against deletion until the transaction ends. */
export function getContactForOverride(db: TenantDb, orgId: string, contactId: string): Promise<{ id: string; phone: string } | undefined> {
  return tenant(db.selectFrom('contacts'), orgId).select(['id', 'phone']).where('id', '=', contactId).forShare().executeTakeFirst();
}

/**
 * Inserts an override lasting `hours` from now. Its times come from the database (one clock for every API
 * process); the audit entry copies them.
 */
export function insertOverride(
  db: TenantDb,
  orgId: string,
  o: { contactId: string; type: string; reason: string; actor: string; auditLogId: string; hours: number },
): Promise<ComplianceOverrideRow> {
  return db
    .insertInto('compliance_overrides')
    .values({
      organization_id: orgId,
      contact_id: o.contactId,
      type: o.type,
      reason: o.reason,
      actor: o.actor,
      audit_log_id: o.auditLogId,
      expires_at: sql<Date>`now() + make_interval(hours => ${o.hours})`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
