// SQL for compliance reports: rows created in [from, to), oldest first.
import type { Db } from '../database.ts';
import { tenant } from '../tenant.ts';

export function consentEventsBetween(db: Db, orgId: string, from: Date, to: Date, action?: string) {
  let q = tenant(db.selectFrom('consent_events'), orgId).where('created_at', '>=', from).where('created_at', '<', to);
  if (action) q = q.where('action', '=', action);
  return q.selectAll().orderBy('created_at').orderBy('id').execute();
}

export function dncEntriesBetween(db: Db, orgId: string, from: Date, to: Date) {
  return tenant(db.selectFrom('dnc_entries'), orgId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
