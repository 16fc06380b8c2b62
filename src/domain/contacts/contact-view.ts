// Contact rows as the API shows them: with their tags, opt-out state (per phone) and effective TCPA settings.
// A page of contacts costs two more queries (tags, opt-outs), never one per contact.
import type { components } from '../../../generated/api.d.ts';
import type { Db } from '../../db/database.ts';
import { optedOutAmong } from '../../db/queries/consent.ts';
import { tagIdsOf, type ContactRow } from '../../db/queries/contacts.ts';
import { resolveTcpa } from '../compliance/tcpa.ts';

export type Contact = components['schemas']['Contact'];

export async function toContacts(db: Db, orgId: string, rows: ContactRow[]): Promise<Contact[]> {
  const [tags, optedOut] = await Promise.all([
    tagIdsOf(db, orgId, rows.map((r) => r.id)),
    optedOutAmong(db, orgId, rows.map((r) => r.phone)),
  ]);
  return Promise.all(rows.map((r) => toContact(r, tags.get(r.id) ?? [], optedOut.has(r.phone))));
}

export async function toContactView(db: Db, orgId: string, row: ContactRow): Promise<Contact> {
  const [contact] = await toContacts(db, orgId, [row]);
  return contact!;
}

async function toContact(row: ContactRow, tags: string[], optedOut: boolean): Promise<Contact> {
  const tcpa = await resolveTcpa(row);
  return {
    id: row.id,
    name: row.name,
    phone: row.phone,
    tags,
    attributes: row.attributes,
    rcsCapable: row.rcs_capable,
    rcsCheckedAt: row.rcs_checked_at?.toISOString() ?? null,
    tcpa: {
      timeZone: tcpa.timeZone,
      timeZoneSource: tcpa.timeZoneSource,
      quietHoursStart: tcpa.quietHoursStart,
      quietHoursEnd: tcpa.quietHoursEnd,
      consentType: tcpa.consentType,
    },
    optedOut,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

