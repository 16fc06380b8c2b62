// Tags: unique names per organization (case-insensitive, trimmed), at most 1,000 per organization.
import { inTransaction, type Db } from '../../db/database.ts';
import { MAX_TAGS_PER_ORGANIZATION, countTags, insertTag, lockTagCreation, type TagRow } from '../../db/queries/tags.ts';
import { ApiError, unprocessable } from '../errors.ts';

export async function createTag(db: Db, orgId: string, name: string): Promise<TagRow> {
  const trimmed = name.trim();
  return inTransaction(db, async (tx) => {
    await lockTagCreation(tx, orgId); // the cap holds under concurrent creates
    if ((await countTags(tx, orgId)) >= MAX_TAGS_PER_ORGANIZATION) {
      throw unprocessable('UNPROCESSABLE', `An organization can have at most ${MAX_TAGS_PER_ORGANIZATION} tags.`);
    }
    const row = await insertTag(tx, orgId, trimmed);
    if (!row) {
      throw new ApiError(409, 'ALREADY_EXISTS', `A tag named "${trimmed}" already exists.`, {
        details: [{ field: 'body.name', code: 'unique', message: 'a tag with this name (compared case-insensitively) already exists' }],
      });
    }
    return row;
  });
}

export function toTag(row: TagRow) {
  return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() };
}
