// Tags: unique names per organization (case-insensitive, trimmed), at most MAX_TAGS_PER_ORGANIZATION per
// organization; a contact carries at most MAX_TAGS_PER_CONTACT. Deleting a tag removes it from every contact.
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/contacts/tags.ts';
import { ApiError, found, unknownReference, unprocessable } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type TagRow = q.TagRow;

/** Most tags a contact may carry (ContactTagIds maxItems). */
export const MAX_TAGS_PER_CONTACT = 50;
/** Most tags an organization may have. */
export const MAX_TAGS_PER_ORGANIZATION = 1000;

/** The section's one "limit reached" answer (documented on POST /v1/tags: 422 UNPROCESSABLE). */
const tagLimitReached = () => unprocessable('UNPROCESSABLE', `An organization can have at most ${MAX_TAGS_PER_ORGANIZATION} tags.`);

/**
 * The distinct ids, after checking each is a tag of the organization: an unknown one (another organization's
 * included) answers 404 NOT_FOUND naming every such item, as `field.i` (`body.tags.3`) unless `fieldOf` says
 * otherwise (`unknownReference`). The tags stay locked against deletion until the transaction ends.
 */
export async function requireTags(
  db: TenantDb,
  orgId: string,
  ids: string[],
  field: string,
  fieldOf = (i: number) => `${field}.${i}`,
): Promise<string[]> {
  const distinct = [...new Set(ids.map((id) => id.toLowerCase()))];
  const existing = await q.existingTagIds(db, orgId, distinct);
  const missing = ids.flatMap((id, i) => (existing.has(id.toLowerCase()) ? [] : [fieldOf(i)]));
  if (missing.length) throw unknownReference([...new Set(missing)], 'tag');
  return distinct;
}

/** Every tag of the organization, by name (case-insensitive). Not paginated: there are at most 1,000. */
export function listTags(tenant: Tenant): Promise<TagRow[]> {
  return q.listTags(tenant.db, tenant.organizationId);
}

/** 409 ALREADY_EXISTS for a name taken (case-insensitively), 422 beyond the organization's cap. */
export async function createTag(tenant: Tenant, name: string): Promise<TagRow> {
  const orgId = tenant.organizationId;
  const trimmed = name.trim();
  return inTransaction(tenant.db, async (tx) => {
    await q.lockTagCreation(tx, orgId); // the cap holds under concurrent creates
    if ((await q.countTags(tx, orgId)) >= MAX_TAGS_PER_ORGANIZATION) throw tagLimitReached();
    const row = await q.insertTag(tx, orgId, trimmed);
    if (!row) {
      throw new ApiError(409, 'ALREADY_EXISTS', `A tag named "${trimmed}" already exists.`, {
        details: [{ field: 'body.name', code: 'unique', message: 'a tag with this name (compared case-insensitively) already exists' }],
      });
    }
    return row;
  });
}

/**
 * Deletes the tag and, by cascade, its links; answers how many contacts carried it. The tag is locked first so
 * the count cannot race with new links.
 */
export async function deleteTag(tenant: Tenant, id: string): Promise<{ contactsUntagged: number }> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    found(await q.lockTag(tx, orgId, id), 'Tag');
    const contactsUntagged = await q.countTagLinks(tx, orgId, id);
    await q.deleteTag(tx, orgId, id);
    return { contactsUntagged };
  });
}
