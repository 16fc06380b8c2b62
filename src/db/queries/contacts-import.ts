// SQL for one batch of a contact import: a few set-based statements over arrays (one bind parameter per
// column, whatever the batch size), never one statement per row.
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { AttributeValue } from '../tables/contacts.ts';

export type ExistingContact = {
  id: string;
  phone: string;
  name: string | null;
  time_zone: string | null;
  consent_type: string;
  attributes: Record<string, AttributeValue>;
  tag_ids: string[];
};

/** The organization's contacts with these phones, with their tags, locked until the batch commits. */
export async function lockContactsByPhone(db: Db, orgId: string, phones: string[]): Promise<ExistingContact[]> {
  if (phones.length === 0) return [];
  const { rows } = await sql<ExistingContact>`
    select c.id, c.phone, c.name, c.time_zone, c.consent_type, c.attributes,
           array(select ct.tag_id from contact_tags ct where ct.contact_id = c.id) as tag_ids
    from contacts c
    where c.organization_id = ${orgId} and c.phone = any(${phones}::text[])
    for update of c`.execute(db);
  return rows;
}

export type UpsertRow = {
  phone: string;
  country: string | null;
  name: string | null;
  timeZone: string | null;
  consentType: string;
  attributes: Record<string, AttributeValue>;
};

/**
 * Inserts new contacts and writes the merged values of existing ones in one statement. Only rows locked by
 * lockContactsByPhone (`lockedIds`) may be updated: a phone inserted by someone else since then is neither
 * inserted nor updated, and is missing from the result (the caller retries it as an existing contact).
 */
export async function upsertContacts(
  db: Db,
  orgId: string,
  rows: UpsertRow[],
  lockedIds: string[],
): Promise<Array<{ id: string; phone: string; inserted: boolean }>> {
  if (rows.length === 0) return [];
  const { rows: out } = await sql<{ id: string; phone: string; inserted: boolean }>`
    insert into contacts as c (organization_id, phone, phone_country, name, time_zone, consent_type, attributes)
    select ${orgId}, t.phone, t.country, t.name, t.tz, t.consent, t.attrs::jsonb
    from unnest(${rows.map((r) => r.phone)}::text[], ${rows.map((r) => r.country)}::text[], ${rows.map((r) => r.name)}::text[],
                ${rows.map((r) => r.timeZone)}::text[], ${rows.map((r) => r.consentType)}::text[],
                ${rows.map((r) => JSON.stringify(r.attributes))}::text[]) as t(phone, country, name, tz, consent, attrs)
    on conflict (organization_id, phone) do update
      set name = excluded.name, time_zone = excluded.time_zone, consent_type = excluded.consent_type,
          attributes = excluded.attributes, updated_at = now()
      where c.id = any(${lockedIds}::uuid[])
    returning c.id, c.phone, (c.xmax = 0) as inserted`.execute(db);
  return out;
}

/** Adds (contact, tag) links, pairwise; existing links are kept. */
export async function addTagLinks(db: Db, orgId: string, contactIds: string[], tagIds: string[]): Promise<void> {
  if (contactIds.length === 0) return;
  await sql`
    insert into contact_tags (organization_id, contact_id, tag_id)
    select ${orgId}, l.contact_id, l.tag_id from unnest(${contactIds}::uuid[], ${tagIds}::uuid[]) as l(contact_id, tag_id)
    on conflict (contact_id, tag_id) do nothing`.execute(db);
}

/** CONSENT_UPDATED audit entries with source IMPORT, one per changed contact. */
export async function recordImportConsentChanges(
  db: Db,
  orgId: string,
  changes: Array<{ contactId: string; phone: string; consentType: string }>,
  actor: string | null,
): Promise<void> {
  if (changes.length === 0) return;
  await sql`
    insert into consent_events (organization_id, contact_id, phone, action, source, consent_type, actor)
    select ${orgId}, e.contact_id, e.phone, 'CONSENT_UPDATED', 'IMPORT', e.consent_type, ${actor}
    from unnest(${changes.map((c) => c.contactId)}::uuid[], ${changes.map((c) => c.phone)}::text[],
                ${changes.map((c) => c.consentType)}::text[]) as e(contact_id, phone, consent_type)`.execute(db);
}
