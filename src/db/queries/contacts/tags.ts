// SQL for tags and bulk (un)tagging. Bulk work is one set-based statement per call, over arrays of ids
// (one bind parameter each, whatever their length). The limits are the domain's (src/domain/contacts/tags.ts)
// and come in as arguments.
import { sql, type Selectable } from 'kysely';
import type { TagsTable } from '../../tables/contacts.ts';
import { tenant, type TenantDb } from '../../tenant.ts';

export type TagRow = Selectable<TagsTable>;

/** Serializes tag creation within an organization for the rest of the transaction (the organization's tag cap). */
export async function lockTagCreation(db: TenantDb, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`tags:${orgId}`}, 0))`.execute(db);
}

export async function countTags(db: TenantDb, orgId: string): Promise<number> {
  const row = await tenant(db.selectFrom('tags'), orgId)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts unless the name is taken, compared case-insensitively (then undefined). */
export function insertTag(db: TenantDb, orgId: string, name: string): Promise<TagRow | undefined> {
  return db
    .insertInto('tags')
    .values({ organization_id: orgId, name })
    .onConflict((oc) => oc.expression(sql`organization_id, lower(name)`).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Every tag of the organization by name, case-insensitively. */
export function listTags(db: TenantDb, orgId: string): Promise<TagRow[]> {
  return tenant(db.selectFrom('tags'), orgId)
    .selectAll()
    .orderBy(sql`lower(name)`)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/**
 * Of `ids`, those that are tags of the organization, locked against deletion until the transaction ends (so
 * links written in the same transaction cannot point at a tag deleted meanwhile).
 */
export async function existingTagIds(db: TenantDb, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tenant(db.selectFrom('tags'), orgId)
    .select('id')
    .where('id', '=', sql<string>`any(${ids}::uuid[])`)
    .forKeyShare()
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Tags of the organization by case-insensitive name, locked against deletion like existingTagIds. */
export async function tagsByLowerName(db: TenantDb, orgId: string, lowerNames: string[]): Promise<TagRow[]> {
  if (lowerNames.length === 0) return [];
  return tenant(db.selectFrom('tags'), orgId)
    .selectAll()
    .where(sql`lower(name)`, '=', sql<string>`any(${lowerNames}::text[])`)
    .forKeyShare()
    .execute();
}

/** Creates the named tags that do not exist yet (set-based); returns the created ones. */
export function insertTagsByName(db: TenantDb, orgId: string, names: string[]): Promise<TagRow[]> {
  if (names.length === 0) return Promise.resolve([]);
  return sql<TagRow>`
    insert into tags (organization_id, name)
    select ${orgId}, n from unnest(${names}::text[]) as n
    on conflict (organization_id, lower(name)) do nothing
    returning *`
    .execute(db)
    .then((r) => r.rows);
}

/**
 * Locks the tag until the transaction ends, so the count of its links cannot race with new ones (inserting a
 * link takes a key-share lock on the tag). undefined when the organization has no such tag.
 */
export async function lockTag(db: TenantDb, orgId: string, id: string): Promise<{ id: string } | undefined> {
  return tenant(db.selectFrom('tags'), orgId).select('id').where('id', '=', id).forUpdate().executeTakeFirst();
}

/** How many contacts carry the tag. */
export async function countTagLinks(db: TenantDb, orgId: string, id: string): Promise<number> {
  const { n } = await tenant(db.selectFrom('contact_tags'), orgId)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tag_id', '=', id)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Deletes the tag; ON DELETE CASCADE removes it from every contact. */
export async function deleteTag(db: TenantDb, orgId: string, id: string): Promise<void> {
  await tenant(db.deleteFrom('tags'), orgId).where('id', '=', id).execute();
}

export type BulkTagCounts = { tagged: number; alreadyTagged: number; notFound: number; failed: number };

/**
 * Adds every tag to every contact of `contactIds` (distinct) in one statement: contacts of the organization
 * are locked, a contact that would carry more than `maxPerContact` tags is left unchanged (failed), links are
 * inserted with ON CONFLICT DO NOTHING, and the touched contacts' updated_at moves.
 */
export async function tagContactsSet(
  db: TenantDb,
  orgId: string,
  contactIds: string[],
  tagIds: string[],
  maxPerContact: number,
): Promise<BulkTagCounts> {
  const { rows } = await sql<{ found: string; tagged: string; failed: string }>`
    with found as (
      select id from contacts
      where organization_id = ${orgId} and id = any(${contactIds}::uuid[])
      for update
    ),
    plan as (
      select f.id,
             count(ct.tag_id) as carried,
             count(ct.tag_id) filter (where ct.tag_id = any(${tagIds}::uuid[])) as have
      from found f
      left join contact_tags ct on ct.contact_id = f.id
      group by f.id
    ),
    eligible as (
      select id from plan
      where have < ${tagIds.length} and carried + ${tagIds.length} - have <= ${maxPerContact}
    ),
    ins as (
      insert into contact_tags (organization_id, contact_id, tag_id)
      select ${orgId}, e.id, t.tag_id from eligible e cross join unnest(${tagIds}::uuid[]) as t(tag_id)
      on conflict (contact_id, tag_id) do nothing
      returning contact_id
    ),
    touched as (
      update contacts set updated_at = now()
      where organization_id = ${orgId} and id in (select contact_id from ins)
      returning id
    )
    select (select count(*) from found) as found,
           (select count(*) from touched) as tagged,
           (select count(*) from plan where have < ${tagIds.length} and carried + ${tagIds.length} - have > ${maxPerContact}) as failed`.execute(
    db,
  );
  const r = rows[0]!;
  const found = Number(r.found);
  const tagged = Number(r.tagged);
  const failed = Number(r.failed);
  return { tagged, failed, alreadyTagged: found - tagged - failed, notFound: contactIds.length - found };
}

/** Removes the tags from the contacts in one statement; returns the number of distinct contacts that lost one. */
export async function untagContactsSet(db: TenantDb, orgId: string, contactIds: string[], tagIds: string[]): Promise<number> {
  const { rows } = await sql<{ untagged: string }>`
    with del as (
      delete from contact_tags
      where organization_id = ${orgId} and contact_id = any(${contactIds}::uuid[]) and tag_id = any(${tagIds}::uuid[])
      returning contact_id
    ),
    touched as (
      update contacts set updated_at = now()
      where organization_id = ${orgId} and id in (select contact_id from del)
      returning id
    )
    select count(*) as untagged from touched`.execute(db);
  return Number(rows[0]!.untagged);
}
