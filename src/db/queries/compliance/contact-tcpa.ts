// SQL for a contact's TCPA columns (time zone, quiet hours, consent type).
import { sql, type Selectable } from 'kysely';
import type { ContactsTable } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ContactRow = Selectable<ContactsTable>;
export type TcpaColumns = Pick<ContactRow, 'time_zone' | 'quiet_hours_start' | 'quiet_hours_end' | 'consent_type'>;

/** The contact, locked until the surrounding transaction ends. */
export function getContactForUpdate(db: TenantDb, orgId: string, contactId: string): Promise<ContactRow | undefined> {
  return tenant(db.selectFrom('contacts'), orgId).selectAll().where('id', '=', contactId).forUpdate().executeTakeFirst();
}

export function updateContactTcpa(db: TenantDb, orgId: string, contactId: string, next: TcpaColumns): Promise<ContactRow | undefined> {
  return tenant(db.updateTable('contacts'), orgId)
    .set({ ...next, updated_at: sql`now()` })
    .where('id', '=', contactId)
    .returningAll()
    .executeTakeFirst();
}
