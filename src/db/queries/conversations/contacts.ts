// SQL on contacts that the message pipeline needs: the recipient of a send, the contact behind an inbound
// number (created when the number is new), and the RCS capability learnt at dispatch. Tenant-scoped.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../database.ts';
import type { ContactsTable } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ContactRow = Selectable<ContactsTable>;

export function getContact(db: TenantDb, orgId: string, id: string): Promise<ContactRow | undefined> {
  return tenant(db.selectFrom('contacts'), orgId).selectAll().where('id', '=', id).executeTakeFirst();
}

/** The contact with this phone, created (no attributes, no consent) when there is none. */
export async function ensureContactByPhone(
  db: TenantDb,
  orgId: string,
  phone: string,
  country: string | null,
): Promise<{ id: string; phone: string; created: boolean }> {
  const inserted = await db
    .insertInto('contacts')
    .values({ organization_id: orgId, phone, phone_country: country, attributes: '{}' })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .returning(['id', 'phone'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  const row = await tenant(db.selectFrom('contacts'), orgId).select(['id', 'phone']).where('phone', '=', phone).executeTakeFirstOrThrow();
  return { ...row, created: false };
}

// System handle: the dispatcher records the capabilities of contacts of many organizations.
/** Remembers the provider's RCS answers on the contacts, in one statement. */
export async function setRcsCapableMany(
  db: Db,
  rows: ReadonlyArray<{ organizationId: string; id: string; capable: boolean }>,
  checkedAt: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`update contacts c set rcs_capable = v.capable, rcs_checked_at = ${checkedAt}
    from unnest(${rows.map((r) => r.organizationId)}::uuid[], ${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.capable)}::bool[]) as v(organization_id, id, capable)
    where c.organization_id = v.organization_id and c.id = v.id`.execute(db);
}
