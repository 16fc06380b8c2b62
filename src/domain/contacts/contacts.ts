// Contacts: list, create, read, replace, delete, attribute keys, consent history. Phones are stored in E.164
// (libphonenumber), one contact per phone per organization (409 ALREADY_EXISTS naming the existing contact),
// tags must be the organization's. A contact is answered as a ContactView: the row with its tags, opt-out state
// (per phone) and effective TCPA settings; a page of contacts costs two more queries (tags, opt-outs), never one
// per contact.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import { contactConsentHistory, optedOutAmong, recordConsentEvent, type ConsentEventRow } from '../../db/queries/compliance/consent.ts';
import * as q from '../../db/queries/contacts/contacts.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { isKnownTimeZone, resolveTcpa, type TcpaSettings } from '../compliance/tcpa.ts';
import { ApiError, found, invalidField } from '../errors.ts';
import { parsePhone, type ParsedPhone } from '../phone.ts';
import type { Tenant } from '../tenant.ts';
import { requireTags } from './tags.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type ContactRow = q.ContactRow;
export type ContactView = { row: ContactRow; tagIds: string[]; optedOut: boolean; tcpa: TcpaSettings };

/** GET /v1/contacts/attribute-keys answers at most this many keys. */
const MAX_ATTRIBUTE_KEYS = 500;

type CreateRequest = components['schemas']['ContactCreateRequest'];
type UpdateRequest = components['schemas']['ContactUpdateRequest'];
type ListQuery = Partial<q.ContactListFilters>;

/** The rows as the API shows them, in their order. */
export async function contactViews(db: TenantDb, orgId: string, rows: ContactRow[]): Promise<ContactView[]> {
  const [tags, optedOut] = await Promise.all([
    q.tagIdsOf(
      db,
      orgId,
      rows.map((r) => r.id),
    ),
    optedOutAmong(
      db,
      orgId,
      rows.map((r) => r.phone),
    ),
  ]);
  return Promise.all(
    rows.map(async (row) => ({ row, tagIds: tags.get(row.id) ?? [], optedOut: optedOut.has(row.phone), tcpa: await resolveTcpa(row) })),
  );
}

async function contactView(db: TenantDb, orgId: string, row: ContactRow): Promise<ContactView> {
  const [view] = await contactViews(db, orgId, [row]);
  return view!;
}

function requirePhone(input: string, field: string): ParsedPhone {
  const parsed = parsePhone(input);
  if (!parsed) throw invalidField(field, 'is not a valid phone number for its country', 'INVALID_PHONE');
  return parsed;
}

function requireTimeZone(zone: string | null | undefined, field: string): string | null {
  if (zone == null) return null;
  if (!isKnownTimeZone(zone)) throw invalidField(field, `unknown IANA time zone "${zone}"`);
  return zone;
}

function phoneTaken(existingId: string | undefined): ApiError {
  return new ApiError(409, 'ALREADY_EXISTS', `A contact with this phone already exists${existingId ? ` (${existingId})` : ''}.`, {
    details: [{ field: 'body.phone', code: 'unique', message: existingId ?? 'another contact has this phone' }],
  });
}

/** A page of the organization's contacts (default order: newest first), with the total. */
export async function listContacts(tenant: Tenant, query: ListQuery, page: PageRequest): Promise<Page<ContactView>> {
  const filters: q.ContactListFilters = {
    search: query.search,
    tag: query.tag,
    rcsCap: query.rcsCap,
    sortBy: query.sortBy ?? 'createdAt',
    sortOrder: query.sortOrder ?? 'desc',
  };
  const { rows, total } = await q.listContacts(tenant.db, tenant.organizationId, filters, page);
  return { rows: await contactViews(tenant.db, tenant.organizationId, rows), total };
}

export async function createContact(tenant: Tenant, body: CreateRequest): Promise<ContactView> {
  const { db, organizationId: orgId } = tenant;
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
        actor: tenant.apiKeyId ?? null,
        reason: null,
        expires_at: null,
      });
    }
    return created;
  });
  return contactView(db, orgId, row);
}

export async function getContact(tenant: Tenant, id: string): Promise<ContactView> {
  const row = found(await q.getContact(tenant.db, tenant.organizationId, id), 'Contact');
  return contactView(tenant.db, tenant.organizationId, row);
}

/** Full replacement of the mutable fields; a field left out is reset. */
export async function replaceContact(tenant: Tenant, id: string, body: UpdateRequest): Promise<ContactView> {
  const { db, organizationId: orgId } = tenant;
  const phone = requirePhone(body.phone, 'body.phone');
  const timeZone = requireTimeZone(body.timeZone, 'body.timeZone');
  try {
    const row = await inTransaction(db, async (tx) => {
      const current = found(await q.getContact(tx, orgId, id, { forUpdate: true }), 'Contact');
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
      return found(updated, 'Contact'); // the row is locked: always found
    });
    return await contactView(db, orgId, row);
  } catch (error) {
    // Another request took the phone between our check and the update.
    if (isUniqueViolation(error, q.CONTACT_PHONE_UNIQUE)) throw phoneTaken(await q.findContactIdByPhone(db, orgId, phone.e164));
    throw error;
  }
}

export async function deleteContact(tenant: Tenant, id: string): Promise<void> {
  found(await q.deleteContact(tenant.db, tenant.organizationId, id), 'Contact');
}

/** The distinct attribute keys of the organization's contacts, in code-point order, at most MAX_ATTRIBUTE_KEYS. */
export function listAttributeKeys(tenant: Tenant): Promise<{ keys: string[]; truncated: boolean }> {
  return q.attributeKeys(tenant.db, tenant.organizationId, MAX_ATTRIBUTE_KEYS);
}

/**
 * A page of the contact's consent history, newest first: its own entries plus those written for its phone before
 * it existed or without a contact (e.g. the opt-out of a deleted contact with the same number).
 */
export async function listConsent(tenant: Tenant, id: string, page: PageRequest): Promise<Page<ConsentEventRow> & { contactId: string }> {
  const contact = found(await q.getContact(tenant.db, tenant.organizationId, id), 'Contact');
  const { rows, total } = await contactConsentHistory(tenant.db, tenant.organizationId, contact, page);
  return { contactId: contact.id, rows, total };
}
