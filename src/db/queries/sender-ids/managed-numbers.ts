// The one cross-organization read of a number import: whether this service already manages a number, in any
// organization. A number is leased to one account at a time (sender_numbers_live_number_key is unique across
// organizations), so an import is answered 409 from our own records before the provider is asked, whoever holds
// it (asking first answered 422 "not in your provider account" for a number we lease to someone else).
// Deliberately unscoped, so it runs on the unguarded handle (src/db/tenant.ts: the system handle is for work that
// legitimately crosses organizations; the tenant guard would rightly refuse this on a TenantDb). It answers a
// boolean only: no row, id or organization of another tenant leaves this module.
import type { Db } from '../../database.ts';

// System handle: a number is unique across organizations; the caller's tenant handle is stripped of its guard here.
export async function numberManagedAnywhere(db: Db, number: string): Promise<boolean> {
  const system: Db = db.withoutPlugins();
  const row = await system
    .selectFrom('sender_numbers')
    .select('id')
    .where('number', '=', number)
    .where('status', '<>', 'RELEASED')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
