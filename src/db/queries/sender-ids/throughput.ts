// SQL for what a sender's throughput class depends on (src/domain/sender-ids/sending-rule.ts `throughputOf`):
// whether the campaign of a program it is attached to (the campaign it sends under; detached, it has none) is
// REGISTERED, and the best vetting score of a REGISTERED brand of such a program. Tenant-scoped by organization_id throughout.
import { sql } from 'kysely';
import type { TenantDb } from '../../tenant.ts';

export async function registrationFacts(
  db: TenantDb,
  organizationId: string,
  senderId: string,
): Promise<{ campaignRegistered: boolean; vettingScore: number | null }> {
  const row = await sql<{ campaign_registered: boolean; vetting_score: number | null }>`
    with programs_of as (
      select p.brand_registration_id, p.campaign_registration_id from programs p
      join program_senders ps on ps.organization_id = p.organization_id and ps.program_id = p.id
      where ps.organization_id = ${organizationId}::uuid and ps.sender_id = ${senderId}::uuid and ps.status = 'ACTIVE'
    )
    select
      exists (select 1 from campaign_registrations c
              where c.organization_id = ${organizationId}::uuid and c.status = 'REGISTERED'
                and c.id in (select campaign_registration_id from programs_of)) as campaign_registered,
      (select max(b.vetting_score) from brand_registrations b
       where b.organization_id = ${organizationId}::uuid and b.status = 'REGISTERED'
         and b.id in (select brand_registration_id from programs_of))::int as vetting_score
  `.execute(db);
  const r = row.rows[0]!;
  return { campaignRegistered: r.campaign_registered, vettingScore: r.vetting_score };
}

/** Stores the sender's throughput (dispatch's limiter reads the column). */
export async function setThroughput(db: TenantDb, organizationId: string, senderId: string, perSecond: number): Promise<void> {
  await db
    .updateTable('sender_ids')
    .set({ throughput_per_second: perSecond })
    .where('organization_id', '=', organizationId)
    .where('id', '=', senderId)
    .where('throughput_per_second', '<>', perSecond)
    .execute();
}
