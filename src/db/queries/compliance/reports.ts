// SQL for compliance reports: rows created in [from, to), oldest first.
import { tenant, type TenantDb } from '../../tenant.ts';
import type { ConsentEventRow } from './consent.ts';
import type { DncEntryRow } from './dnc.ts';

/** Consent audit entries (of one `action` when given). */
export function consentEventsBetween(db: TenantDb, orgId: string, from: Date, to: Date, action?: string): Promise<ConsentEventRow[]> {
  let q = tenant(db.selectFrom('consent_events'), orgId).where('created_at', '>=', from).where('created_at', '<', to);
  if (action) q = q.where('action', '=', action);
  return q.selectAll().orderBy('created_at').orderBy('id').execute();
}

/** DNC entries still listed. */
export function dncEntriesBetween(db: TenantDb, orgId: string, from: Date, to: Date): Promise<DncEntryRow[]> {
  return tenant(db.selectFrom('dnc_entries'), orgId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
