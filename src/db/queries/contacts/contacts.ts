// SQL for contacts: CRUD, the indexed list, attribute keys, RCS lookups, and what a page of contacts needs
// besides its rows (tags), in one query. Tenant-scoped through tenant().
import { sql, type Selectable } from 'kysely';
import type { Page } from '../../paging.ts';
import type { ContactsTable } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type ContactRow = Selectable<ContactsTable>;

/** The expression the trigram index covers (migration 0002): search must use exactly this one. */
const SEARCH_TEXT = sql<string>`(coalesce(name, '') || ' ' || phone)`;

/** `%term%` for LIKE/ILIKE, with the term's own wildcards taken literally. */
export function likeContaining(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

export const CONTACT_PHONE_UNIQUE = 'contacts_org_phone_key';

export type ContactListFilters = {
  search?: string;
  tag?: string;
  rcsCap?: boolean;
  sortBy: 'name' | 'phone' | 'createdAt';
  sortOrder: 'asc' | 'desc';
};

function filtered(db: TenantDb, orgId: string, f: Omit<ContactListFilters, 'sortBy' | 'sortOrder'>) {
  let q = tenant(db.selectFrom('contacts'), orgId);
  if (f.search !== undefined) q = q.where(SEARCH_TEXT, 'ilike', likeContaining(f.search));
  if (f.rcsCap !== undefined) q = q.where('rcs_capable', '=', f.rcsCap);
  if (f.tag !== undefined) q = q.where('id', 'in', carriersOf(db, orgId, f.tag));
  return q;
}

function carriersOf(db: TenantDb, orgId: string, tagId: string) {
  return tenant(db.selectFrom('contact_tags'), orgId).select('contact_id').where('tag_id', '=', tagId);
}

/** One page of contacts; every sort matches an index (see migrations 0002/0003), ties broken by id. */
export function contactPageQuery(db: TenantDb, orgId: string, f: ContactListFilters, page: { limit: number; offset: number }) {
  if (f.sortBy === 'name' && f.sortOrder === 'desc') return byNameDescending(db, orgId, f, page);
  let q = filtered(db, orgId, f).selectAll();
  const dir = f.sortOrder;
  if (f.sortBy === 'createdAt') q = q.orderBy('created_at', dir).orderBy('id', dir);
  // Contacts without a name come last (nulls last: the forward scan of contacts_org_name_idx).
  else if (f.sortBy === 'name') q = q.orderBy(sql`lower(name)`, (ob) => ob.asc().nullsLast()).orderBy('id', 'asc');
  else q = q.orderBy('phone', dir); // unique within the organization
  return q.limit(page.limit).offset(page.offset);
}

/**
 * Name descending, contacts without a name still last, from the one ascending name index (migration 0060 dropped
 * the descending one, which cost every imported contact a B-tree insert): its backward scan gives the named
 * contacts in order but would put the unnamed ones first, so the page is read in two parts. The named contacts'
 * share is their backward scan at the page's offset, as one index gave it before. The unnamed ones
 * (`lower(name) is null`, by id descending, the same index) fill what is left of the page, and are not read at
 * all while the named ones fill it (so a search never reads them before its last named page); their offset is
 * the page's minus the named contacts before it, counted only when the page is not all named.
 */
function byNameDescending(db: TenantDb, orgId: string, f: ContactListFilters, page: { limit: number; offset: number }) {
  const named = () => filtered(db, orgId, f).where(sql<string>`lower(name)`, 'is not', null);
  const pageNamed = named()
    .selectAll()
    .orderBy(sql`lower(name)`, 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset);
  const namedShown = sql<number>`(select count(*) from page_named)`;
  const namedBefore = named()
    .select(sql<number>`1`.as('one'))
    .limit(page.offset);
  const unnamed = filtered(db, orgId, f)
    .selectAll()
    .where(sql<string>`lower(name)`, 'is', null)
    .orderBy(sql`lower(name)`, 'desc') // all null: it only steers the planner to the name index, read backward
    .orderBy('id', 'desc')
    .offset(
      sql<number>`case when ${namedShown} = ${page.limit} then 0
      else greatest(0, ${page.offset} - (select count(*) from ${namedBefore.as('before')})) end`,
    )
    .limit(sql<number>`${page.limit} - ${namedShown}`);
  return db
    .with('page_named', () => pageNamed)
    .selectFrom((qb) =>
      qb
        .selectFrom('page_named')
        .selectAll()
        .unionAll(qb.selectFrom(unnamed.as('unnamed')).selectAll())
        .as('c'),
    )
    .selectAll()
    .orderBy(sql`lower(name)`, (ob) => ob.desc().nullsLast())
    .orderBy('id', 'desc');
}

export function contactCountQuery(db: TenantDb, orgId: string, f: Omit<ContactListFilters, 'sortBy' | 'sortOrder'>) {
  // With the tag as the only filter, the tag's links are the answer: an index-only count, no join.
  if (f.tag !== undefined && f.search === undefined && f.rcsCap === undefined) {
    return carriersOf(db, orgId, f.tag)
      .clearSelect()
      .select((eb) => eb.fn.countAll<string>().as('n'));
  }
  return filtered(db, orgId, f).select((eb) => eb.fn.countAll<string>().as('n'));
}

/**
 * A page of contacts with the total. Not listPage(): its `count(*) over()` makes PostgreSQL read every matching
 * contact (whole rows) before the first one of the page, where the indexed page stops after `limit` rows and the
 * count is index-only (bench/contacts-queries.ts, 1,000,000 contacts). Two queries, each on its index.
 */
export async function listContacts(
  db: TenantDb,
  orgId: string,
  f: ContactListFilters,
  page: { limit: number; offset: number },
): Promise<Page<ContactRow>> {
  const [rows, count] = await Promise.all([
    contactPageQuery(db, orgId, f, page).execute(),
    contactCountQuery(db, orgId, f).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export function getContact(db: TenantDb, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<ContactRow | undefined> {
  const q = tenant(db.selectFrom('contacts'), orgId).selectAll().where('id', '=', id);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

export async function findContactIdByPhone(db: TenantDb, orgId: string, phone: string): Promise<string | undefined> {
  const row = await tenant(db.selectFrom('contacts'), orgId).select('id').where('phone', '=', phone).executeTakeFirst();
  return row?.id;
}

export type NewContact = {
  phone: string;
  phoneCountry: string | null;
  name: string | null;
  attributes: Record<string, unknown>;
  timeZone: string | null;
  consentType: string;
};

/** Inserts unless the phone is taken (then undefined). */
export function insertContact(db: TenantDb, orgId: string, c: NewContact): Promise<ContactRow | undefined> {
  return db
    .insertInto('contacts')
    .values({
      organization_id: orgId,
      phone: c.phone,
      phone_country: c.phoneCountry,
      name: c.name,
      attributes: JSON.stringify(c.attributes),
      time_zone: c.timeZone,
      consent_type: c.consentType,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'phone']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Writes the mutable fields; a changed phone also forgets the RCS capability. */
export function updateContact(
  db: TenantDb,
  orgId: string,
  id: string,
  c: Omit<NewContact, 'consentType'> & { phoneChanged: boolean },
): Promise<ContactRow | undefined> {
  return tenant(db.updateTable('contacts'), orgId)
    .set({
      phone: c.phone,
      phone_country: c.phoneCountry,
      name: c.name,
      attributes: JSON.stringify(c.attributes),
      time_zone: c.timeZone,
      updated_at: sql`now()`,
      ...(c.phoneChanged ? { rcs_capable: null, rcs_checked_at: null } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The deleted contact's id, or undefined when the organization has no such contact. */
export function deleteContact(db: TenantDb, orgId: string, id: string): Promise<{ id: string } | undefined> {
  return tenant(db.deleteFrom('contacts'), orgId).where('id', '=', id).returning('id').executeTakeFirst();
}

/** Makes the contact carry exactly `tagIds` (set-based: one delete, one insert). */
export async function replaceContactTags(db: TenantDb, orgId: string, contactId: string, tagIds: string[]): Promise<void> {
  let del = tenant(db.deleteFrom('contact_tags'), orgId).where('contact_id', '=', contactId);
  if (tagIds.length > 0) del = del.where('tag_id', 'not in', tagIds);
  await del.execute();
  await addContactTags(db, orgId, contactId, tagIds);
}

export async function addContactTags(db: TenantDb, orgId: string, contactId: string, tagIds: string[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db
    .insertInto('contact_tags')
    .values(tagIds.map((tagId) => ({ organization_id: orgId, contact_id: contactId, tag_id: tagId })))
    .onConflict((oc) => oc.columns(['contact_id', 'tag_id']).doNothing())
    .execute();
}

/** Tag ids of each contact of a page, in one query (in the order they were attached). */
export async function tagIdsOf(db: TenantDb, orgId: string, contactIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (contactIds.length === 0) return out;
  const rows = await tenant(db.selectFrom('contact_tags'), orgId)
    .select(['contact_id', sql<string[]>`array_agg(tag_id order by created_at, tag_id)`.as('tag_ids')])
    .where('contact_id', '=', sql<string>`any(${contactIds}::uuid[])`)
    .groupBy('contact_id')
    .execute();
  for (const r of rows) out.set(r.contact_id, r.tag_ids);
  return out;
}

/** Distinct attribute keys in code-point order, at most `cap` (+1 fetched to tell whether more exist). */
export async function attributeKeys(db: TenantDb, orgId: string, cap: number): Promise<{ keys: string[]; truncated: boolean }> {
  const { rows } = await sql<{ key: string }>`
    select distinct k.key collate "C" as key
    from contacts, jsonb_object_keys(attributes) as k(key)
    where organization_id = ${orgId}
    order by 1
    limit ${cap + 1}`.execute(db);
  return { keys: rows.slice(0, cap).map((r) => r.key), truncated: rows.length > cap };
}

export function setRcsCapability(
  db: TenantDb,
  orgId: string,
  id: string,
  capable: boolean,
  checkedAt: Date,
): Promise<ContactRow | undefined> {
  return tenant(db.updateTable('contacts'), orgId)
    .set({ rcs_capable: capable, rcs_checked_at: checkedAt, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function recordRcsLookup(
  db: TenantDb,
  orgId: string,
  lookup: {
    contactId: string;
    phone: string;
    provider: string;
    rcsCapable: boolean;
    price: string;
    currency: string;
    actor: string | null;
    at: Date;
  },
): Promise<void> {
  await db
    .insertInto('contact_rcs_lookups')
    .values({
      organization_id: orgId,
      contact_id: lookup.contactId,
      phone: lookup.phone,
      provider: lookup.provider,
      rcs_capable: lookup.rcsCapable,
      price: lookup.price,
      currency: lookup.currency,
      actor: lookup.actor,
      created_at: lookup.at,
    })
    .execute();
}
