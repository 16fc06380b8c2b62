// The one cross-organization lookup of the public enrollment endpoint (system handle): which organization a
// campaign id belongs to. Everything after it runs through tenantFor().
import type { Db } from '../../database.ts';

// System handle: finds the organization a public campaign id belongs to, before any is known.
export async function campaignOrganization(db: Db, campaignId: string): Promise<string | undefined> {
  const row = await db.selectFrom('acquisition_campaigns').select('organization_id').where('id', '=', campaignId).executeTakeFirst();
  return row?.organization_id;
}
