// Contacts: create, replace, list. Phones are stored in E.164 (libphonenumber), one contact per phone per
// organization (409 ALREADY_EXISTS naming the existing contact), tags must be the organization's.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import { recordConsentEvent } from '../../db/queries/consent.ts';
import * as q from '../../db/queries/contacts.ts';
import { existingTagIds } from '../../db/queries/tags.ts';
import { ApiError, invalidField } from '../errors.ts';
import type { PageRequest } from '../../db/paging.ts';
import { parsePhone, type ParsedPhone } from '../phone.ts';
import { isKnownTimeZone } from '../compliance/tcpa.ts';
import { toContacts, toContactView, type Contact } from './contact-view.ts';

type CreateRequest = components['schemas']['ContactCreateRequest'];
type UpdateRequest = components['schemas']['ContactUpdateRequest'];

export function requirePhone(input: string, field: string): ParsedPhone {
  const parsed = parsePhone(input);
  if (!parsed) throw invalidField(field, 'is not a valid phone number for its country', 'INVALID_PHONE');
  return parsed;
}

function requireTimeZone(zone: string | null | undefined, field: string): string | null {
  if (zone == null) return null;
  if (!isKnownTimeZone(zone)) throw invalidField(field, `unknown IANA time zone "${zone}"`);
  return zone;
}

/**
 * The distinct ids, after checking each is a tag of the organization (404 naming every unknown item, as
 * `field[i]` unless `fieldOf` says otherwise). The tags stay locked against deletion until the transaction ends.
 */
export async function requireTags(db: Db, orgId: string, ids: string[], field: string, fieldOf = (i: number) => `${field}[${i}]`): Promise<string[]> {
  const distinct = [...new Set(ids.map((id) => id.toLowerCase()))];
  const found = await existingTagIds(db, orgId, distinct);
  const missing = ids.flatMap((id, i) => (found.has(id.toLowerCase()) ? [] : [{ field: fieldOf(i), message: `no tag ${id} in this organization` }]));
  if (missing.length) throw new ApiError(404, 'NOT_FOUND', 'Tag not found.', { details: missing });
  return distinct;
}

function phoneTaken(existingId: string | undefined): ApiError {
  return new ApiError(409, 'ALREADY_EXISTS', `A contact with this phone already exists${existingId ? ` (${existingId})` : ''}.`, {
    details: [{ field: 'body.phone', code: 'unique', message: existingId ?? 'another contact has this phone' }],
  });
}

export async function createContact(db: Db, orgId: string, actor: string, body: CreateRequest): Promise<Contact> {
  const phone = requirePhone(body.phone, 'body.phone');
  const timeZone = requireTimeZone(body.timeZone, 'body.timeZone');
  const consentType = body.consentType ?? 'NONE';
  const row = await inTransaction(db, async (tx) => {
    const tagIds = await requireTags(tx, orgId, body.tags ?? [], 'body.tags');
    const created = await q.insertContact(tx, orgId, {
      phone: phone.e164,
      phoneCountry: phone.country,
      name: body.name ?? null,
      attributes: body.attributes ?? {},
      timeZone,
      consentType,
    });
    if (!created) throw phoneTaken(await q.findContactIdByPhone(tx, orgId, phone.e164));
    await q.addContactTags(tx, orgId, created.id, tagIds);
    if (consentType !== 'NONE') {
      await recordConsentEvent(tx, {
        organization_id: orgId,
        contact_id: created.id,
        phone: created.phone,
        action: 'CONSENT_UPDATED',
        source: 'API',
        consent_type: consentType,
        keyword: null,
        channel: null,
        message_id: null,
        actor,
        reason: null,
        expires_at: null,
      });
    }
    return created;
  });
  return toContactView(db, orgId, row);
}

/** Full replacement of the mutable fields; a field left out is reset. undefined when there is no such contact. */
export async function replaceContact(db: Db, orgId: string, id: string, body: UpdateRequest): Promise<Contact | undefined> {
  const phone = requirePhone(body.phone, 'body.phone');
  const timeZone = requireTimeZone(body.timeZone, 'body.timeZone');
  try {
    const row = await inTransaction(db, async (tx) => {
      const current = await q.getContactForUpdate(tx, orgId, id);
      if (!current) return undefined;
      const tagIds = await requireTags(tx, orgId, body.tags ?? [], 'body.tags');
      const phoneChanged = current.phone !== phone.e164;
      if (phoneChanged) {
        const other = await q.findContactIdByPhone(tx, orgId, phone.e164);
        if (other) throw phoneTaken(other);
      }
      const updated = await q.updateContact(tx, orgId, id, {
        phone: phone.e164,
        phoneCountry: phone.country,
        name: body.name ?? null,
        attributes: body.attributes ?? {},
        timeZone,
        phoneChanged,
      });
      await q.replaceContactTags(tx, orgId, id, tagIds);
      return updated;
    });
    return row && toContactView(db, orgId, row);
  } catch (error) {
    // Another request took the phone between our check and the update.
    if (q.isUniqueViolation(error, q.CONTACT_PHONE_UNIQUE)) throw phoneTaken(await q.findContactIdByPhone(db, orgId, phone.e164));
    throw error;
  }
}

export async function listContacts(db: Db, orgId: string, filters: q.ContactListFilters, page: PageRequest): Promise<{ data: Contact[]; total: number }> {
  const [rows, count] = await Promise.all([
    q.contactPageQuery(db, orgId, filters, page).execute(),
    q.contactCountQuery(db, orgId, filters).executeTakeFirstOrThrow(),
  ]);
  return { data: await toContacts(db, orgId, rows), total: Number(count.n) };
}
